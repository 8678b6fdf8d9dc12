"""A warm scan (nothing changed since the last) answers from the cache without importing the
analysis: no LibCST, no rule module. And the rule metadata it uses instead -- a snapshot in the
cache directory -- says exactly what the rule classes say, and a damaged one is not trusted."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

from resume_audit.cache.filetable import RACY_SECONDS
from resume_audit.catalog import ruleindex
from resume_audit.reading.prefilter import Trigger
from resume_audit.rules import all_rules

AGENT = """
from langgraph.types import interrupt
import stripe

def node(state):
    stripe.Charge.create(amount=state["amount"])
    answer = interrupt("approve?")
    return {"answer": answer}
"""

#: a scan through the CLI's code path, then what it imported
PROBE = """
import json, sys
from pathlib import Path
from resume_audit.cli import app
try:
    app([{args}], standalone_mode=False)
except SystemExit:
    pass
# the summary bookkeeping (JSON and hashes: stored summaries are checked on a warm run) is no analysis
# the packages whose import phrases the readers answer (treewords) are plain data, no analysis
# the framework registry and each framework's record (its folder's __init__: ids and import names) are
# plain data too: the pre-filter derives its import words from them
light = ("resume_audit.facts.summaries", "resume_audit.cache.summaries",
         "resume_audit.frameworks", "resume_audit.handlers.packages", "resume_audit.frameworks.registry",
         "resume_audit.frameworks.langgraph", "resume_audit.frameworks.crewai", "resume_audit.frameworks.llamaindex",
         "resume_audit.frameworks.pydantic_graph")
# pydantic: typer 0.29 imports it and builds a validator per option on every run (~0.13 s)
# multiprocessing, concurrent.futures: only a scan that starts a process pool needs them
heavy = sorted(m for m in sys.modules if m in ("libcst", "pydantic", "multiprocessing", "concurrent.futures")
               or m.startswith(("libcst.", "pydantic.", "resume_audit.rules", "resume_audit.analysis.", "resume_audit.frameworks"))
               and m not in light)
print(json.dumps(heavy))
"""


def _imported_by_scan(tree: Path, cache: Path, out: Path) -> list[str]:
    args = ", ".join(
        repr(a)
        for a in [
            "scan",
            str(tree),
            "--cache-dir",
            str(cache),
            "-f",
            "json",
            "-o",
            str(out),
            "--fail-on",
            "never",
            "-q",
        ]
    )
    proc = subprocess.run([sys.executable, "-c", PROBE.format(args=args)], capture_output=True, text=True, cwd=tree)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout.strip().splitlines()[-1])


def test_warm_scan_of_an_unchanged_tree_imports_no_analysis(tmp_path: Path) -> None:
    tree, cache = tmp_path / "tree", tmp_path / "cache"
    (tree / "app").mkdir(parents=True)
    (tree / "app" / "agent.py").write_text(AGENT)
    (tree / "app" / "util.py").write_text("def helper():\n    return 1\n")
    # files older than the file table's racy window: the warm scan takes the stat-only path
    time.sleep(RACY_SECONDS + 0.2)
    cold = _imported_by_scan(tree, cache, tmp_path / "cold.json")
    assert "libcst" in cold  # the cold scan parsed the agent file
    warm = _imported_by_scan(tree, cache, tmp_path / "warm.json")
    assert warm == []
    # and said the same thing (the finding's rule name included: looked up without the rules)
    cold_report = json.loads((tmp_path / "cold.json").read_text())
    assert cold_report["findings"] and cold_report["findings"][0]["rule_name"]
    assert json.loads((tmp_path / "warm.json").read_text()) == cold_report
    # a changed file that is no candidate is read and decoded again: still no parser
    (tree / "app" / "util.py").write_text("def helper():\n    return 2\n")
    assert _imported_by_scan(tree, cache, tmp_path / "util.json") == []
    # an edited agent file is analysed again: the analysis is imported when it is needed
    (tree / "app" / "agent.py").write_text(AGENT + "\n# edited\n")
    assert "libcst" in _imported_by_scan(tree, cache, tmp_path / "edited.json")


def _from_classes() -> tuple[ruleindex.RuleInfo, ...]:
    return tuple(
        ruleindex.RuleInfo(
            r.id, r.name, tuple(r.frameworks), tuple(t if isinstance(t, Trigger) else Trigger((t,)) for t in r.triggers)
        )
        for r in all_rules()
    )


def test_snapshot_says_what_the_rule_classes_say(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setattr(ruleindex, "_known", None)
    written = ruleindex.static_rules(tmp_path)  # the rules are imported in this process: from the classes, and saved
    snapshot = ruleindex._snapshot_path(tmp_path)
    assert snapshot.exists()
    assert written == _from_classes()
    assert ruleindex._read(snapshot) == _from_classes()  # read back: the same, triggers' frameworks included
    assert any(t.framework for r in written for t in r.triggers)


def test_damaged_snapshot_is_not_trusted(tmp_path: Path, monkeypatch) -> None:
    snapshot = ruleindex._snapshot_path(tmp_path)
    snapshot.parent.mkdir(parents=True, exist_ok=True)
    for damaged in (
        "{not json",
        json.dumps({"format": 999, "rules": []}),
        json.dumps({"format": 1, "rules": [{"id": "RA101"}]}),
    ):
        snapshot.write_text(damaged)
        assert ruleindex._read(snapshot) is None
    # a scan reading the damaged snapshot falls back to the classes (simulating a process that has
    # not imported the rules) and writes a good one
    monkeypatch.setattr(ruleindex, "_known", None)
    monkeypatch.delitem(sys.modules, "resume_audit.rules")
    assert ruleindex.static_rules(tmp_path) == _from_classes()
    assert ruleindex._read(snapshot) == _from_classes()


def test_snapshot_is_keyed_by_the_code(tmp_path: Path, monkeypatch) -> None:
    """A snapshot of other code (another fingerprint) is never read: a rule edited since is seen."""
    monkeypatch.setattr(ruleindex, "_known", None)
    other = tmp_path / "rules-0000.snapshot"
    other.write_text(json.dumps({"format": 1, "rules": []}))
    assert ruleindex._snapshot_path(tmp_path) != other
    assert ruleindex.static_rules(tmp_path) == _from_classes()
