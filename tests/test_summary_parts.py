"""A question over per-module summaries (``summaries.PartsIndex``) answers what picking each
module's part one by one answers, without the empty parts -- for the kinds indexed by select
(who calls a name, which savers land in a file) and the whole-value kind alike."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from resume_audit.facts.summaries import INVERT, SELECT, PartsIndex, select_part


def _values(kind: str, rng: random.Random) -> list[tuple[Path, object]]:
    names = ["charge", "change_answer", "run", "a"]
    places = ["/p/a.py", "/p/b.py", "/p/c.py"]
    out = []
    for i in range(rng.randrange(0, 12)):
        if kind == "called-names":
            value: object = rng.sample(names, rng.randrange(0, len(names))) * rng.randrange(1, 3)  # repeats too
        elif kind == "RA601-found":
            value = [[rng.choice(places), rng.randrange(0, 4)] for _ in range(rng.randrange(0, 5))]
        else:
            value = [[f"m{i}.f{j}", "node"] for j in range(rng.randrange(0, 3))]
        out.append((Path(f"/p/m{rng.randrange(0, 10**6)}_{i}.py"), value))
    return out


@pytest.mark.parametrize("kind", sorted(SELECT))
@pytest.mark.parametrize("seed", range(40))
def test_parts_are_the_non_empty_picks_in_path_order(kind: str, seed: int) -> None:
    rng = random.Random(seed)
    values = _values(kind, rng)
    index = PartsIndex(kind, values)
    selects = ["charge", "change_answer", "missing", "/p/a.py", "/p/b.py", "/p/zz.py", ""]
    for select in selects:
        picked = [(p, select_part(kind, v, select)) for p, v in sorted(values, key=lambda item: item[0])]
        assert index.parts(select) == [(p, part) for p, part in picked if part], (kind, select)


def test_the_select_indexed_kinds_are_the_ones_asked_per_file() -> None:
    assert set(INVERT) == {"called-names", "RA601-found"} and set(INVERT) <= set(SELECT)
