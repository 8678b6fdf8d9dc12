"""The pytest plugin, tested the way pytest tests plugins: ``pytester`` runs a small test suite that uses it.

Nothing is mocked: each inner suite sweeps real LangGraph graphs (copies of
``fixtures/dynamic/langgraph/``) in real child processes, or scans real files.
The plugin is not named anywhere in the inner suites -- it comes from the
``pytest11`` entry point, as it does for a user. Sweeps are restricted to the
cells a test needs so the whole module stays fast.
"""

from __future__ import annotations

# Every resume_audit module is imported before pytester snapshots ``sys.modules``: the in-process inner runs
# then share them -- one fork server for every sweep, one ``resume_audit.dynamic.child.main.main`` to pickle for it,
# one ResumeContractError class -- instead of re-importing them per run and pickling a stale function.
import importlib
import multiprocessing.forkserver  # noqa: F401
import multiprocessing.popen_forkserver  # noqa: F401
import pkgutil
import re
import time
import uuid
from pathlib import Path

import pytest

import resume_audit
from resume_audit.api import ScanRequest, run_scan
from resume_audit.dynamic.parent.runner import process_table

# (resume_audit.dynamic and resume_audit.rules live outside auditor/ in the repository: walk each package's own path)
for _pkg in ("resume_audit", "resume_audit.dynamic", "resume_audit.rules"):
    for _mod in pkgutil.walk_packages(importlib.import_module(_pkg).__path__, f"{_pkg}."):
        if not _mod.name.endswith("__main__"):
            importlib.import_module(_mod.name)

pytest_plugins = ["pytester"]

REPO = Path(__file__).resolve().parents[1]
GRAPHS = REPO / "fixtures" / "dynamic" / "langgraph"
RA101_HAZARD = REPO / "fixtures" / "static" / "ra101" / "hazard_refund_loop.py"

#: pins the inner run's rootdir to the pytester directory
INI = "[pytest]\n"

SHOP_TOOLS = '''
def charge_card(order_id: int, amount: int, *, idempotency_key: str | None = None) -> str:
    """The payment provider; deduplicates by idempotency_key when one is sent."""
    return f"ch_{order_id}_{amount}"
'''

SHOP_GRAPH = """
from typing import TypedDict

from langgraph.config import get_config
from langgraph.graph import END, START, StateGraph
from langgraph.types import interrupt

from shop.tools import charge_card


class Order(TypedDict, total=False):
    order_id: int
    approved: bool
    charge_id: str


def review(state: Order) -> dict:
    return {"approved": interrupt({"approve order": state["order_id"]}) == "approve"}


def charge(state: Order) -> dict:
    return {"charge_id": charge_card(state["order_id"], 40)}


def charge_keyed(state: Order) -> dict:
    thread_id = get_config()["configurable"]["thread_id"]
    return {"charge_id": charge_card(state["order_id"], 40, idempotency_key=f"{thread_id}:charge")}


def _build(checkpointer, charge_node):
    g = StateGraph(Order)
    g.add_node("review", review)
    g.add_node("charge", charge_node)
    g.add_edge(START, "review")
    g.add_edge("review", "charge")
    g.add_edge("charge", END)
    return g.compile(checkpointer=checkpointer)


def build_graph(checkpointer):
    return _build(checkpointer, charge)


def build_keyed_graph(checkpointer):
    return _build(checkpointer, charge_keyed)
"""


@pytest.fixture
def project(pytester: pytest.Pytester) -> pytest.Pytester:
    """A user's project: the bundled dynamic fixture graphs under graphs/, a small `shop` package."""
    pytester.makeini(INI)
    graphs = pytester.mkdir("graphs")
    for name in ("order_approval.py", "keyed_effect.py"):
        (graphs / name).write_text((GRAPHS / name).read_text(encoding="utf-8"), encoding="utf-8")
    shop = pytester.mkdir("shop")
    (shop / "__init__.py").write_text("", encoding="utf-8")
    (shop / "tools.py").write_text(SHOP_TOOLS, encoding="utf-8")
    (shop / "graph.py").write_text(SHOP_GRAPH, encoding="utf-8")
    pytester.mkdir("tests")
    return pytester


