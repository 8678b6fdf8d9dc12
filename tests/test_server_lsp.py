"""``resume-audit server`` end to end: a real LSP client (pygls') drives the server in a child
process over stdio, on a small LangGraph project (tests/data/lsp_project) copied per test.

The project: ``agent/graph.py`` is a checkpointed graph whose node calls ``charge_card`` from
``agent/payments.py`` (an HTTP POST) before ``interrupt()`` -- RA101, reached through the helper in
the other file -- and runs the graph with ``durability="exit"`` -- RA106, which has a safe fix.
"""

from __future__ import annotations

import asyncio
import shutil
import sys
from pathlib import Path

import pytest
from lsp_session import ServerSession
from lsprotocol import types as lsp

from resume_audit.api import scan as scan_api

FIXTURE = Path(__file__).parent / "data" / "lsp_project"
EFFECT = 'requests.post("https://payments.invalid/charge", json={"amount": amount})'


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    shutil.copytree(FIXTURE, root)
    return root


def _session(project: Path, **kwargs: object) -> ServerSession:
    # the scan's cache, as `resume-audit scan` keeps it, but under the test's own folder
    return ServerSession(project, env={"XDG_CACHE_HOME": str(project.parent / "cache")}, **kwargs)  # type: ignore[arg-type]


def apply_edits(text: str, edits: list[lsp.TextEdit]) -> str:
    """A client applying a code action's edits (ASCII text: LSP's UTF-16 columns are characters)."""
    lines = text.splitlines(keepends=True)
    starts = [0]
    for line in lines:
        starts.append(starts[-1] + len(line))

    def offset(p: lsp.Position) -> int:
        return starts[p.line] + p.character

    for edit in sorted(edits, key=lambda e: (e.range.start.line, e.range.start.character), reverse=True):
        text = text[: offset(edit.range.start)] + edit.new_text + text[offset(edit.range.end) :]
    return text


def run(coroutine: object) -> None:
    asyncio.run(asyncio.wait_for(coroutine, 240))  # type: ignore[arg-type]


def test_diagnostics_on_open_follow_an_unsaved_edit_of_a_helper_in_another_file(project: Path) -> None:
    async def scenario() -> None:
        async with _session(project) as s:
            graph = s.open("agent/graph.py")
            await s.wait_for(lambda: sorted(s.codes("agent/graph.py")) == ["RA101", "RA106"])
            ra101 = next(d for d in s.diagnostics[graph] if d.code == "RA101")
            assert ra101.severity == lsp.DiagnosticSeverity.Error
            assert ra101.source == "resume-audit"
            assert ra101.code_description is not None and ra101.code_description.href.endswith("/RA101.md")
            assert (ra101.range.start.line, ra101.range.start.character) == (17, 4)  # charge_card(...) in the node
            assert "fires again on every resume" in ra101.message
            related = {
                (Path(r.location.uri).name, r.location.range.start.line) for r in ra101.related_information or []
            }
            assert ("payments.py", 6) in related  # the effect, in the helper's file
            assert ("graph.py", 18) in related  # the interrupt() it precedes

            def kinds() -> list[object]:
                return [p.get("kind") if isinstance(p, dict) else getattr(p, "kind", None) for p in s.progress]

            await s.wait_for(lambda: kinds()[-1:] == ["end"])  # the indexing, shown as $/progress
            assert kinds()[0] == "begin"

            # the helper loses its effect in the editor, unsaved: the node's diagnostics in graph.py go
            helper = (project / "agent" / "payments.py").read_text()
            s.open("agent/payments.py")
            s.change("agent/payments.py", helper.replace(EFFECT, "print(amount)"))
            await s.wait_for(lambda: s.codes("agent/graph.py") == [])
            assert (project / "agent" / "payments.py").read_text() == helper  # nothing was written
            # and the effect comes back: so do they
            s.change("agent/payments.py", helper)
            await s.wait_for(lambda: sorted(s.codes("agent/graph.py")) == ["RA101", "RA106"])
            assert await s.shutdown() == 0

    run(scenario())


