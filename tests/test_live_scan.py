"""The warm scan behind ``resume-audit server`` (:class:`resume_audit.engine.live.LiveScan`): after
any sequence of edits, its result equals a cold scan of the same texts.

Edits are drawn at random (seeded) from what a user does to an agent project: remove an effect
from a node, remove it from a shared helper in another module (every agent of the package
loses its findings), swap the checkpointer, break the syntax, put a file back. After each, the
warm result is compared with ``scan()`` of the tree written to disk, no cache.
"""

from __future__ import annotations

import random
import sys
from pathlib import Path

import pytest

from resume_audit.api import ScanRequest, config_source, scan_options
from resume_audit.config.tree import root_config
from resume_audit.discovery.repo_root import RepoPaths
from resume_audit.engine.live import LiveScan
from resume_audit.engine.scan import scan
from resume_audit.findings import ScanResult

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "benchmarks"))
from synthetic import generate  # noqa: E402


def _start(root: Path) -> LiveScan:
    request = ScanRequest(paths=[root], root=root, jobs=1)
    source = config_source(request)
    config = root_config(source, [root])
    return LiveScan.start(
        [root], source, root, scan_options(request, config, RepoPaths.for_scan(root, config.base_dir))
    )


def _shape(result: ScanResult) -> tuple[list[tuple[object, ...]], list[tuple[object, ...]]]:
    findings = sorted(
        (f.rule_id, f.span, f.message, f.fingerprint, tuple(r.span for r in f.related)) for f in result.findings
    )
    notes = sorted((n.kind.value, n.path or "", n.line or 0, n.message) for n in result.notifications)
    return findings, notes


def _cold(root: Path) -> ScanResult:
    request = ScanRequest(paths=[root], root=root)
    source = config_source(request)
    config = root_config(source, [root])
    return scan([root], source, root, scan_options(request, config, RepoPaths.for_scan(root, config.base_dir)), jobs=1)


MUTATIONS = {
    "drop the node's effect": lambda text: text.replace(
        '    notify("https://hooks.example.com/', '    print("https://hooks.example.com/'
    ),
    "drop the helper's effect": lambda text: text.replace(
        "    requests.post(url, json=payload, timeout=5)", "    print(url, payload)"
    ),
    "no checkpointer": lambda text: text.replace("checkpointer=InMemorySaver()", "checkpointer=None"),
    "broken syntax": lambda text: text + "\ndef broken(:\n",
    "no framework import": lambda text: text.replace(
        "from langgraph.types import Command, interrupt", "from mylib import Command, interrupt"
    ),
}


@pytest.mark.parametrize("seed", [1, 2])
def test_any_sequence_of_edits_ends_where_a_cold_scan_of_the_same_texts_does(tmp_path: Path, seed: int) -> None:
    root = tmp_path / "tree"
    agents = generate(root, files=80, agent_share=0.1, seed=seed)
    helpers = sorted(root.glob("*/notify.py"))
    originals = {p: p.read_bytes() for p in [*agents, *helpers]}
    live = _start(root)
    assert _shape(live.result()) == _shape(_cold(root))
    rng = random.Random(seed)
    for step in range(12):
        path = rng.choice(sorted(originals))
        name = rng.choice(sorted(MUTATIONS) + ["put back"])
        current = path.read_text()
        new = originals[path].decode() if name == "put back" else MUTATIONS[name](current)
        path.write_text(new)
        update = live.update({path.resolve(): new.encode()})
        assert not update.restart
        assert _shape(live.result()) == _shape(_cold(root)), f"step {step}: {name} on {path.name}"


def test_an_edit_reanalyses_the_dependent_modules_only(tmp_path: Path) -> None:
    root = tmp_path / "tree"
    agents = generate(root, files=200, agent_share=0.05, seed=3)
    live = _start(root)
    helper = sorted(root.glob("*/notify.py"))[0]
    package = helper.parent
    update = live.update(
        {helper.resolve(): helper.read_bytes().replace(b"    requests.post(url, json=payload, timeout=5)", b"    pass")}
    )
    # every agent of the helper's package, and no other file
    assert sorted(update.analysed) == sorted(a.resolve() for a in agents if a.parent == package)
    assert update.analysed
