"""The process pool computes each per-module summary once per scan (issue 16).

Every file's whole-project questions ("which functions does some checkpointed graph run as
nodes") read the summaries of every LangGraph module, so a pool whose workers each answered them
parsed every such module once per worker. The pool's first phase splits the summaries across
the workers and hands them all to every worker before the files are analysed. These tests run a
worker's two phases in this process, as two workers would: the second "worker" analyses a file
without parsing the module whose summary the first computed -- and finds the same findings as a
worker that parsed it itself.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from resume_audit.cache.fileresult import FileResult
from resume_audit.config.settings import Config
from resume_audit.discovery.modulenames import SourceFile, module_name_for
from resume_audit.discovery.repo_root import AS_REPORTED
from resume_audit.engine import analysing, pool, processpool
from resume_audit.engine.grouping import Group
from resume_audit.engine.options import DEFAULT_MAX_FILE_BYTES
from resume_audit.engine.rulesets import active_rule_infos, prefilter_of
from resume_audit.engine.scan import scan
from resume_audit.findings import ScanResult
from resume_audit.reading.prefilter import frameworks_in_scan
from resume_audit.reading.sourcebytes import Corpus, Mentions, SourceBytes, content_hash

AGENT = """from typing import TypedDict

import requests
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import END, START, StateGraph
from langgraph.types import interrupt


class State(TypedDict):
    cents: int
    approved: bool


def review(state: State) -> dict:
    requests.post("https://payments.example.com/charge", json={"cents": state["cents"]})
    answer = interrupt({"charge": state["cents"]})
    return {"approved": answer == "yes"}


def build():
    builder = StateGraph(State)
    builder.add_node("review", review)
    builder.add_edge(START, "review")
    builder.add_edge("review", END)
    return builder.compile(checkpointer=InMemorySaver())
"""

OTHER = """from langgraph.graph import StateGraph


def make(state_type):
    return StateGraph(state_type)
"""


def _setup(root: Path) -> tuple[pool.WorkerSetup, Path, Path]:
    (root / "agent.py").write_text(AGENT)
    (root / "other.py").write_text(OTHER)
    files, raw = [], {}
    for path in sorted(root.glob("*.py")):
        resolved = path.resolve()
        name, is_package = module_name_for(resolved, resolved=True)
        files.append(SourceFile(resolved, path.name, name, is_package))
        raw[resolved] = resolved.read_bytes()
    hashes = {str(p): content_hash(b) for p, b in raw.items()}
    corpus = Corpus()
    for p, b in raw.items():
        corpus.add(p, b)
    texts = SourceBytes(dict(raw), hashes, corpus)
    rules = active_rule_infos(Config())
    prefilter = prefilter_of(rules)
    group = Group(0, Config(), tuple(r.id for r in rules))
    setup = pool.WorkerSetup(
        files,
        [group],
        60.0,
        hashes,
        texts,
        DEFAULT_MAX_FILE_BYTES,
        frameworks_in_scan(prefilter.match(b) for b in raw.values()),
        AS_REPORTED,
        None,
        None,
        Mentions(files, texts),
    )
    return setup, (root / "agent.py").resolve(), (root / "other.py").resolve()


def _observable(result: FileResult) -> tuple:
    return (
        [(f.rule_id, f.span, f.message, f.fingerprint) for f in result.findings],
        [(n.kind, n.path, n.message) for n in result.notifications],
        result.summary_deps,
    )


def _loaded(path: Path) -> bool:
    assert pool.WORKER is not None
    return pool.WORKER.built[0].project._loaded.get(path) is not None


def test_a_summary_computed_by_one_worker_spares_the_other_its_parse(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(pool, "WORKER", None)
    setup, agent, other = _setup(tmp_path)

    pool.init_worker(setup)  # the first worker: summarises the other module
    summarised = pool.summarise([(0, other)])
    assert {kind for _, kind, where, _ in summarised.values if where == other} >= {"langgraph-claims", "called-names"}
    shared = {0: {(kind, where): value for _, kind, where, value in summarised.values}}

    pool.init_worker(setup)  # the second worker: handed the summary, never parses other.py
    [served] = pool.work(pool.Chunk([(0, agent)], shared)).results
    assert not _loaded(other)

    pool.init_worker(setup)  # a worker handed nothing parses other.py to answer the same question
    [alone] = pool.work(pool.Chunk([(0, agent)], {})).results
    assert _loaded(other)

    assert [f.rule_id for f in served.findings] == ["RA101"]
    assert _observable(served) == _observable(alone)


def test_a_worker_analyses_the_files_it_summarised_before_taking_another_workers(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The second phase's tasks go to whichever worker is free; each takes a chunk that worker
    summarised while one is left (it holds their parsed modules: a chunk summarised elsewhere is
    parsed again, a third of the analysis of a 5,000-file tree), then any other. Every chunk is
    taken once."""
    import multiprocessing
    import os

    monkeypatch.setattr(pool, "WORKER", None)
    setup, agent, other = _setup(tmp_path)
    taken = multiprocessing.get_context().Array("b", 2)
    pool.init_worker(setup, taken)
    claim = pool.Claim([[(0, other)], [(0, agent)]], [os.getpid() + 1, os.getpid()], {})

    [first] = pool.work_claimed(claim).results
    assert first.display == "agent.py" and list(taken) == [0, 1]
    [second] = pool.work_claimed(claim).results
    assert second.display == "other.py" and list(taken) == [1, 1]


