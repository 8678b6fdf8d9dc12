"""A warm scan always equals a cold one (issue 19): random edit sequences over a multi-module project,
every warm (cached) scan compared with a ``--no-cache`` scan of the same tree.

The project has what made the cache wrong before: node files sharing helper chains two and three
hops deep (``a1``/``a2`` -> ``h.notify`` -> ``h2.send`` -> ``h3.post`` -> ``requests.post``), graphs whose
checkpointer comes and goes, files added, deleted and renamed -- and what the per-module summaries'
early cut-off rests on: a node run by two graphs (which graph's file reports it is decided by the
other's stored summary), a saver constructed in one module and used by a graph in another, served
or not (RA601), edits inside a node's body and comment-only edits (the summaries stay the same, the
results must too). CI runs a fixed seed; set
``RESUME_AUDIT_CACHE_SEED`` and ``RESUME_AUDIT_CACHE_STEPS`` for longer or other runs.
"""

from __future__ import annotations

import os
import random
from pathlib import Path

import pytest

from resume_audit.cache import filetable
from resume_audit.config.settings import Config
from resume_audit.engine.scan import scan
from resume_audit.findings import ScanResult

SEEDS = [int(s) for s in os.environ.get("RESUME_AUDIT_CACHE_SEED", "1,2,3").split(",")]
STEPS = int(os.environ.get("RESUME_AUDIT_CACHE_STEPS", "25"))

SAVERS = {
    "none": ("", ""),
    "memory": ("from langgraph.checkpoint.memory import InMemorySaver\n", "checkpointer=InMemorySaver()"),
    "sqlite": (
        "from langgraph.checkpoint.sqlite import SqliteSaver\nimport sqlite3\n",
        "checkpointer=SqliteSaver(sqlite3.connect('state.db', check_same_thread=False))",
    ),
    "shared": ("from savers import saver\n", "checkpointer=saver"),
    # not checkpointed, with the same words as "memory": only the graph's summary tells the difference
    "off": ("from langgraph.checkpoint.memory import InMemorySaver\n", "checkpointer=None"),
}
SINKS = {
    "requests": "import requests\n\ndef post(state):\n    requests.post('https://example.com/hook', json=state)\n",
    "stripe": "import stripe\n\ndef post(state):\n    stripe.Refund.create(charge=state['id'])\n",
    "pure": "def post(state):\n    return dict(state)\n",
    "keyed": "import stripe\n\ndef post(state):\n    stripe.Refund.create(charge=state['id'], idempotency_key=state['key'])\n",
}