def _write_test(pytester: pytest.Pytester, name: str, source: str) -> None:
    # tests/ has no __init__.py: the rootdir is not put on sys.path by pytest, so module targets
    # (`shop.graph:...`) resolve only because the plugin roots sweeps at the rootdir
    (pytester.path / "tests" / name).write_text(source, encoding="utf-8")


# -- the fixture --------------------------------------------------------------------------------------
def test_a_keyed_effect_comes_out_clean(project: pytest.Pytester) -> None:
    _write_test(
        project,
        "test_keyed.py",
        """
import pytest
from resume_audit import ResumeContractError


def test_keyed_charge_is_exactly_once(resume_audit):
    report = resume_audit.crash_sweep(
        "graphs/keyed_effect.py:builder", effects=["keyed_effect:charge_card"],
        input={"order_id": 3}, resume=["approve"], cells=["crash", "stray", "concurrent", "fork"])
    report.assert_exactly_once()
    report.assert_conformant("EO", "CO", "PC")
    assert resume_audit.report is report
    # stock LangGraph still serves a fork the first answer: FD fails, with its own witness
    with pytest.raises(ResumeContractError) as info:
        report.assert_conformant("FD")
    text = str(info.value)
    assert "RA703" in text and 'sent:        "approve", "reject"' in text and 'served:      "approve", "approve"' in text
""",
    )
    result = project.runpytest("-q")
    result.assert_outcomes(passed=1)


def test_a_duplicate_charge_fails_with_the_witness(project: pytest.Pytester) -> None:
    _write_test(
        project,
        "test_order.py",
        """
def test_order_is_charged_once(resume_audit):
    report = resume_audit.crash_sweep(
        "graphs/order_approval.py:build_graph", effects=["order_approval:charge_card"],
        input={"order_id": 7}, resume=["approve"], cells=["crash"])
    report.assert_exactly_once()
""",
    )
    result = project.runpytest("-q")
    result.assert_outcomes(failed=1)
    out = result.stdout.str()
    # the failing line of the test, then the witness as pytest prints an assertion: no repr dump
    result.stdout.fnmatch_lines(
        [
            ">       report.assert_exactly_once()",
            "E       resume_audit.ResumeContractError: resume contract broken by graphs/order_approval.py:build_graph: exactly-once*",
            "E       1 violation (sqlite backend, langgraph *)",
            "E       RA701 [[]EO[]] an effect fired again after a crash and a resume",
            "E         at graphs/order_approval.py:40, node `charge`",
            "E         kill point:  resume 1: after effect order_approval.charge_card in node charge",
            "E         resumed by:  invoke(None) from the durable checkpoint",
            "E         effect:      order_approval.charge_card  1 -> 2",
            "E         - 1 call   (uninterrupted run)",
            "E         + 2 calls  (after the crash and the resume)",
            "E         fix: Make the effect idempotent*",
        ]
    )
    assert "Finding(" not in out and "witness=" not in out and "{'kill_point'" not in out
    assert "dynamic/assertions.py" not in out  # the helper's own frames are hidden
    # the cell table is attached to the failed test's report
    result.stdout.fnmatch_lines(["*Captured resume-audit call*", "*fail RA701*", "13 cells: 12 pass, 1 fail*"])
    result.stdout.fnmatch_lines(["FAILED tests/test_order.py::test_order_is_charged_once - resume_audit.Resume*"])


def _descendants(pid: int) -> dict[int, str]:
    """Live (non-zombie) descendants of ``pid`` -> their command line."""
    table = process_table(cmdlines=True)
    out: dict[int, str] = {}
    frontier = [pid]
    while frontier:
        p = frontier.pop()
        for entry in table:
            if entry.ppid == p and entry.pid not in out:
                out[entry.pid] = entry.cmdline if entry.state != "Z" else "<zombie>"
                frontier.append(entry.pid)
    return {p: c for p, c in out.items() if c != "<zombie>"}


def _fork_servers() -> set[int]:
    from multiprocessing import forkserver

    pid = getattr(forkserver._forkserver, "_forkserver_pid", None)
    return {pid} if pid else set()


def _running(marker: str) -> list[int]:
    return [p.pid for p in process_table(cmdlines=True) if marker in p.cmdline and p.state != "Z"]


