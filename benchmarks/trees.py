"""The shapes of tree the scan benchmarks measure (issue 35): one speed figure on one tree hid the
shapes a new user meets first.

* :func:`realistic` -- the generated agent monorepo (100 agent files with their helpers) among
  standard-library modules copied in as filler (issue 16's 5k tree);
* :func:`stdlib_agents` -- 100 of the project's own fixture agent modules (real-shaped LangGraph,
  CrewAI, LlamaIndex and pydantic-graph code, their names ordinary words) among standard-library
  filler: a question about one of their functions must not parse the library;
* :func:`agent_dense` -- a monorepo of small agent services, one fixture module per folder, so
  file and function names repeat across folders and every file is analysed;
* :func:`corpus` -- the real-world corpus repositories (``realworld/corpus``) side by side in one tree.

Every builder writes into ``dest`` (created) and returns it; nothing is generated at random, so two
runs build the same bytes.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE / "realworld"))
from synthetic import generate  # noqa: E402

#: the shapes by name, as ``bench_scan.py --shapes`` spells them
SHAPES = ("realistic", "stdlib-agents", "agent-dense", "corpus")


def stdlib_files() -> tuple[Path, list[Path]]:
    """The local Python's standard library: its folder and its ``.py`` files, sorted."""
    stdlib = Path(sysconfig.get_paths()["stdlib"])
    return stdlib, sorted(p for p in stdlib.rglob("*.py") if "site-packages" not in p.parts and p.is_file())


def fill_with_stdlib(dest: Path, count: int) -> None:
    """``count`` standard-library modules copied under ``dest/libNN/`` (cycled when more are asked
    for than the library holds)."""
    stdlib, library = stdlib_files()
    for n in range(count):
        source = library[n % len(library)]
        target = dest / f"lib{n // len(library):02d}" / source.relative_to(stdlib)
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(source, target)


def realistic(dest: Path, files: int, agents: int = 100) -> Path:
    """``agents`` agent files with their helpers (the synthetic generator, 1 in 5 files agent code)
    and, for the rest of ``files``, the standard library's own modules copied in: ordinary
    library-sized code, not small filler."""
    app_files = min(files, agents * 5)
    generate(dest / "app", files=app_files, agent_share=agents / app_files)
    fill_with_stdlib(dest, files - app_files)
    return dest


def fixture_agents(min_lines: int = 0, max_lines: int = 10**9) -> list[Path]:
    """The static fixtures' top-level agent modules (one hazard or its safe twin each), sorted; those
    with a line count in the bounds."""
    out = []
    for path in sorted((REPO / "fixtures" / "static").glob("*/*.py")):
        lines = path.read_text(encoding="utf-8").count("\n")
        if min_lines <= lines <= max_lines:
            out.append(path)
    return out


def stdlib_agents(dest: Path, files: int, agents: int = 100) -> Path:
    """``agents`` fixture agent modules (cycled through the fixtures, each copy in its own folder
    ``agents/<rule>/<copy>/``) and standard-library filler for the rest of ``files``."""
    fixtures = fixture_agents()
    for n in range(agents):
        source = fixtures[n % len(fixtures)]
        target = dest / "agents" / source.parent.name / f"c{n // len(fixtures)}" / source.name
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(source, target)
    fill_with_stdlib(dest, files - agents)
    return dest


def agent_dense(dest: Path, files: int) -> Path:
    """A monorepo of ``files`` small agent services: ``services/svc_NNNN/<fixture name>.py``, one
    fixture agent module of 20 to 80 lines per folder, cycled, so names repeat across folders."""
    fixtures = fixture_agents(20, 80)
    for n in range(files):
        source = fixtures[n % len(fixtures)]
        target = dest / "services" / f"svc_{n:04d}" / source.name
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(source, target)
    return dest


def corpus(dest: Path, mirrors: Path, work: Path) -> Path:
    """Every real-world corpus repository whose mirror is present, checked out at its pinned commit
    (``realworld/score.py``'s checkout) and copied side by side: ``dest/<owner>+<name>/``."""
    import score

    dest.mkdir(parents=True, exist_ok=True)
    for entry in score.load_corpus(HERE / "realworld" / "corpus"):
        try:
            tree = score.checkout(mirrors, entry, work)
        except (OSError, subprocess.CalledProcessError):
            continue
        shutil.copytree(tree, dest / entry.repo.replace("/", "+"), dirs_exist_ok=True)
    return dest


def build(shape: str, dest: Path, files: int, mirrors: Path, work: Path) -> Path:
    """The tree of ``shape`` (one of :data:`SHAPES`) in ``dest``; ``files`` sizes all but the corpus."""
    if shape == "realistic":
        return realistic(dest, files)
    if shape == "stdlib-agents":
        return stdlib_agents(dest, files)
    if shape == "agent-dense":
        return agent_dense(dest, files)
    if shape == "corpus":
        return corpus(dest, mirrors, work)
    raise ValueError(f"unknown tree shape {shape!r}; one of {', '.join(SHAPES)}")
