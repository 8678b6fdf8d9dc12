"""Early cut-off (issue 16): a cached result depends on the *value* of the per-module summaries it
read, not on the bytes of every module behind them. An edit that changes a summary must invalidate
the results that read it; an edit that leaves it unchanged must not re-analyse them -- and in both
cases the warm scan equals a scan without cache."""

from __future__ import annotations

from pathlib import Path

import pytest

from resume_audit.cache import filetable
from resume_audit.config.settings import Config
from resume_audit.engine import scan as engine
from resume_audit.engine.scan import scan

NODE = 'import requests\n\n\ndef work(state):\n    requests.post("https://example.com/hook", json=state)\n    return {"done": True}\n'


def graph(saver: bool, extra: str = "", spelled: bool = False, memory: bool = False) -> str:
    """``saver``: a durable (SQLite) checkpointer; ``memory``: an in-memory one instead, which a crash
    takes with it (nothing to resume, so RA103 does not hold); ``spelled``: no checkpointer, but the
    same words as with one (the imports stay, ``None`` is passed), so only the module's summary -- not
    a word search -- sees the difference."""
    if memory:
        imports, arg = (
            "import sqlite3\nfrom langgraph.checkpoint.memory import InMemorySaver\n",
            "checkpointer=InMemorySaver()",
        )
    else:
        imports = "import sqlite3\nfrom langgraph.checkpoint.sqlite import SqliteSaver\n" if saver or spelled else ""
        arg = (
            "checkpointer=SqliteSaver(sqlite3.connect('state.db', check_same_thread=False))"
            if saver
            else "checkpointer=None"
            if spelled
            else ""
        )
    return (
        f"{imports}from langgraph.graph import START, StateGraph\n\nfrom node import work\n\n\n"
        f"def build():\n    builder = StateGraph(dict)\n    builder.add_node('work', work)\n"
        f"    builder.add_edge(START, 'work')\n{extra}    return builder.compile({arg})\n"
    )


def observable(result) -> list[tuple]:
    return [
        (
            f.rule_id,
            f.span.path,
            f.span.start_line,
            f.message,
            tuple((r.span.path, r.span.start_line) for r in f.related),
        )
        for f in result.findings
    ]