def test_a_hanging_graph_times_out_cleanly(project: pytest.Pytester) -> None:
    marker = f"resume-audit-hang-{uuid.uuid4().hex}"
    (project.path / "graphs" / "stalls.py").write_text(
        f'''
import subprocess
import sys
import threading
from typing import TypedDict

from langgraph.graph import END, START, StateGraph


class S(TypedDict, total=False):
    done: bool


def stall(state: S) -> dict:
    # a worker that would outlive the run, then a wait that never ends
    subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)", "{marker}"])
    threading.Event().wait()
    return {{"done": True}}


def build(checkpointer):
    g = StateGraph(S)
    g.add_node("stall", stall)
    g.add_edge(START, "stall")
    g.add_edge("stall", END)
    return g.compile(checkpointer=checkpointer)
''',
        encoding="utf-8",
    )
    _write_test(
        project,
        "test_stall.py",
        """
def test_stalling_graph(resume_audit):
    resume_audit.crash_sweep("graphs/stalls.py:build", timeout=2)
""",
    )
    # A child's timeout runs from its start, and the first start of a session also boots the fork server
    # (imports LangGraph): boot it now, so the 2 s go to the graph and it gets as far as spawning its worker.
    resume_audit.crash_sweep(
        str(GRAPHS / "typed_states.py") + ":typeddict_graph", effects=[], input={"n": 1}, resume=[], cells=["validity"]
    )
    started = time.monotonic()
    result = project.runpytest("-q")
    elapsed = time.monotonic() - started
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        [
            "E       resume_audit.SweepIncomplete: crash-sweep of graphs/stalls.py:build could not run: "
            "the uninterrupted run of graphs/stalls.py:build did not complete (timed out); nothing was swept",
        ]
    )
    # the report attached to the failure says what happened: the worker was spawned, the run timed out
    result.stdout.fnmatch_lines(
        [
            "*Captured resume-audit call*",
            "*dry-run*uninterrupted run*error*",
            "note the graph spawned a child process*",
            "note a dry process exceeded the 'run' timeout and was killed with its process group",
        ]
    )
    assert elapsed < 30, f"the timed-out sweep took {elapsed:.1f}s"
    # nothing the graph started survives: not the sweep's children, not the worker the graph spawned
    assert _running(marker) == []
    leftovers = {p: cmd for server in _fork_servers() for p, cmd in _descendants(server).items()}
    assert leftovers == {}, f"processes left behind: {leftovers}"


# -- the marker ---------------------------------------------------------------------------------------
def test_the_marker_sweeps_a_graph_factory_and_fails_with_the_witness(project: pytest.Pytester) -> None:
    _write_test(
        project,
        "test_marked.py",
        """
import pytest

ORDER = dict(effects=["shop.tools:charge_card"], input={"order_id": 7}, resume=["approve"], cells=["crash"])


@pytest.mark.resume_contract("shop.graph:build_keyed_graph", **ORDER)
def test_keyed_checkout(resume_audit):
    # the marker's sweep ran before the body, and passed
    assert resume_audit.report is not None and resume_audit.report.findings == []


@pytest.mark.resume_contract("shop.graph:build_graph", properties=("EO",), **ORDER)
def test_unkeyed_checkout():
    raise AssertionError("BODY-RAN: the marker must fail the test first")
""",
    )
    result = project.runpytest("-q", "--strict-markers")
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(
        [
            "*_ test_unkeyed_checkout _*",
            "tests/test_marked.py:13: @pytest.mark.resume_contract('shop.graph:build_graph')",
            "E   resume_audit.ResumeContractError: resume contract broken by shop.graph:build_graph: EO (effect exactly-once)",
            "E   RA701 [[]EO[]] an effect fired again after a crash and a resume",
            "E     at shop/graph.py:*, node `charge`",
            "E     kill point:  resume 1: after effect shop.tools.charge_card in node charge",
            "E     effect:      shop.tools.charge_card  1 -> 2",
            "E     - 1 call   (uninterrupted run)",
            "E     + 2 calls  (after the crash and the resume)",
        ]
    )
    out = result.stdout.str()
    assert "BODY-RAN" not in out
    assert "All traceback entries are hidden" not in out and "pytest_plugin.py" not in out
    result.stdout.fnmatch_lines(["FAILED tests/test_marked.py::test_unkeyed_checkout - resume_audit.Resume*"])


