"""The resume-audit pytest plugin: keep the resume contract in your own test suite.

Registered through the ``pytest11`` entry point, so installing resume-audit is
enough (no conftest). It offers:

- the ``resume_audit`` fixture::

      def test_checkout_charges_once(resume_audit):
          report = resume_audit.crash_sweep(
              "shop.graph:build_graph", effects=["shop.tools:charge_card"],
              input={"order_id": 7}, resume=["approve"])
          report.assert_exactly_once()

  Targets and effects are resolved as ``resume-audit crash-sweep`` resolves
  them, relative to the test run's rootdir instead of the current directory: a
  file target ``path/to/graph.py:attr`` under the rootdir, a module target
  ``package.module:attr`` from the rootdir and then the test process's
  ``sys.path``. Each sweep's cell table is attached to the test's report (shown
  under "Captured resume-audit call" when the test fails).

- the marker ``@pytest.mark.resume_contract(target, effects=..., input=...,
  resume=..., properties=("EO", "CO"), **sweep_options)``: sweeps the graph
  before the test body runs and fails the test with the witness when the
  swept graph breaks one of ``properties`` (default ``("EO", "CO")``: exactly
  once; ``"all"`` for the whole contract). Identical marker sweeps run once per
  session.

- ``--resume-audit-scan[=PATH]`` (repeatable): statically scans PATH (default:
  the ``resume_audit_scan_paths`` ini option, else ``src/`` or the rootdir's
  top-level packages) at the end of the session, honouring ``[tool.resume-audit]``
  and ``--resume-audit-baseline FILE``, lists the findings with their locations in
  the terminal summary and fails the session on findings at or above
  ``fail-on``. Write ``--resume-audit-scan=PATH``: a bare following word is taken
  as the PATH.

Nothing heavy is imported until a sweep or a scan actually runs.
"""

from __future__ import annotations

import inspect
import json
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any, Sequence

import pytest

if TYPE_CHECKING:  # pragma: no cover
    from resume_audit.api import ScanOutcome
    from resume_audit.audit import AuditReport
    from resume_audit.dynamic.report import SweepReport
    from resume_audit.findings import Finding

MARKER = "resume_contract"
#: what the marker checks when it names no ``properties``: exactly once (RA701, RA704, RA705)
DEFAULT_PROPERTIES: tuple[str, ...] = ("EO", "CO")
DEFAULT_TIMEOUT = 60.0
#: ``--resume-audit-scan`` given without ``=PATH``
_DEFAULT_PATHS = ""

#: ``stub`` not given (``None`` is a legitimate stub value: a recorder returning ``None``)
_NO_STUB: Any = type("NoStubGiven", (), {"__repr__": lambda self: "<no stub>"})()

_REPORTS_KEY = pytest.StashKey[list]()
_MARKER_CACHE_KEY = pytest.StashKey[dict]()


# -- options and registration ----------------------------------------------------------------------
def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("resume-audit", "resume-audit: the resume contract of agent graphs")
    group.addoption(
        "--resume-audit-scan",
        action="append",
        nargs="?",
        const=_DEFAULT_PATHS,
        default=None,
        metavar="PATH",
        dest="resume_audit_scan",
        help="Statically scan PATH (repeatable; default: ini resume_audit_scan_paths, else src/ or the rootdir's "
        "packages) after the tests and fail the session on findings at or above fail-on. "
        "Use the --resume-audit-scan=PATH form.",
    )
    group.addoption(
        "--resume-audit-baseline",
        metavar="FILE",
        default=None,
        dest="resume_audit_baseline",
        help="With --resume-audit-scan: report only findings not recorded in this baseline "
        "(written by `resume-audit scan . --write-baseline FILE`).",
    )
    group.addoption(
        "--resume-audit-fail-on",
        choices=("error", "warning", "note", "never"),
        default=None,
        dest="resume_audit_fail_on",
        help="With --resume-audit-scan: the severity that fails the session [default: fail-on from "
        "[tool.resume-audit], else warning].",
    )
    group.addoption(
        "--resume-audit-timeout",
        type=float,
        default=None,
        metavar="SECONDS",
        dest="resume_audit_timeout",
        help=f"Seconds each crash-sweep child may run [default: ini resume_audit_timeout, else {DEFAULT_TIMEOUT:g}].",
    )
    parser.addini(
        "resume_audit_scan_paths",
        type="paths",
        default=[],
        help="paths --resume-audit-scan scans when given without =PATH (relative to the ini file)",
    )
    parser.addini(
        "resume_audit_baseline", default="", help="baseline file for --resume-audit-scan (relative to the rootdir)"
    )
    parser.addini(
        "resume_audit_timeout", default="", help=f"seconds each crash-sweep child may run (default {DEFAULT_TIMEOUT:g})"
    )


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        f"{MARKER}(target, *, effects=(), input={{}}, resume=(), properties=('EO', 'CO'), **sweep_options): "
        "crash-sweep the graph `target` (path/to/file.py:attr or package.module:attr) before the test and fail it "
        'with the witness if the graph breaks one of the contract properties ("all" for every property).',
    )
    config.stash[_MARKER_CACHE_KEY] = {}
    scan_paths = config.getoption("resume_audit_scan")
    if scan_paths is not None and not hasattr(config, "workerinput"):  # the xdist controller scans, not each worker
        config.pluginmanager.register(StaticScan(config, scan_paths), "resume-audit-scan")


