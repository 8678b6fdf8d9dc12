"""Reader processes see what the scan's own process would (issue 16): the same bytes, hashes,
problems and pre-filter verdicts, in the same order -- bad files included."""

from __future__ import annotations

import multiprocessing
import os
from pathlib import Path

import pytest

from resume_audit.config.settings import Config
from resume_audit.engine.scan import active_rule_infos, prefilter_of
from resume_audit.reading import readers as reading

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"


def _tree(tmp_path: Path) -> list[tuple[Path, Path, str]]:
    (tmp_path / "latin1.py").write_bytes(b"# -*- coding: latin-1 -*-\nname = '\xe9'\n")
    (tmp_path / "bad_utf8.py").write_bytes(b"name = '\xff\xfe'\n")
    (tmp_path / "bad_cookie.py").write_bytes(b"# -*- coding: rot13 -*-\nx = 1\n")
    os.mkfifo(tmp_path / "fifo.py")
    (tmp_path / "gone.py").write_text("x = 1\n")
    paths = sorted(FIXTURES.rglob("*.py")) + sorted(tmp_path.glob("*.py")) + [tmp_path / "missing.py"]
    (tmp_path / "gone.py").unlink()
    return [(p, p.resolve(), p.name) for p in paths]


def test_readers_read_what_this_process_reads(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    items = _tree(tmp_path)
    prefilter = prefilter_of(active_rule_infos(Config()))
    here = list(reading.read_files(items, prefilter, workers=1))
    monkeypatch.setattr(reading, "PARALLEL_READ_THRESHOLD", 1)
    monkeypatch.setattr(reading, "CHUNK_FILES", 7)  # many chunks, several in flight at once
    pooled = list(reading.read_files(items, prefilter, workers=2))
    assert len(here) == len(items) > 300
    assert [(r.raw, r.digest, r.problem, r.match) for r in pooled] == [
        (r.raw, r.digest, r.problem, r.match) for r in here
    ]
    assert sum(r.raw is None for r in here) == 3  # the FIFO, the deleted and the missing file
    assert sum(r.problem is not None and r.raw is not None for r in here) == 2  # undecodable
    assert sum(not r.match.empty for r in here) > 100


def test_no_reader_outlives_a_scan_that_stops_reading_early(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    items = _tree(tmp_path)
    prefilter = prefilter_of(active_rule_infos(Config()))
    monkeypatch.setattr(reading, "PARALLEL_READ_THRESHOLD", 1)
    monkeypatch.setattr(reading, "CHUNK_FILES", 5)
    before = set(multiprocessing.active_children())
    reads = reading.read_files(items, prefilter, workers=2)
    next(reads)
    readers = set(multiprocessing.active_children()) - before
    assert readers
    reads.close()  # what the scan's loop does when it stops (Ctrl-C, an error)
    for proc in readers:
        proc.join(timeout=10)
        assert not proc.is_alive()


def test_the_readers_are_gone_once_the_last_file_is_handed_out(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The scan takes exactly as many files as it asked for and then forks its analysis workers:
    no reader process, and no thread of the readers' pool, may still be running by then."""
    import threading

    items = _tree(tmp_path)
    prefilter = prefilter_of(active_rule_infos(Config()))
    monkeypatch.setattr(reading, "PARALLEL_READ_THRESHOLD", 1)
    monkeypatch.setattr(reading, "CHUNK_FILES", 9)
    before = set(multiprocessing.active_children())
    threads = threading.active_count()
    reads = reading.read_files(items, prefilter, workers=2)
    taken = [next(reads) for _ in items]  # never asking for one more, as the scan does
    assert len(taken) == len(items)
    assert set(multiprocessing.active_children()) - before == set()
    assert threading.active_count() == threads


def test_readers_say_which_files_hold_each_word_as_a_search_of_the_whole_text_does(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The readers' per-file answers for the words every scan asks (and a few more: a dotted
    import, a phrase with a comma, a word in no file) are what the corpus search finds."""
    from resume_audit.reading.sourcebytes import Corpus
    from resume_audit.reading.treewords import WHOLE_TREE_WORDS

    items = _tree(tmp_path)
    prefilter = prefilter_of(active_rule_infos(Config()))
    words = (*WHOLE_TREE_WORDS, "import langgraph.graph", "interrupt(", "no file holds this")
    assert all(r.words is None for r in reading.read_files(items, prefilter, workers=1, words=words))
    monkeypatch.setattr(reading, "PARALLEL_READ_THRESHOLD", 1)
    monkeypatch.setattr(reading, "CHUNK_FILES", 7)
    pooled = list(reading.read_files(items, prefilter, workers=2, words=words))
    corpus = Corpus()
    for (path, resolved, _), r in zip(items, pooled):
        if r.raw is not None:
            corpus.add(resolved, r.raw)
    searched = corpus.find_many([w.encode() for w in words])
    by_reader = {
        w: sorted(str(resolved) for (_, resolved, _), r in zip(items, pooled) if r.words and w in r.words)
        for w in words
    }
    assert by_reader == {w: searched[w.encode()] for w in words}
    assert by_reader["from langgraph"] and by_reader["from fastapi"] and by_reader["no file holds this"] == []
    assert all(r.words is not None for r in pooled)


def test_the_whole_tree_words_are_the_words_the_analyses_ask() -> None:
    """The readers answer the words the web index and the langgraph questions search for: a
    package added to one list and not the other would leave the workers searching again."""
    from resume_audit.frameworks.langgraph import names as langgraph
    from resume_audit.handlers import web
    from resume_audit.reading.prefilter import import_words
    from resume_audit.reading.treewords import LANGGRAPH_IMPORT_WORDS, WHOLE_TREE_WORDS

    assert import_words(langgraph.PACKAGES) == LANGGRAPH_IMPORT_WORDS
    assert set(web.SERVING_WORDS) | set(LANGGRAPH_IMPORT_WORDS) == set(WHOLE_TREE_WORDS)
    assert {f"import {p}" for p in web.HTTP_PACKAGES + web.QUEUE_PACKAGES} <= set(WHOLE_TREE_WORDS)


NEAR_MISSES = [
    b"from langgraph.graph import StateGraph\n",
    b"from langgraph_sdk import get_client\n",  # a longer name holds the phrase too
    b"import langgraph-ish\n",
    b"datafrom langgraph\n",  # the phrase inside other text
    b"from  langgraph import x\n",  # two spaces: not the phrase
    b"# langgraph is mentioned, never imported\n",
    b"import crewai.flow\n",
    b"from llama_index.core.workflow import Workflow\n",
    b"import workflows\n",
    b"from pydantic_graph import Graph\n",
    b"from pydantic_graphs import x\n",
    b"import os, langgraph\n",  # the package named, but not right after `import`
    b"graph.invoke(x, {'configurable': {'thread_id': '1'}})\n",  # a marker, no import
    b"flow.kickoff(inputs)\n",
]


@pytest.mark.parametrize("words", [(), None])
def test_a_readers_framework_imports_are_the_pre_filters_own_search(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, words: tuple[str, ...] | None
) -> None:
    """Readers find the framework import phrases with the other import phrases they search a
    chunk for, and hand them to the pre-filter; its verdict is the one its own searches give,
    near misses included -- with or without whole-tree words asked."""
    from resume_audit.reading.treewords import WHOLE_TREE_WORDS

    items = []
    for i, text in enumerate(NEAR_MISSES):
        path = tmp_path / f"m{i}.py"
        path.write_bytes(text)
        items.append((path, path.resolve(), path.name))
    prefilter = prefilter_of(active_rule_infos(Config()))
    monkeypatch.setattr(reading, "_PREFILTER", prefilter)
    monkeypatch.setattr(reading, "_WORDS", WHOLE_TREE_WORDS if words is None else words)
    chunk = reading._read_chunk(items)
    alone = [reading.read_file(p, r, d, prefilter) for p, r, d in items]
    assert [r.match for r in chunk] == [r.match for r in alone]
    assert sum(bool(r.match.frameworks) for r in alone) == 11  # all but the two spaces, the comment, `os, langgraph`
    if words == ():
        assert all(r.words is None for r in chunk)
    else:
        assert all(r.words is not None and r.words <= set(WHOLE_TREE_WORDS) for r in chunk)