def test_the_marker_is_registered_and_checks_its_arguments(project: pytest.Pytester) -> None:
    _write_test(
        project,
        "test_bad_marker.py",
        """
import pytest


@pytest.mark.resume_contract("shop.graph:build_graph", properties=("XY",))
def test_unknown_property():
    pass


@pytest.mark.resume_contract("shop.graph:build_graph", efects=["shop.tools:charge_card"])
def test_misspelt_option():
    pass
""",
    )
    result = project.runpytest("-q", "--strict-markers")
    result.assert_outcomes(failed=2)
    result.stdout.fnmatch_lines(["*unknown contract property or dynamic rule 'XY'*"])
    result.stdout.fnmatch_lines(["*@pytest.mark.resume_contract: *efects*"])
    help_ = project.runpytest("--markers")
    help_.stdout.fnmatch_lines(["@pytest.mark.resume_contract(target, *"])


# -- --resume-audit-scan ------------------------------------------------------------------------------
@pytest.fixture
def scanned(pytester: pytest.Pytester) -> pytest.Pytester:
    """A project whose package has one RA101 hazard, and one passing test."""
    pytester.makeini(INI)
    shop = pytester.mkdir("shop")
    (shop / "__init__.py").write_text("", encoding="utf-8")
    hazard = RA101_HAZARD.read_text(encoding="utf-8").replace("  # expect: RA101", "")
    (shop / "refunds.py").write_text(hazard, encoding="utf-8")
    pytester.mkdir("tests")
    (pytester.path / "tests" / "test_ok.py").write_text("def test_ok():\n    pass\n", encoding="utf-8")
    return pytester


def _ra101_line() -> int:
    text = RA101_HAZARD.read_text(encoding="utf-8").splitlines()
    return next(i for i, line in enumerate(text, start=1) if "expect: RA101" in line)


def test_scan_fails_the_session_on_a_new_finding_and_names_its_location(scanned: pytest.Pytester) -> None:
    (scanned.path / "tests" / "test_findings.py").write_text(
        """
def test_the_fixture_scans_the_tested_package(resume_audit):
    findings = resume_audit.scan()  # what --resume-audit-scan scans, paths relative to the rootdir
    assert [(f.rule_id, f.span.path) for f in findings] == [("RA101", "shop/refunds.py")]
    assert resume_audit.scan("shop", ignore=["RA1"]) == []
""",
        encoding="utf-8",
    )
    result = scanned.runpytest("-q", "--resume-audit-scan")
    result.assert_outcomes(passed=2)
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.fnmatch_lines(
        [
            "*= resume-audit scan =*",
            f"shop/refunds.py:{_ra101_line()}:*: RA101 error [[]EO/PC[]] httpx.Client.post runs before interrupt()*",
            "resume-audit scan of shop: 1 new finding, 1 at or above warning -- fails the session",
        ]
    )
    # an explicit path, as --resume-audit-scan=PATH
    single = scanned.runpytest("-q", "--resume-audit-scan=shop/refunds.py", "tests/test_ok.py")
    assert single.ret == pytest.ExitCode.TESTS_FAILED
    single.stdout.fnmatch_lines(["resume-audit scan of shop/refunds.py: 1 new finding*"])
    # without the option nothing is scanned
    plain = scanned.runpytest("-q", "tests/test_ok.py")
    assert plain.ret == pytest.ExitCode.OK and "resume-audit scan" not in plain.stdout.str()