def _timeout(config: pytest.Config) -> float:
    value = config.getoption("resume_audit_timeout")
    if value is None:
        raw = str(config.getini("resume_audit_timeout") or "").strip()
        try:
            value = float(raw) if raw else DEFAULT_TIMEOUT
        except ValueError:
            raise pytest.UsageError(f"resume_audit_timeout must be a number of seconds, not {raw!r}") from None
    if value <= 0:
        raise pytest.UsageError("--resume-audit-timeout must be positive")
    return float(value)


# -- the fixture ------------------------------------------------------------------------------------
class ResumeAudit:
    """What the ``resume_audit`` fixture gives a test: sweeps and scans rooted at the test run's rootdir."""

    def __init__(self, node: pytest.Item, config: pytest.Config) -> None:
        self._node = node
        self._config = config
        #: targets, effects and scan paths are resolved against this directory
        self.root: Path = Path(config.rootpath)
        #: per-child timeout of sweeps started here (``--resume-audit-timeout`` / ini ``resume_audit_timeout``)
        self.timeout: float = _timeout(config)

    @property
    def reports(self) -> list["SweepReport"]:
        """Every sweep this test ran so far (the marker's first, if any)."""
        return self._node.stash.setdefault(_REPORTS_KEY, [])

    @property
    def report(self) -> "SweepReport | None":
        """The last sweep this test ran (with ``@pytest.mark.resume_contract``: the marker's)."""
        return self.reports[-1] if self.reports else None

    def crash_sweep(
        self,
        target: str,
        *,
        allow_incomplete: bool = False,
        **options: Any,
    ) -> "SweepReport":
        """Crash-sweep ``target`` (see :func:`resume_audit.crash_sweep`) and return the :class:`SweepReport`.

        ``options`` are the fields of :class:`resume_audit.dynamic.request.SweepRequest` -- the same
        the command line and the Python API take (``effects``, ``input``, ``resume``, ``stub``,
        ``stubs``, ``stub_llm``, ``cells``, ``framework``, ``crash_modes``, ``saver``, ``shard`` ...),
        so nothing the CLI can do is missing here. ``input`` defaults to ``{}`` as on the command
        line; ``timeout`` to the session's (60 s unless configured); paths are relative to the
        rootdir. ``cells`` restricts the probes (``"crash"``, ``"parked"``, ``"write-order"``,
        ``"fork"``, ``"stray"``, ``"concurrent"``, ``"validity"``) to keep a test fast. A sweep whose
        uninterrupted run does not complete (a hang past the timeout, an exception, ``sys.exit``)
        raises :class:`resume_audit.SweepIncomplete`, as the CLI exits 2, unless ``allow_incomplete=True``.
        """
        __tracebackhide__ = True
        from resume_audit.dynamic.parent.sweep import NO_STUB, crash_sweep

        if options.get("stub", NO_STUB) is _NO_STUB:
            options.pop("stub", None)
        if options.get("input") is None:
            options["input"] = {}
        if options.get("timeout") is None:
            options["timeout"] = self.timeout
        options.setdefault("cwd", self.root)
        report = crash_sweep(target, **options)
        self._record(report)
        if not allow_incomplete:
            self._check_complete(report)
        return report

    @staticmethod
    def _check_complete(report: "SweepReport") -> None:
        __tracebackhide__ = True
        from resume_audit.dynamic.assertions import SweepIncomplete

        if not report.complete:
            why = next((n.message for n in reversed(report.notifications)), "the uninterrupted run did not complete")
            raise SweepIncomplete(f"crash-sweep of {report.target} could not run: {why}", report=report)

    def scan(
        self, paths: Sequence[str | os.PathLike[str]] | str | os.PathLike[str] | None = None, **options: Any
    ) -> list["Finding"]:
        """Statically scan ``paths`` (default: what ``--resume-audit-scan`` scans), relative to the rootdir;
        ``options`` as for :func:`resume_audit.scan` (``select``, ``ignore``, ``baseline``, ``config`` ...)."""
        from resume_audit.api import scan

        if paths is None:
            resolved = default_scan_paths(self._config)
        else:
            items = [paths] if isinstance(paths, (str, os.PathLike)) else list(paths)
            resolved = [self.root / p for p in items]
        options.setdefault("root", self.root)
        return scan(resolved, **options)

    def audit(
        self, paths: Sequence[str | os.PathLike[str]] | str | os.PathLike[str] = ".", **options: Any
    ) -> "AuditReport":
        """``resume-audit audit`` on ``paths`` (relative to the rootdir): every finding with its confirmation.

        ``options`` as :class:`resume_audit.audit.AuditRequest` (``select``, ``ignore``, ``timeout``,
        ``live_effects``, ``cells``). Assert on ``report.findings`` (each has ``.confirmation``) or
        ``report.count(Confirmation.CONFIRMED)``.
        """
        from resume_audit.audit import AuditRequest, run_audit

        items = [paths] if isinstance(paths, (str, os.PathLike)) else list(paths)
        options.setdefault("root", self.root)
        return run_audit(AuditRequest(paths=[self.root / p for p in items], **options))

    def _record(self, report: "SweepReport") -> None:
        self.reports.append(report)
        self._node.add_report_section("call", "resume-audit", render_report(report))


