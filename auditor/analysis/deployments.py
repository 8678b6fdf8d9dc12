"""Deployment manifests: graphs and workflows a platform serves and persists for the app.

A LangGraph app deployed with ``langgraph.json`` never passes a checkpointer to
``compile()``: the LangGraph server supplies a durable one (PostgreSQL) and
serves the graph over HTTP, so its nodes are checkpointed and resumed exactly
as if ``compile(checkpointer=PostgresSaver(...))`` were written. A LlamaIndex
workflow listed in UiPath's ``llama_index.json`` runs under the UiPath runtime,
which serialises the workflow ``Context`` when a run suspends for a human and
restores it on resume. The rules must see both, or they are silent on the apps
that are deployed the documented way.

Manifests are looked for in every folder that holds project files and their
parents up to the project's common root; reading one never runs anything.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path

from resume_audit.analysis.queries import ProjectQueries
from resume_audit.facts.model import ModuleFacts

#: manifest file name -> (platform, key holding the entries, persists state, what the platform does)
MANIFESTS: dict[str, tuple[str, str, str]] = {
    "langgraph.json": (
        "langgraph-server",
        "graphs",
        "deployed through langgraph.json: the LangGraph server checkpoints it (a durable PostgreSQL "
        "checkpointer it supplies) and serves it over HTTP",
    ),
    "llama_index.json": (
        "uipath",
        "workflows",
        "deployed through llama_index.json: the UiPath runtime serialises its Context when a run suspends "
        "and restores it on resume, and it skips the first re-emitted InputRequiredEvent after a resume",
    ),
}
_MAX_MANIFEST_BYTES = 1024 * 1024


@dataclass(frozen=True)
class Deployment:
    platform: str
    manifest: Path
    #: the deployed file (resolved), or None when the entry names a module we could not find
    target: Path | None
    attribute: str
    #: what the platform does for it, in a sentence the rules quote
    note: str


def deployments(project: ProjectQueries) -> list[Deployment]:
    """Every deployment entry of every manifest found around the project's files (once per scan)."""
    return project.cached("deployments", "all", lambda: _find(project))


def deployment_of(module: ModuleFacts, project: ProjectQueries, platform: str | None = None) -> Deployment | None:
    """The deployment that serves ``module``'s file, if any (optionally of one platform)."""
    path = module.path.resolve()
    for d in deployments(project):
        if d.target == path and (platform is None or d.platform == platform):
            return d
    return None


def _find(project: ProjectQueries) -> list[Deployment]:
    dirs = project.directories()
    if not dirs:
        return []
    top = Path(*_common(dirs))
    candidates: set[Path] = set()
    # the manifest often sits above the code (``langgraph.json`` beside ``src/``): look up to
    # three folders above the common root, stopping at the repository's top
    above = top
    for _ in range(3):
        if (above / ".git").exists() or above.parent == above:
            break
        above = above.parent
        candidates.add(above)
    # every folder from each file's up to the common root: by string (a tree has thousands)
    top_name, above_code = os.fspath(top), set()
    for d in dirs:
        cur = os.fspath(d)
        while True:
            above_code.add(cur)
            parent = os.path.dirname(cur)
            if cur == top_name or parent == cur:
                break
            cur = parent
    candidates.update(Path(folder) for folder in above_code)
    out: list[Deployment] = []
    for directory in sorted(candidates):
        folder = os.fspath(directory)
        for name, (platform, key, note) in MANIFESTS.items():
            if not os.path.isfile(os.path.join(folder, name)):  # (most folders hold none: no Path made)
                continue
            manifest = directory / name
            data = _read(manifest)
            if not isinstance(data, dict) or not isinstance(data.get(key), dict):
                continue
            for spec in data[key].values():
                if isinstance(spec, str) and ":" in spec:
                    target, _, attr = spec.rpartition(":")
                    out.append(Deployment(platform, manifest, _target(directory, target, project), attr, note))
    return out


def _read(manifest: Path) -> object:
    try:
        if not manifest.is_file() or manifest.stat().st_size > _MAX_MANIFEST_BYTES:
            return None
        return json.loads(manifest.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def _target(directory: Path, target: str, project: ProjectQueries) -> Path | None:
    """``./src/agent/graph.py`` relative to the manifest, or a dotted module ``agent.graph``."""
    if target.endswith(".py") or "/" in target:
        return (directory / target).resolve()
    entries = project.entries_named(target)
    return entries[0].path if entries else None


def _common(dirs: set[Path]) -> tuple[str, ...]:
    parts = [d.parts for d in dirs]
    out: list[str] = []
    for column in zip(*parts):
        if len(set(column)) != 1:
            break
        out.append(column[0])
    return tuple(out)