def test_a_baseline_silences_known_findings(scanned: pytest.Pytester) -> None:
    baseline = scanned.path / ".resume-audit-baseline.json"
    run_scan(ScanRequest(paths=[scanned.path / "shop"], root=scanned.path, write_baseline=baseline))
    result = scanned.runpytest("-q", "--resume-audit-scan", f"--resume-audit-baseline={baseline.name}")
    assert result.ret == pytest.ExitCode.OK
    result.stdout.fnmatch_lines(
        ["resume-audit scan of shop: 0 new findings, 0 at or above warning, 1 in the baseline -- passes"]
    )
    # a new hazard beside the baselined one fails the session again, and only it is listed
    hazard = RA101_HAZARD.read_text(encoding="utf-8").replace("  # expect: RA101", "")
    (scanned.path / "shop" / "returns.py").write_text(hazard, encoding="utf-8")
    again = scanned.runpytest("-q", "--resume-audit-scan", f"--resume-audit-baseline={baseline.name}")
    assert again.ret == pytest.ExitCode.TESTS_FAILED
    again.stdout.fnmatch_lines(
        [
            f"shop/returns.py:{_ra101_line()}:*: RA101 *",
            "resume-audit scan of shop: 1 new finding, 1 at or above warning, 1 in the baseline -- fails the session",
        ]
    )
    assert "shop/refunds.py:" not in again.stdout.str()


def test_scan_honours_the_projects_configuration(scanned: pytest.Pytester) -> None:
    scanned.makepyprojecttoml('[tool.resume-audit]\nignore = ["RA1"]\n')
    result = scanned.runpytest("-q", "--resume-audit-scan")
    assert result.ret == pytest.ExitCode.OK
    result.stdout.fnmatch_lines(["resume-audit scan of shop: 0 new findings*-- passes"])
    # a typo in the configuration stops the run before any test, as the CLI exits 2
    scanned.makepyprojecttoml('[tool.resume-audit]\nignore = ["RA9999"]\n')
    bad = scanned.runpytest("-q", "--resume-audit-scan")
    assert bad.ret == pytest.ExitCode.USAGE_ERROR
    bad.stderr.fnmatch_lines(["*tool.resume-audit.ignore: unknown rule id 'RA9999'*"])


def test_scan_fail_on_never_reports_without_failing(scanned: pytest.Pytester) -> None:
    result = scanned.runpytest("-q", "--resume-audit-scan", "--resume-audit-fail-on=never")
    assert result.ret == pytest.ExitCode.OK
    assert re.search(r"shop/refunds\.py:\d+:\d+: RA101", result.stdout.str())


def test_audit_from_a_test(pytester: pytest.Pytester) -> None:
    """`resume_audit.audit(path)`: the same report as `resume-audit audit`, for assertions."""
    import shutil

    pytester.makeini(INI)
    shutil.copytree(
        Path(__file__).resolve().parent.parent / "fixtures" / "audit" / "helpdesk", pytester.path / "helpdesk"
    )
    pytester.mkdir("tests")
    _write_test(
        pytester,
        "test_desk.py",
        """
from resume_audit.findings import Confirmation


def test_the_refund_desk(resume_audit):
    report = resume_audit.audit("helpdesk", cells=["crash", "interrupt"])
    verdicts = {(f.rule_id, f.span.path.split("/")[-1], f.confirmation.value) for f in report.findings
                if f.confirmation is not Confirmation.DYNAMIC_ONLY}
    assert ("RA103", "refunds.py", "confirmed") in verdicts
    assert ("RA103", "keyed_refunds.py", "not-reproduced") in verdicts
    assert [s.entry.target for s in report.entries if not s.ran] == ["helpdesk.reports:build_report_graph"]
""",
    )
    result = pytester.runpytest("-q")
    result.assert_outcomes(passed=1)


def test_a_project_with_its_own_auditor_package_runs_pytest(tmp_path: Path) -> None:
    """The plugin is auto-loaded into every pytest run of a user's environment: its package must not
    be named like something a user's project has (it was ``auditor.pytest_plugin``, and a project with
    its own ``auditor/`` package could not start pytest at all)."""
    import subprocess
    import sys

    (tmp_path / "auditor").mkdir()
    (tmp_path / "auditor" / "__init__.py").write_text('NAME = "the user\'s own"\n')
    (tmp_path / "pytest.ini").write_text(INI)
    (tmp_path / "test_own.py").write_text(
        "import auditor\n\n\n"
        "def test_the_projects_own_package(pytestconfig):\n"
        '    assert auditor.NAME == "the user\'s own"\n'
        "    assert pytestconfig.pluginmanager.hasplugin('resume_audit')\n"
    )
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "test_own.py"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert "1 passed" in proc.stdout
