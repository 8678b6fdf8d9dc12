"""One virtual environment per corpus repository, built from the repository's own requirements.

``audit`` runs the user's program, so it runs in the environment the user runs it in: the repository's
dependencies, at the versions it pins, plus resume-audit. This module builds that environment the way a
user following the repository's README would, and caches it (keyed by repository and commit):

1. ``requirements*.txt`` at the repository's root (else in the folders it is scanned from), each installed;
2. else the project itself (``pyproject.toml`` / ``setup.py``), installed editable, and if that fails to
   build, its declared ``[project] dependencies`` / Poetry dependencies;
3. resume-audit from this checkout, editable, without framework extras (they would upgrade the
   repository's own LangGraph); then the sweep's SQLite saver where the repository has LangGraph but not
   the saver, constrained to the LangGraph it has.

``uv`` (``pip install uv``) does the installing when it is on ``PATH`` or beside this interpreter: it
is many times faster than pip on requirement sets this size. Each step is capped in time; a failed step is
recorded in the environment's ``install.json`` and the audit still runs (what did install is what a user
would have).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - 3.10
    import tomli as tomllib

CHECKOUT = Path(__file__).resolve().parents[2]
#: the framework distributions a saver install must not move
PINNED = ("langgraph", "langgraph-checkpoint", "langchain-core", "langgraph-prebuilt")


@dataclass
class InstallLog:
    """What building one environment did: each step, whether it worked, and the tail of its output."""

    steps: list[dict[str, object]] = field(default_factory=list)
    seconds: float = 0.0

    @property
    def requirements_ok(self) -> bool:
        return bool(self.steps) and all(s["ok"] for s in self.steps if s["what"] != "resume-audit")


def _uv() -> str | None:
    beside = Path(sys.executable).parent / "uv"
    return str(beside) if beside.is_file() else shutil.which("uv")


def _run(cmd: list[str], cwd: Path, timeout: float, env: dict[str, str] | None = None) -> tuple[bool, str]:
    try:
        proc = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, timeout=timeout, env=env)
    except subprocess.TimeoutExpired:
        return False, f"timed out after {timeout:.0f} s"
    return proc.returncode == 0, (proc.stdout + proc.stderr)[-1500:]


class EnvBuilder:
    """Builds (or reuses) the environment of one repository under ``envs``."""

    def __init__(self, envs: Path, python: str = sys.executable, step_timeout: float = 900.0) -> None:
        self.envs = envs
        self.python = python
        self.step_timeout = step_timeout
        self.uv = _uv()

    def python_of(self, env: Path) -> Path:
        return env / "bin" / "python"

    def ensure(self, key: str, repo: Path, scan_paths: list[str]) -> tuple[Path, InstallLog]:
        """The environment for ``repo`` (built once per ``key``) and the log of its build."""
        env = self.envs / key
        marker = env / "install.json"
        if marker.is_file():
            data = json.loads(marker.read_text())
            return env, InstallLog(data["steps"], data["seconds"])
        shutil.rmtree(env, ignore_errors=True)
        started = time.monotonic()
        log = InstallLog()
        self._venv(env, log)
        for what, args in self._requirements(repo, scan_paths):
            self._install(env, repo, what, args, log)
        self._install(env, repo, "resume-audit", ["-e", str(CHECKOUT)], log)
        self._saver(env, repo, log)
        log.seconds = round(time.monotonic() - started, 1)
        marker.write_text(json.dumps(asdict(log), indent=1))
        return env, log

    def _venv(self, env: Path, log: InstallLog) -> None:
        cmd = [self.uv, "venv", "-q", "-p", self.python, str(env)] if self.uv else [self.python, "-m", "venv", str(env)]
        ok, out = _run(cmd, env.parent if env.parent.exists() else Path.cwd(), 300)
        log.steps.append({"what": "venv", "ok": ok, "out": out})

    def _requirements(self, repo: Path, scan_paths: list[str]) -> list[tuple[str, list[str]]]:
        """What the repository says to install, in the order a README would: requirement files first."""
        folders = [repo] + [repo / p for p in scan_paths if p not in (".", "") and (repo / p).is_dir()]
        folders += sorted(p for p in repo.iterdir() if p.is_dir() and not p.name.startswith(".") and p not in folders)
        for folder in folders:
            files = sorted(p for p in folder.glob("requirements*.txt") if "dev" not in p.name and "test" not in p.name)
            files = files or sorted(folder.glob("requirements*.txt"))
            if files:
                return [(f"-r {f.relative_to(repo)}", ["-r", str(f)]) for f in files]
        for folder in folders:
            if (folder / "pyproject.toml").is_file() or (folder / "setup.py").is_file():
                return [(f"-e {folder.relative_to(repo) or '.'}", ["-e", str(folder)])]
        return []

    def _install(self, env: Path, repo: Path, what: str, args: list[str], log: InstallLog) -> bool:
        ok, out = self._pip(env, repo, args)
        if not ok and args[0] == "-e":  # the project does not build: its declared dependencies, as a user would
            deps = _declared_dependencies(Path(args[1]))
            if deps:
                ok, out = self._pip(env, repo, deps)
                what += " (declared dependencies; the project itself did not build)"
        log.steps.append({"what": what, "ok": ok, "out": out[-600:]})
        return ok

    def _pip(self, env: Path, repo: Path, args: list[str]) -> tuple[bool, str]:
        if self.uv:
            environ = {**os.environ, "VIRTUAL_ENV": str(env)}
            return _run([self.uv, "pip", "install", "-q", *args], repo, self.step_timeout, environ)
        return _run([str(self.python_of(env)), "-m", "pip", "install", "-q", *args], repo, self.step_timeout)

    def _saver(self, env: Path, repo: Path, log: InstallLog) -> None:
        """The sweep's SQLite saver beside a LangGraph the repository pinned, without moving that LangGraph."""
        installed = self._installed(env)
        if "langgraph" not in installed or "langgraph-checkpoint-sqlite" in installed:
            return
        constraints = env / "constraints.txt"
        constraints.write_text("".join(f"{name}=={installed[name]}\n" for name in PINNED if name in installed))
        ok, out = self._pip(env, repo, ["langgraph-checkpoint-sqlite", "-c", str(constraints)])
        log.steps.append({"what": "resume-audit (langgraph-checkpoint-sqlite)", "ok": ok, "out": out[-600:]})

    def _installed(self, env: Path) -> dict[str, str]:
        wanted = (*PINNED, "langgraph-checkpoint-sqlite")
        ok, out = _run(
            [
                str(self.python_of(env)),
                "-c",
                "import importlib.metadata as m, json;"
                f"print(json.dumps({{d.metadata['Name'].lower(): d.version for d in m.distributions()"
                f" if (d.metadata['Name'] or '').lower() in {wanted!r}}}))",
            ],
            env,
            120,
        )
        try:
            return dict(json.loads(out.strip().splitlines()[-1])) if ok else {}
        except (ValueError, IndexError):
            return {}


def _declared_dependencies(folder: Path) -> list[str]:
    """``[project] dependencies`` or Poetry's ``[tool.poetry.dependencies]`` (names and simple pins)."""
    try:
        data = tomllib.loads((folder / "pyproject.toml").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return []
    project = data.get("project", {})
    deps = [d for d in project.get("dependencies", []) if isinstance(d, str)]
    poetry = data.get("tool", {}).get("poetry", {}).get("dependencies", {})
    for name, spec in poetry.items() if isinstance(poetry, dict) else ():
        if name.lower() == "python":
            continue
        version = spec if isinstance(spec, str) else spec.get("version", "*") if isinstance(spec, dict) else "*"
        deps.append(name if version in ("*", "") else f"{name}{_poetry_pin(version)}")
    return deps


def _poetry_pin(version: str) -> str:
    """Poetry's ``^1.2`` / ``~1.2`` as pip reads them (``>=1.2``); plain versions as ``==``."""
    if version[:1] in "^~":
        return ">=" + version[1:]
    return version if version[:1] in "<>=!" else "==" + version