@pytest.fixture
def resume_audit(request: pytest.FixtureRequest) -> ResumeAudit:
    """Crash sweeps and static scans of the project under test, rooted at the rootdir.

    ``report = resume_audit.crash_sweep("app.graph:build", effects=["app.tools:charge"],
    input={...}, resume=["approve"])`` then ``report.assert_exactly_once()`` or
    ``report.assert_conformant("FD", "CO")``; ``resume_audit.scan("src")`` for findings.
    """
    return ResumeAudit(request.node, request.config)


def render_report(report: "SweepReport") -> str:
    """The sweep's cell table and summary as plain text (for the test report's sections)."""
    import io

    from rich.console import Console

    buf = io.StringIO()
    report.render(Console(file=buf, width=120, no_color=True, force_terminal=False, highlight=False))
    return buf.getvalue()


# -- the marker -------------------------------------------------------------------------------------
@pytest.hookimpl(tryfirst=True)
def pytest_runtest_call(item: pytest.Item) -> None:
    marker = item.get_closest_marker(MARKER)
    if marker is None:
        return
    __tracebackhide__ = True
    options = dict(marker.kwargs)
    args = list(marker.args)
    target = options.pop("target", None)
    if args:
        target = args.pop(0)
    if not isinstance(target, str) or args:
        pytest.fail(
            f"@pytest.mark.{MARKER} takes one target, 'path/to/file.py:attr' or 'package.module:attr', "
            f"and keyword options; got args={marker.args!r}",
            pytrace=False,
        )
    properties = options.pop("properties", DEFAULT_PROPERTIES)
    if isinstance(properties, str):
        properties = () if properties.lower() == "all" else (properties,)
    elif not properties:
        pytest.fail(
            f"@pytest.mark.{MARKER}(properties=...) names no property; list some, e.g. ('EO', 'CO'), "
            'or write properties="all"',
            pytrace=False,
        )
    from resume_audit.dynamic.assertions import rules_for

    try:
        rules_for(properties)
    except ValueError as exc:
        pytest.fail(f"@pytest.mark.{MARKER}: {exc}", pytrace=False)
    from resume_audit.dynamic.request import SweepRequest

    try:  # the marker's options are SweepRequest's fields (and allow_incomplete)
        inspect.signature(SweepRequest).bind(target, **{k: v for k, v in options.items() if k != "allow_incomplete"})
    except TypeError as exc:
        pytest.fail(f"@pytest.mark.{MARKER}: {exc}", pytrace=False)
    from resume_audit.dynamic.assertions import ResumeContractError
    from resume_audit.dynamic.parent.sweep import SweepUsageError
    from resume_audit.dynamic.target import TargetError

    allow_incomplete = bool(options.pop("allow_incomplete", False))
    audit = ResumeAudit(item, item.config)
    cache = item.config.stash[_MARKER_CACHE_KEY]
    key = json.dumps([target, options], sort_keys=True, default=repr)
    try:
        report = cache.get(key)
        if report is None:
            # identical marker sweeps (a marked class, a module's pytestmark) run once per session
            report = cache[key] = audit.crash_sweep(target, **options, allow_incomplete=True)
        else:
            audit._record(report)
        if not allow_incomplete:
            audit._check_complete(report)
        if tuple(properties) == DEFAULT_PROPERTIES:
            report.assert_exactly_once()
        else:
            report.assert_conformant(*properties)
    except (ResumeContractError, TargetError, SweepUsageError) as exc:
        setattr(exc, "_resume_audit_marker", target)  # reported by pytest_runtest_makereport
        raise


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo) -> Any:
    outcome = yield
    excinfo = call.excinfo
    target = getattr(excinfo.value, "_resume_audit_marker", None) if excinfo is not None else None
    if target is None or call.when != "call" or item.config.getoption("fulltrace", False):
        return
    assert excinfo is not None  # a marker target was read from it
    # The failure comes from the marker, not from a line of the test: show where the marker is and the
    # witness, not a traceback whose every entry is plugin code.
    try:
        from _pytest._code.code import ReprFileLocation, TerminalRepr
    except ImportError:  # pragma: no cover - pytest moved its internals: keep pytest's own report
        return
    path, lineno, _name = item.reportinfo()
    where = _display(Path(item.config.rootpath) / path, Path(item.config.rootpath))
    exc = excinfo.value
    head = f"{type(exc).__module__}.{type(exc).__name__}"
    lines = str(exc).splitlines() or [""]

    class MarkerFailure(TerminalRepr):
        def __init__(self) -> None:
            self.reprcrash = ReprFileLocation(where, (lineno or 0) + 1, f"{head}: {lines[0]}")

        def toterminal(self, tw: Any) -> None:
            tw.line(f"{where}:{(lineno or 0) + 1}: @pytest.mark.{MARKER}({target!r})")
            tw.line("")
            tw.line(f"E   {head}: {lines[0]}", red=True, bold=True)
            for line in lines[1:]:
                tw.line(f"E   {line}".rstrip(), red=True, bold=True)

    outcome.get_result().longrepr = MarkerFailure()