def test_quick_fix_suppression_and_hover(project: Path) -> None:
    async def scenario() -> None:
        async with _session(project) as s:
            graph = s.open("agent/graph.py")
            await s.wait_for(lambda: sorted(s.codes("agent/graph.py")) == ["RA101", "RA106"])
            text = (project / "agent" / "graph.py").read_text()
            ra106 = next(d for d in s.diagnostics[graph] if d.code == "RA106")

            hover = await s.client.text_document_hover_async(
                lsp.HoverParams(lsp.TextDocumentIdentifier(graph), ra106.range.start)
            )
            assert hover is not None and isinstance(hover.contents, lsp.MarkupContent)
            assert (
                "**RA106**" in hover.contents.value and "# RA106 durability-exit" in hover.contents.value
            )  # explain's text
            assert "## Fix" in hover.contents.value

            actions = await s.client.text_document_code_action_async(
                lsp.CodeActionParams(
                    lsp.TextDocumentIdentifier(graph), ra106.range, lsp.CodeActionContext(diagnostics=[ra106])
                )
            )
            assert actions is not None
            fixes = [a for a in actions if isinstance(a, lsp.CodeAction) and a.title.startswith("Fix RA106")]
            assert len(fixes) == 1 and fixes[0].is_preferred and "unsafe" not in fixes[0].title
            assert fixes[0].edit is not None and fixes[0].edit.changes is not None
            fixed = apply_edits(text, list(fixes[0].edit.changes[graph]))
            assert 'durability="sync"' in fixed and 'durability="exit"' not in fixed
            s.change("agent/graph.py", fixed)
            await s.wait_for(lambda: s.codes("agent/graph.py") == ["RA101"])

            ra101 = s.diagnostics[graph][0]
            actions = await s.client.text_document_code_action_async(
                lsp.CodeActionParams(
                    lsp.TextDocumentIdentifier(graph), ra101.range, lsp.CodeActionContext(diagnostics=[ra101])
                )
            )
            assert actions is not None
            suppress = next(
                a for a in actions if isinstance(a, lsp.CodeAction) and a.title == "Suppress RA101 on this line"
            )
            assert suppress.edit is not None and suppress.edit.changes is not None
            suppressed = apply_edits(fixed, list(suppress.edit.changes[graph]))
            assert '    charge_card(state["amount"])  # resume-audit: ignore[RA101]\n' in suppressed
            s.change("agent/graph.py", suppressed)
            # RA101 is gone; RA103, which RA101 covered at the same call (one finding per
            # location), now shows -- as `resume-audit scan` reports this text
            await s.wait_for(lambda: s.codes("agent/graph.py") == ["RA103"])
            assert await s.shutdown() == 0

    run(scenario())


def test_bad_buffers_and_files_do_not_stop_the_server(project: Path) -> None:
    # a file that is not text, on disk from the start: reported on itself, the rest is scanned
    (project / "agent" / "blob.py").write_bytes(b"from langgraph.graph import StateGraph\n\xff\xfe\x00\x81 binary\n")

    async def scenario() -> None:
        async with _session(project) as s:
            graph = s.open("agent/graph.py")
            await s.wait_for(lambda: sorted(s.codes("agent/graph.py")) == ["RA101", "RA106"])
            await s.wait_for(lambda: s.codes("agent/blob.py") == ["decode-error"])
            text = (project / "agent" / "graph.py").read_text()

            s.change("agent/graph.py", text + "\ndef broken(:\n")
            await s.wait_for(lambda: s.codes("agent/graph.py") == ["parse-error"])
            broken = s.diagnostics[graph][0]
            assert broken.range.start.line == 32
            # the log is its own notification: it may arrive just after the diagnostics
            await s.wait_for(lambda: any("parse-error" in line and "graph.py" in line for line in s.logs))

            s.change("agent/graph.py", text + "\n" + "x = 1\n" * 900_000)  # 5.2 MB: over the size limit
            await s.wait_for(lambda: s.codes("agent/graph.py") == ["skipped"])

            # still serving: a request is answered, and the good text is analysed again
            hover = await s.client.text_document_hover_async(
                lsp.HoverParams(lsp.TextDocumentIdentifier(graph), lsp.Position(0, 0))
            )
            assert hover is None
            s.change("agent/graph.py", text)
            await s.wait_for(lambda: sorted(s.codes("agent/graph.py")) == ["RA101", "RA106"])
            assert await s.shutdown() == 0

    run(scenario())