class Project:
    """The tree under edit, described by a few choices; ``write()`` renders it."""

    def __init__(self, root: Path, rng: random.Random) -> None:
        self.root, self.rng = root, rng
        self.sink = "requests"
        self.h2_calls_h3 = True
        self.h3_name = "h3"  # renamed to move the sink module
        self.nodes = {
            "a1": {"helper": True, "interrupt": True, "pad": 0},
            "a2": {"helper": True, "interrupt": True, "pad": 0},
        }
        self.graphs = {
            # durable at first (RA103 is about a resume after a crash; an in-memory saver has none), then
            # any saver: a graph moving between memory and SQLite moves its nodes' RA103 with it
            "g1": {"saver": "sqlite", "nodes": ["a1"], "comments": 0},
            "g2": {"saver": "none", "nodes": ["a2"], "comments": 0},
        }
        self.served = False

    # -- rendering -------------------------------------------------------------------------
    def write(self) -> None:
        """Render the tree; a file whose text is unchanged is left alone (same inode, same times),
        so the warm scan's stat-only path is what sees it."""
        wanted: dict[Path, str] = {}
        self._render(wanted)
        for old in self.root.glob("*.py"):
            if old not in wanted:
                old.unlink()
        for path, text in wanted.items():
            if not path.exists() or path.read_text() != text:
                path.write_text(text)

    def _render(self, out: dict[Path, str]) -> None:
        out[self.root / "h.py"] = "from h2 import send\n\n\ndef notify(state):\n    send(state)\n"
        h2 = (
            f"from {self.h3_name} import post\n\n\ndef send(state):\n    post(state)\n"
            if self.h2_calls_h3
            else "def send(state):\n    return None\n"
        )
        out[self.root / "h2.py"] = h2
        out[self.root / f"{self.h3_name}.py"] = SINKS[self.sink]
        out[self.root / "savers.py"] = (
            "from langgraph.checkpoint.memory import InMemorySaver\n\nsaver = InMemorySaver()\n"
        )
        if self.served:
            out[self.root / "app.py"] = (
                "from fastapi import FastAPI\nfrom g1 import build_g1\n\napp = FastAPI()\n\n\n"
                "@app.post('/run')\ndef run():\n    return build_g1().invoke({})\n"
            )
        for name, node in self.nodes.items():
            lines = ["from langgraph.types import interrupt\n"]
            if node["helper"]:
                lines.append("from h import notify\n")
            lines.append(f"\n\ndef {name}_node(state):\n")
            if node["helper"]:
                lines.append("    notify(state)\n")
            lines.append("    answer = interrupt('approve?')\n" if node["interrupt"] else "    answer = True\n")
            lines.extend(f"    pad{i} = {i}\n" for i in range(node["pad"]))  # a body edit that changes no summary
            lines.append("    return {'answer': answer}\n")
            out[self.root / f"{name}.py"] = "".join(lines)
        for name, graph in self.graphs.items():
            imports, arg = SAVERS[graph["saver"]]
            text = "from langgraph.graph import StateGraph, START\n" + imports
            text += "".join(f"from {n} import {n}_node\n" for n in graph["nodes"])
            text += f"\n\ndef build_{name}():\n    builder = StateGraph(dict)\n"
            for n in graph["nodes"]:
                text += f"    builder.add_node('{n}', {n}_node)\n"
            if graph["nodes"]:
                text += f"    builder.add_edge(START, '{graph['nodes'][0]}')\n"
            text += f"    return builder.compile({arg})\n"
            text += "# a comment\n" * graph["comments"]
            out[self.root / f"{name}.py"] = text

    # -- edits ---------------------------------------------------------------------------------
    def edit(self) -> str:
        rng = self.rng
        choice = rng.choice(
            ["sink", "h2", "rename", "saver", "node", "add", "delete", "move", "share", "pad", "comment", "serve"]
        )
        if choice == "sink":
            self.sink = rng.choice(sorted(SINKS))
        elif choice == "h2":
            self.h2_calls_h3 = not self.h2_calls_h3
        elif choice == "rename":
            self.h3_name = "h3" if self.h3_name != "h3" else "h3_moved"
        elif choice == "saver":
            graph = rng.choice(sorted(self.graphs))
            self.graphs[graph]["saver"] = rng.choice(sorted(SAVERS))
        elif choice == "node":
            node = rng.choice(sorted(self.nodes))
            key = rng.choice(["helper", "interrupt"])
            self.nodes[node][key] = not self.nodes[node][key]
        elif choice == "add":
            name = f"a{len(self.nodes) + 1}"
            while name in self.nodes:
                name += "x"
            self.nodes[name] = {"helper": rng.random() < 0.7, "interrupt": True, "pad": 0}
            graph = rng.choice(sorted(self.graphs))
            self.graphs[graph]["nodes"].append(name)
        elif choice == "delete" and len(self.nodes) > 1:
            name = rng.choice(sorted(self.nodes))
            del self.nodes[name]
            for graph in self.graphs.values():
                if name in graph["nodes"]:
                    graph["nodes"].remove(name)
        elif choice == "move":
            node = rng.choice(sorted(self.nodes))
            for graph in self.graphs.values():
                if node in graph["nodes"]:
                    graph["nodes"].remove(node)
            self.graphs[rng.choice(sorted(self.graphs))]["nodes"].append(node)
        elif choice == "share":  # one node function run by both graphs
            node = rng.choice(sorted(self.nodes))
            for graph in self.graphs.values():
                if node not in graph["nodes"]:
                    graph["nodes"].append(node)
        elif choice == "pad":
            self.nodes[rng.choice(sorted(self.nodes))]["pad"] = rng.randrange(3)
        elif choice == "comment":
            self.graphs[rng.choice(sorted(self.graphs))]["comments"] = rng.randrange(3)
        elif choice == "serve":
            self.served = not self.served
        return choice


def observable(result: ScanResult) -> tuple:
    return (
        [
            (f.rule_id, f.span, f.fingerprint, f.message, f.scope, tuple((r.span, r.message) for r in f.related))
            for f in result.findings
        ],
        [(n.kind, n.path, n.line, n.message) for n in result.notifications],
        result.files_scanned,
        result.unresolved_imports,
    )


@pytest.mark.parametrize("seed", SEEDS)
def test_every_warm_scan_equals_a_cold_one(tmp_path: Path, seed: int, monkeypatch: pytest.MonkeyPatch) -> None:
    # files are trusted on their stat signature however recently they changed (the edits here come
    # faster than the two seconds a real scan waits), so unchanged files are never re-read
    monkeypatch.setattr(filetable, "RACY_SECONDS", 0.0)
    tree, cache = tmp_path / "tree", tmp_path / "cache"
    tree.mkdir()
    project = Project(tree, random.Random(seed))
    project.write()
    history = ["start"]
    rule_ids: set[str] = set()
    for step in range(STEPS):
        warm = scan([tree], Config(), tree, jobs=1, cache_dir=cache)
        cold = scan([tree], Config(), tree, jobs=1, cache_dir=None)
        assert observable(warm) == observable(cold), f"seed {seed}, after edits {history}"
        rule_ids.update(f.rule_id for f in cold.findings)
        history.append(project.edit())
        project.write()
    # the sequence exercised the cross-module rules it is about
    assert {"RA101", "RA103"} <= rule_ids, rule_ids