@pytest.fixture
def analysed(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The files each scan really analysed (a cache hit is not analysed)."""
    monkeypatch.setattr(filetable, "RACY_SECONDS", 0.0)  # edits here come faster than a real scan waits
    seen: list[str] = []
    original = engine.Analyzer.analyse

    def spy(self, path: Path):
        seen.append(path.name)
        return original(self, path)

    monkeypatch.setattr(engine.Analyzer, "analyse", spy)
    return seen


@pytest.mark.parametrize("how", ["dropped", "spelled", "memory"])
def test_a_node_run_by_two_graphs_moves_to_the_other_graph_when_the_first_stops_checkpointing(
    tmp_path: Path, analysed: list[str], how: str
) -> None:
    """The first graph stops checkpointing durably: its saver dropped, ``None`` spelled with the same
    words, or swapped for an in-memory one (which a crash loses, so nothing re-runs the node)."""
    tree, cache = tmp_path / "tree", tmp_path / "cache"
    tree.mkdir()
    (tree / "node.py").write_text(NODE)
    (tree / "g1.py").write_text(graph(saver=True))
    (tree / "g2.py").write_text(graph(saver=True))
    cold = scan([tree], Config(), tree, jobs=1, cache_dir=cache)
    # the node belongs to the first graph by path: reported from g1.py only
    assert [(rule, path, related) for rule, path, _, _, related in observable(cold)] == [
        ("RA103", "node.py", (("g1.py", 12),))
    ]
    (tree / "g1.py").write_text(graph(saver=False, spelled=how == "spelled", memory=how == "memory"))
    analysed.clear()
    warm = scan([tree], Config(), tree, jobs=1, cache_dir=cache)
    uncached = scan([tree], Config(), tree, jobs=1, cache_dir=None)
    assert observable(warm) == observable(uncached)
    # g2.py did not change, but g1.py's summary of what it checkpoints did: g2.py reports the node now
    assert [related for *_, related in observable(warm)] == [(("g2.py", 12),)]
    assert sorted(set(analysed)) == ["g1.py", "g2.py"]


def test_an_edit_that_leaves_the_summaries_alone_reanalyses_only_the_edited_file(
    tmp_path: Path, analysed: list[str]
) -> None:
    tree, cache = tmp_path / "tree", tmp_path / "cache"
    tree.mkdir()
    (tree / "node.py").write_text(NODE)
    (tree / "g1.py").write_text(graph(saver=True))
    (tree / "g2.py").write_text(graph(saver=True))
    scan([tree], Config(), tree, jobs=1, cache_dir=cache)
    # the same graph, one more statement in the function that builds it, and a comment
    (tree / "g1.py").write_text(graph(saver=True, extra="    builder.name = 'renamed'\n") + "# edited\n")
    analysed.clear()
    warm = scan([tree], Config(), tree, jobs=1, cache_dir=cache)
    # before: g1.py's bytes were a dependency of g2.py's result (the project-wide node facts)
    assert sorted(set(analysed)) == ["g1.py"]
    assert observable(warm) == observable(scan([tree], Config(), tree, jobs=1, cache_dir=None))


def test_a_module_that_only_defines_a_name_is_not_parsed_as_a_caller(tmp_path: Path, analysed: list[str]) -> None:
    """``change_answer`` defined in every agent file: who passes its ``thread_id`` is read from
    each module's summary of the names it calls, so editing one agent re-analyses that agent only."""
    tree, cache = tmp_path / "tree", tmp_path / "cache"
    tree.mkdir()
    agent = (
        "from langgraph.checkpoint.memory import InMemorySaver\nfrom langgraph.graph import START, StateGraph\n"
        "from langgraph.types import Command, interrupt\n\n\ndef ask(state):\n    return {{'a': interrupt('ok?')}}\n\n\n"
        "def build():\n    builder = StateGraph(dict)\n    builder.add_node('ask', ask)\n    builder.add_edge(START, 'ask')\n"
        "    return builder.compile(checkpointer=InMemorySaver())\n\n\n"
        "def change_answer(graph, thread_id: str, answer: str):{pad}\n"
        "    return graph.invoke(Command(resume=answer), {{'configurable': {{'thread_id': thread_id}}}})\n"
    )
    for name in ("a1", "a2", "a3"):
        (tree / f"{name}.py").write_text(agent.format(pad=""))
    cold = scan([tree], Config(), tree, jobs=1, cache_dir=cache)
    (tree / "a1.py").write_text(agent.format(pad="\n    answer = answer.strip()"))
    analysed.clear()
    warm = scan([tree], Config(), tree, jobs=1, cache_dir=cache)
    assert sorted(set(analysed)) == ["a1.py"]
    assert observable(warm) == observable(scan([tree], Config(), tree, jobs=1, cache_dir=None))
    assert len(cold.findings) == len(warm.findings)


def test_a_saver_built_in_one_module_is_reported_once_a_graph_in_another_uses_it(
    tmp_path: Path, analysed: list[str]
) -> None:
    """RA601: the saver is constructed in ``savers.py`` (unchanged throughout); whether it is
    reported there depends on ``g1.py``'s summary of the savers its graphs use."""
    tree, cache = tmp_path / "tree", tmp_path / "cache"
    tree.mkdir()
    (tree / "savers.py").write_text(
        "from langgraph.checkpoint.memory import InMemorySaver\n\nsaver = InMemorySaver()\n"
    )
    # the app serves savers.py's module (not g1.py: the serving index would make g1.py's bytes a dependency)
    (tree / "app.py").write_text(
        "from fastapi import FastAPI\nfrom savers import saver\n\napp = FastAPI()\n\n\n"
        "@app.post('/run')\ndef run():\n    return saver.get({})\n"
    )

    def g1(checkpointer: str) -> str:
        return (
            "from langgraph.graph import START, StateGraph\nfrom langgraph.types import interrupt\nfrom savers import saver\n\n\n"
            "def ask(state):\n    return {'a': interrupt('ok?')}\n\n\n"
            "def build():\n    builder = StateGraph(dict)\n    builder.add_node('ask', ask)\n    builder.add_edge(START, 'ask')\n"
            f"    return builder.compile(checkpointer={checkpointer})\n"
        )

    # first no saver is used (the same words): savers.py's result rests on g1.py's summary alone
    (tree / "g1.py").write_text(g1("None if saver is None else None"))
    cold = scan([tree], Config(), tree, jobs=1, cache_dir=cache)
    assert ("RA601", "savers.py") not in {(f.rule_id, f.span.path) for f in cold.findings}
    (tree / "g1.py").write_text(g1("saver"))
    warm = scan([tree], Config(), tree, jobs=1, cache_dir=cache)
    assert observable(warm) == observable(scan([tree], Config(), tree, jobs=1, cache_dir=None))
    assert ("RA601", "savers.py") in {(f.rule_id, f.span.path) for f in warm.findings}
    (tree / "g1.py").write_text(g1("None if saver is None else None"))
    again = scan([tree], Config(), tree, jobs=1, cache_dir=cache)
    assert observable(again) == observable(cold)


def test_a_caller_that_starts_passing_a_saver_to_a_graph_factory_checkpoints_its_nodes(
    tmp_path: Path, analysed: list[str]
) -> None:
    """``create_graph(checkpointer=None)`` compiles with its parameter: whether its node is reported
    rests on what the callers in other modules pass, so editing only the caller moves the finding."""
    tree, cache = tmp_path / "tree", tmp_path / "cache"
    tree.mkdir()
    (tree / "node.py").write_text(NODE)
    (tree / "factory.py").write_text(
        "from langgraph.graph import START, StateGraph\n\nfrom node import work\n\n\n"
        "def create_graph(checkpointer=None):\n    builder = StateGraph(dict)\n    builder.add_node('work', work)\n"
        "    builder.add_edge(START, 'work')\n    return builder.compile(checkpointer=checkpointer)\n"
    )
    durable = "import sqlite3\nfrom langgraph.checkpoint.sqlite import SqliteSaver\n"

    def worker(arg: str) -> str:
        return f"{durable}from factory import create_graph\n\ngraph = create_graph({arg})\n"

    (tree / "worker.py").write_text(worker(""))
    cold = scan([tree], Config(), tree, jobs=1, cache_dir=cache)
    assert [f.rule_id for f in cold.findings] == []
    for arg, expected in (
        ("SqliteSaver(sqlite3.connect('s.db', check_same_thread=False))", ["RA103"]),
        ("checkpointer=None", []),
    ):
        (tree / "worker.py").write_text(worker(arg))
        warm = scan([tree], Config(), tree, jobs=1, cache_dir=cache)
        assert observable(warm) == observable(scan([tree], Config(), tree, jobs=1, cache_dir=None))
        assert [f.rule_id for f in warm.findings] == expected