def test_files_and_configuration_changed_outside_the_editor(project: Path) -> None:
    async def scenario() -> None:
        async with _session(project) as s:
            s.open("agent/graph.py")
            await s.wait_for(lambda: sorted(s.codes("agent/graph.py")) == ["RA101", "RA106"])

            # pyproject.toml deselects RA106 (an edit outside the editor, reported by its watcher)
            pyproject = project / "pyproject.toml"
            pyproject.write_text(pyproject.read_text().replace("ignore = []", 'ignore = ["RA106"]'))
            s.client.workspace_did_change_watched_files(
                lsp.DidChangeWatchedFilesParams([lsp.FileEvent(pyproject.as_uri(), lsp.FileChangeType.Changed)])
            )
            await s.wait_for(lambda: s.codes("agent/graph.py") == ["RA101"])

            # a formatter or a checkout rewrites the helper on disk (not open in the editor)
            payments = project / "agent" / "payments.py"
            payments.write_text(payments.read_text().replace(EFFECT, "print(amount)"))
            s.client.workspace_did_change_watched_files(
                lsp.DidChangeWatchedFilesParams([lsp.FileEvent(payments.as_uri(), lsp.FileChangeType.Changed)])
            )
            await s.wait_for(lambda: s.codes("agent/graph.py") == [])
            assert await s.shutdown() == 0

    run(scenario())


def test_a_crashing_rule_is_logged_with_its_file_and_the_others_still_report(project: Path) -> None:
    # the server as installed, with one rule broken on purpose before it starts
    command = [
        sys.executable,
        "-c",
        "from resume_audit.rules.ra106_durability_exit import DurabilityExit\n"
        "def broken(self, ctx):\n    raise RuntimeError('rule bug')\n"
        "DurabilityExit.check = broken\n"
        "from resume_audit.server.main import serve\nraise SystemExit(serve())\n",
    ]

    async def scenario() -> None:
        async with _session(project, command=command) as s:
            s.open("agent/graph.py")
            await s.wait_for(lambda: sorted(map(str, s.codes("agent/graph.py"))) == ["RA101", "internal-error"])
            # the log is its own notification: it may arrive just after the diagnostics
            await s.wait_for(lambda: any("agent/graph.py" in line and "RA106 failed" in line for line in s.logs))
            assert await s.shutdown() == 0

    run(scenario())


def test_exit_without_shutdown_ends_the_server_with_1(project: Path) -> None:
    async def scenario() -> None:
        async with _session(project) as s:
            s.open("agent/graph.py")
            await s.wait_for(lambda: bool(s.codes("agent/graph.py")))
            s.client.exit(None)
            server = s.client._server
            assert server is not None
            assert await asyncio.wait_for(server.wait(), 20) == 1

    run(scenario())


def test_indexing_with_the_scans_process_pools(tmp_path: Path) -> None:
    # enough files that the scan reads and analyses them in worker processes, forked while the
    # protocol thread waits on stdin (they once hung there, on the stream's lock)
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "benchmarks"))
    from synthetic import generate

    root = tmp_path / "tree"
    agents = generate(root, files=1200, agent_share=0.03)
    agent = sorted(agents)[0].relative_to(root).as_posix()

    async def scenario() -> None:
        async with ServerSession(root, env={"XDG_CACHE_HOME": str(tmp_path / "cache")}) as s:
            s.open(agent)
            await s.wait_for(lambda: "RA101" in s.codes(agent), timeout=180)
            cold: dict[str, list[str]] = {}
            for finding in scan_api([root], root=root):
                cold.setdefault((root / finding.span.path).resolve().as_uri(), []).append(finding.rule_id)
            expected = {uri: sorted(ids) for uri, ids in cold.items()}

            def published() -> dict[str, list[str]]:
                return {uri: sorted(map(str, codes)) for uri, codes in s.codes().items() if codes}  # type: ignore[union-attr]

            try:
                await s.wait_for(lambda: published() == expected, timeout=30)
            except AssertionError:
                assert published() == expected  # (the difference, shown)
            assert await s.shutdown() == 0

    run(scenario())