# -- --resume-audit-scan ----------------------------------------------------------------------------
def default_scan_paths(config: pytest.Config) -> list[Path]:
    """The tested package: ini ``resume_audit_scan_paths``; else ``<rootdir>/src``; else the rootdir's
    top-level packages (folders with ``__init__.py`` not named ``test*``); else the rootdir."""
    configured = [Path(p) for p in config.getini("resume_audit_scan_paths")]
    if configured:
        return configured
    root = Path(config.rootpath)
    if (root / "src").is_dir():
        return [root / "src"]
    packages = sorted(
        p
        for p in root.iterdir()
        if p.is_dir() and (p / "__init__.py").is_file() and not p.name.lower().startswith("test")
    )
    return packages or [root]


class StaticScan:
    """``--resume-audit-scan``: one static scan when the session finishes, reported in the terminal summary."""

    def __init__(self, config: pytest.Config, raw_paths: list[str]) -> None:
        self.config = config
        self.root = Path(config.rootpath)
        invocation = Path(config.invocation_params.dir)
        paths: list[Path] = []
        for raw in raw_paths:
            if raw == _DEFAULT_PATHS:
                paths.extend(default_scan_paths(config))
            else:
                paths.append(invocation / raw)
        self.paths = list(dict.fromkeys(paths))
        baseline = config.getoption("resume_audit_baseline")
        if baseline:
            self.baseline: Path | None = invocation / baseline
        else:
            ini = str(config.getini("resume_audit_baseline") or "").strip()
            self.baseline = (self.root / ini) if ini else None
        self.fail_on: str | None = config.getoption("resume_audit_fail_on")
        self.outcome: ScanOutcome | None = None
        self.error: str | None = None
        self.failed = False
        self._validate()

    def request(self):
        from resume_audit.api import ScanRequest

        cache_dir = None
        cache = getattr(self.config, "cache", None)
        if cache is not None:
            try:
                cache_dir = Path(cache.mkdir("resume-audit"))
            except OSError:
                cache_dir = None
        return ScanRequest(
            paths=self.paths, root=self.root, baseline=self.baseline, fail_on=self.fail_on, cache_dir=cache_dir
        )

    def _validate(self) -> None:
        """Bad configuration is a usage error before any test runs, as the CLI exits 2 before scanning."""
        from resume_audit.api import resolve_config
        from resume_audit.config.settings import ConfigError
        from resume_audit.postprocess.baseline import BaselineError, read_baseline

        for p in self.paths:
            if not p.exists():
                raise pytest.UsageError(f"--resume-audit-scan: path does not exist: {p}")
        try:
            resolve_config(self.request())
            if self.baseline is not None:
                read_baseline(self.baseline)
        except (ConfigError, BaselineError) as exc:
            raise pytest.UsageError(f"resume-audit: {exc}") from None

    def pytest_sessionfinish(self, session: pytest.Session, exitstatus: int) -> None:
        if exitstatus in (pytest.ExitCode.INTERRUPTED, pytest.ExitCode.INTERNAL_ERROR, pytest.ExitCode.USAGE_ERROR):
            return
        from resume_audit.api import run_scan

        try:
            self.outcome = run_scan(self.request())
        except Exception as exc:  # reported, and fails the session: a scan that did not run did not pass
            self.error = f"{type(exc).__name__}: {exc}"
        self.failed = self.error is not None or (self.outcome is not None and self.outcome.exit_code != 0)
        if self.failed and session.exitstatus in (pytest.ExitCode.OK, pytest.ExitCode.NO_TESTS_COLLECTED):
            session.exitstatus = pytest.ExitCode.TESTS_FAILED

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        tr = terminalreporter
        if self.error is not None:
            tr.section("resume-audit scan", sep="=", red=True, bold=True)
            tr.line(f"the scan did not run: {self.error}", red=True)
            return
        if self.outcome is None:
            return
        result, config = self.outcome.result, self.outcome.config
        shown = ", ".join(_display(p, self.root) for p in self.paths)
        tr.section("resume-audit scan", sep="=", red=self.failed, green=not self.failed, bold=True)
        for f in result.findings:
            props = "/".join(f.properties)
            tr.write_line(
                f"{f.span.path}:{f.span.start_line}:{f.span.start_col}: {f.rule_id} {f.severity.value} "
                f"[{props}] {' '.join(f.message.split())}"
            )
        for n in result.notifications:
            where = f"{n.path}:{n.line or 1}: " if n.path else ""
            tr.write_line(f"{where}warning: {n.kind.value}: {n.message}", yellow=True)
        threshold = config.fail_threshold()
        counted = result.count_at_or_above(threshold) if threshold is not None else 0
        bits = [f"{len(result.findings)} new finding{'s' if len(result.findings) != 1 else ''}"]
        if threshold is not None:
            bits.append(f"{counted} at or above {threshold.value}")
        if result.baselined:
            bits.append(f"{result.baselined} in the baseline")
        if result.suppressed:
            bits.append(f"{result.suppressed} suppressed")
        verdict = "fails the session" if self.failed else "passes"
        tr.write_line(
            f"resume-audit scan of {shown}: {', '.join(bits)} -- {verdict}",
            red=self.failed,
            green=not self.failed,
            bold=True,
        )
        if result.findings:
            tr.write_line(
                f"explain a rule: resume-audit explain {result.findings[0].rule_id}; adopt on existing code: "
                "resume-audit scan PATH --write-baseline FILE, then --resume-audit-baseline FILE"
            )


def _display(path: Path, root: Path) -> str:
    try:
        rel = path.resolve().relative_to(root.resolve()).as_posix()
        return rel or "."
    except ValueError:
        return str(path)