def test_a_summary_that_times_out_is_not_handed_on_and_the_worker_starts_afresh(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A module that cannot be summarised in time leaves no partial summary behind: nothing is
    shared, and the worker's analyser (whose memos would rest on the missing module) is dropped;
    the file's own analysis then meets the limit again and reports it, as a serial scan would."""
    monkeypatch.setattr(pool, "WORKER", None)
    setup, agent, other = _setup(tmp_path)
    pool.init_worker(dataclasses.replace(setup, time_limit=1e-6))
    assert pool.WORKER is not None
    summarised = pool.summarise([(0, other)])
    assert summarised.values == []
    assert 0 not in pool.WORKER.built
    [result] = pool.work(pool.Chunk([(0, agent)], {})).results
    assert [n.kind.value for n in result.notifications] == ["timeout"]


def test_spawned_workers_give_the_same_scan(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Where workers are not forked (macOS and Windows spawn them), they are handed the files'
    text instead of inheriting the scan's word index, and search words themselves: same report."""
    import multiprocessing

    for i in range(3):
        (tmp_path / f"agent_{i}.py").write_text(AGENT.replace("State", f"State{i}"))
    (tmp_path / "other.py").write_text(OTHER)
    serial = scan([tmp_path], Config(), tmp_path, jobs=1, cache_dir=None)
    monkeypatch.setattr(analysing, "PARALLEL_THRESHOLD", 1)
    monkeypatch.setattr(processpool, "pool_context", lambda: multiprocessing.get_context("spawn"))
    spawned = scan([tmp_path], Config(), tmp_path, jobs=2, cache_dir=tmp_path.parent / "spawn-cache")
    assert [f.rule_id for f in serial.findings] == ["RA101"] * 3
    assert [(f.rule_id, f.span, f.message, f.fingerprint) for f in spawned.findings] == [
        (f.rule_id, f.span, f.message, f.fingerprint) for f in serial.findings
    ]
    assert [(n.kind, n.path, n.message) for n in spawned.notifications] == [
        (n.kind, n.path, n.message) for n in serial.notifications
    ]


def test_workers_do_not_search_the_words_the_readers_answered(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Files read by reader processes come with which of the whole-tree words they hold; the
    analysis workers are handed those answers and search none of those words themselves (each
    searched all of them before: ~0.6 s per worker on a 5,000-file tree). Fails when the answers
    are not handed on."""
    from resume_audit.reading import readers as reading
    from resume_audit.reading import sourcebytes
    from resume_audit.reading.treewords import WHOLE_TREE_WORDS

    for i in range(6):
        (tmp_path / f"agent_{i}.py").write_text(AGENT.replace("State", f"State{i}"))
    (tmp_path / "other.py").write_text(OTHER)
    (tmp_path / "api.py").write_text("from fastapi import FastAPI\napp = FastAPI()\n")

    def seen(result: ScanResult) -> tuple:
        return (
            [(f.rule_id, f.span, f.message, f.fingerprint) for f in result.findings],
            [(n.kind, n.path, n.message) for n in result.notifications],
        )

    serial = seen(scan([tmp_path], Config(), tmp_path, jobs=1))
    assert [rule for rule, *_ in serial[0]] == ["RA101"] * 6
    log = tmp_path.parent / "searched.txt"
    searched_before = sourcebytes.Corpus.find_many

    def logged(self, needles):  # inherited by the forked workers
        with open(log, "a") as out:
            out.writelines(n.decode() + "\n" for n in needles)
        return searched_before(self, needles)

    monkeypatch.setattr(sourcebytes.Corpus, "find_many", logged)
    monkeypatch.setattr(analysing, "PARALLEL_THRESHOLD", 1)
    monkeypatch.setattr(reading, "PARALLEL_READ_THRESHOLD", 1)
    assert seen(scan([tmp_path], Config(), tmp_path, jobs=2)) == serial
    asked = set(log.read_text().split("\n")) if log.exists() else set()
    assert not asked & set(WHOLE_TREE_WORDS)
