"""The scanner never raises, never hangs, and always writes schema-valid SARIF -- on generated
Python (hypothesmith), on mutilated fixtures, and on hostile trees.

CI runs a bounded number of examples; set ``RESUME_AUDIT_FUZZ_EXAMPLES`` for more.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import hypothesmith
import jsonschema
import pytest
from conftest import REPO
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from resume_audit.config.settings import Config
from resume_audit.engine.scan import scan
from resume_audit.reporters.sarif import build_sarif

SCHEMA = json.loads((Path(__file__).parent / "data" / "sarif-schema-2.1.0.json").read_text())
VALIDATOR = jsonschema.Draft4Validator(SCHEMA)
EXAMPLES = int(os.environ.get("RESUME_AUDIT_FUZZ_EXAMPLES", "40"))
FIXTURE_TEXTS = sorted(
    p.read_text(encoding="utf-8") for p in (REPO / "fixtures" / "static").rglob("*.py") if p.stat().st_size > 200
)
FUZZ = settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True)
HEADER = "import requests\nfrom langgraph.types import interrupt, Command\n"


def scan_one(tmp: Path, name: str, data: bytes) -> None:
    """Scan a tree holding one file; the scan must finish and yield valid SARIF."""
    for old in tmp.iterdir():
        old.unlink()
    (tmp / name).write_bytes(data)
    result = scan([tmp], Config(), tmp, jobs=1, time_limit=30)
    VALIDATOR.validate(build_sarif(result))
    for f in result.findings:
        assert f.span.path == name and f.span.start_line >= 1


@FUZZ
@given(source=hypothesmith.from_grammar())
def test_generated_python_never_breaks_the_scan(tmp_path_factory, source: str) -> None:
    scan_one(tmp_path_factory.mktemp("gen"), "gen.py", (HEADER + source).encode("utf-8", "surrogatepass"))


@FUZZ
@given(source=hypothesmith.from_node())
def test_generated_syntax_trees_never_break_the_scan(tmp_path_factory, source: str) -> None:
    scan_one(tmp_path_factory.mktemp("node"), "node.py", (HEADER + source).encode("utf-8", "surrogatepass"))


@st.composite
def mutilated_fixture(draw) -> bytes:
    text = draw(st.sampled_from(FIXTURE_TEXTS)).encode("utf-8")
    op = draw(st.sampled_from(["truncate", "insert", "swap", "nest", "delete"]))
    if op == "truncate":
        return text[: draw(st.integers(0, len(text)))]
    if op == "insert":
        at = draw(st.integers(0, len(text)))
        return text[:at] + draw(st.binary(min_size=1, max_size=8)) + text[at:]
    if op == "delete":
        a = draw(st.integers(0, len(text)))
        return text[:a] + text[a + draw(st.integers(1, 40)) :]
    tokens = text.split(b" ")
    if op == "swap" and len(tokens) > 2:
        i, j = draw(st.integers(0, len(tokens) - 1)), draw(st.integers(0, len(tokens) - 1))
        tokens[i], tokens[j] = tokens[j], tokens[i]
        return b" ".join(tokens)
    depth = draw(st.integers(50, 3000))
    return text + b"\nx = " + b"(" * depth + b"1" + b")" * depth + b"\n"


@FUZZ
@given(data=mutilated_fixture())
def test_mutilated_fixtures_never_break_the_scan(tmp_path_factory, data: bytes) -> None:
    scan_one(tmp_path_factory.mktemp("mut"), "mut.py", data)


# -- generated trees: names, encodings, file types, operator chains (issue 19) ---------------

#: codec names a coding cookie can carry: ordinary ones, bytes-to-bytes and text-to-text codecs
#: (rot13, hex, zlib), ones whose decoder raises UnicodeError (punycode, undefined, idna), unknown ones
COOKIES = [
    "utf-8",
    "latin-1",
    "cp1252",
    "utf-16",
    "utf-7",
    "rot13",
    "hex",
    "zlib",
    "base64",
    "punycode",
    "undefined",
    "idna",
    "no-such-codec",
    "utf-8-sig",
    "ascii",
]
KINDS = ["source", "fifo", "loop", "dangling", "directory", "device", "empty"]


@st.composite
def hostile_entry(draw) -> tuple[bytes, str, bytes]:
    """(file name as bytes, kind, content)."""
    stem = draw(
        st.binary(min_size=1, max_size=12).filter(lambda b: b"/" not in b and b"\0" not in b and b not in (b".", b".."))
    )
    kind = draw(st.sampled_from(KINDS))
    terms = draw(st.sampled_from([1, 2, 700, 2500, 8500]))
    cookie = draw(st.sampled_from(["", *COOKIES]))
    body = (f"# coding: {cookie}\n" if cookie else "") + HEADER + "x = " + " or ".join(["a"] * terms) + "\n"
    if draw(st.booleans()):
        body += "\ndef node(state):\n    requests.post('https://e', json=state)\n    return interrupt('q')\n"
    return stem + b".py", kind, body.encode("utf-8")


@FUZZ
@given(entries=st.lists(hostile_entry(), min_size=1, max_size=4, unique_by=lambda e: e[0]))
def test_generated_hostile_trees_never_break_the_scan(tmp_path_factory, entries) -> None:
    """Arbitrary byte names (non-UTF-8 included), every kind of cookie, FIFOs, devices, loops,
    dangling links, directories named ``*.py``, and/or-chains up to 8,500 terms: the scan ends,
    every finding points at a file it names, and the SARIF is valid."""
    tmp = tmp_path_factory.mktemp("tree")
    root = os.fsencode(tmp)
    for name, kind, content in entries:
        full = os.path.join(root, name)
        if kind == "fifo":
            os.mkfifo(full)
        elif kind == "loop":
            os.symlink(full, full)
        elif kind == "dangling":
            os.symlink(os.path.join(root, b"missing-" + name), full)
        elif kind == "directory":
            os.mkdir(full)
            with open(os.path.join(full, b"inner.py"), "wb") as fh:
                fh.write(content)
        elif kind == "device":
            os.symlink(b"/dev/null", full)
        else:
            with open(full, "wb") as fh:
                fh.write(b"" if kind == "empty" else content)
    result = scan([tmp], Config(), tmp, jobs=1, time_limit=30, follow_symlinks=True)
    sarif = build_sarif(result)
    VALIDATOR.validate(sarif)
    json.dumps(sarif, ensure_ascii=False).encode("utf-8")  # valid UTF-8 whatever the names
    for f in result.findings:
        assert f.span.start_line >= 1
        f.span.path.encode("utf-8")  # a non-UTF-8 name is shown escaped, never as lone surrogates


# -- hostile trees --------------------------------------------------------------------------


def cli(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "resume_audit", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "NO_COLOR": "1"},
    )


HAZARD = (
    HEADER
    + """

def node(state):
    requests.post("https://example.com/x", json=state)
    return {"ok": interrupt("go?")}
"""
)


def test_hostile_tree(tmp_path: Path) -> None:
    tree = tmp_path / "tree with spaces" / "ünïcødé"
    tree.mkdir(parents=True)
    (tree / "agent ok.py").write_text(HAZARD)
    (tree / "bom.py").write_bytes(b"\xef\xbb\xbf" + HAZARD.encode())
    (tree / "latin1.py").write_bytes(b"# no coding cookie\nx = '\xe9'\n")
    (tree / "declared_latin1.py").write_bytes(b"# -*- coding: latin-1 -*-\n" + HAZARD.encode() + b"s = '\xe9'\n")
    (tree / "deep.py").write_text(HEADER + "x = " + "(" * 5000 + "1" + ")" * 5000 + "\n")
    (tree / "chain.py").write_text(HEADER + "x = " + "+".join(["1"] * 5000) + "\n")
    (tree / "huge.py").write_text(HEADER + "DATA = [\n" + "    'x' * 80,\n" * 700_000 + "]\n")  # ~10 MB
    (tree / "empty.py").write_text("")
    os.symlink(tree, tree / "loop")
    os.symlink(tree / "nowhere.py", tree / "vanished.py")
    out = cli("scan", ".", "-f", "json", "--no-cache", cwd=tmp_path)
    assert out.returncode == 1, out.stderr  # the real hazards are still found
    data = json.loads(out.stdout)
    found = {(f["path"], f["rule_id"]) for f in data["findings"]}
    assert ("tree with spaces/ünïcødé/agent ok.py", "RA101") in found
    assert ("tree with spaces/ünïcødé/bom.py", "RA101") in found
    assert ("tree with spaces/ünïcødé/declared_latin1.py", "RA101") in found
    kinds = {Path(n["path"]).name: n["kind"] for n in data["notifications"]}
    assert kinds == {
        "latin1.py": "decode-error",
        "deep.py": "parse-error",
        "chain.py": "parse-error",
        "huge.py": "skipped",
        "vanished.py": "unreadable",
    }
    assert data["summary"]["files_scanned"] == 9
    strict = cli("scan", ".", "--no-cache", "--strict", cwd=tmp_path)
    assert strict.returncode == 2
    sarif = cli("scan", ".", "-f", "sarif", "--no-cache", cwd=tmp_path)
    VALIDATOR.validate(json.loads(sarif.stdout))


def test_empty_tree_and_missing_path(tmp_path: Path) -> None:
    empty = cli("scan", str(tmp_path), "-f", "json", cwd=tmp_path)
    assert empty.returncode == 0 and json.loads(empty.stdout)["summary"]["files_scanned"] == 0
    missing = cli("scan", str(tmp_path / "nope"), cwd=tmp_path)
    assert missing.returncode == 2 and "does not exist" in missing.stderr


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads files whatever their mode")
def test_unreadable_file(tmp_path: Path) -> None:
    secret = tmp_path / "secret.py"
    secret.write_text(HAZARD)
    secret.chmod(0)
    try:
        out = cli("scan", ".", "-f", "json", "--no-cache", cwd=tmp_path)
    finally:
        secret.chmod(0o644)
    assert [n["kind"] for n in json.loads(out.stdout)["notifications"]] == ["unreadable"]


def test_per_file_time_limit(tmp_path: Path) -> None:
    many = HEADER + "".join(
        f"\ndef node_{i}(state):\n    requests.post('https://e/{i}', json=state)\n    return interrupt('q')\n"
        for i in range(300)
    )
    (tmp_path / "slow.py").write_text(many)
    (tmp_path / "quick.py").write_text(HAZARD)
    started = time.perf_counter()
    result = scan([tmp_path], Config(), tmp_path, jobs=1, time_limit=0.05)
    assert time.perf_counter() - started < 30
    timed_out = {n.path for n in result.notifications if n.kind.value == "timeout"}
    assert "slow.py" in timed_out
    # every file is accounted for: a finding or a timeout notice, never silently dropped
    reported = timed_out | {f.span.path for f in result.findings}
    assert reported == {"slow.py", "quick.py"}
    assert {n.kind.value for n in result.notifications} == {"timeout"}, [n.message for n in result.notifications]
    import signal

    assert signal.SIGALRM not in signal.pthread_sigmask(signal.SIG_BLOCK, [])  # never left blocked by a parse
    relaxed = scan([tmp_path], Config(), tmp_path, jobs=1, time_limit=120)
    assert relaxed.notifications == [] and len(relaxed.findings) == 301


# -- usage errors that used to end in a traceback or a silent pass (issue 19) --------------------------
def test_an_unwritable_output_path_is_a_usage_error(tmp_path):
    import subprocess
    import sys

    proc = subprocess.run(
        [sys.executable, "-m", "resume_audit", "scan", "fixtures/static", "-o", "/proc/nope/report.json"],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 2, proc.stderr[-2000:]
    assert "cannot write the report to /proc/nope/report.json" in proc.stderr and "Traceback" not in proc.stderr


def test_an_empty_select_is_refused_not_a_silent_pass(tmp_path):
    import subprocess
    import sys

    proc = subprocess.run(
        [sys.executable, "-m", "resume_audit", "scan", "fixtures/static", "--select", ""],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 2 and "selects no rule" in proc.stderr
    (tmp_path / "pyproject.toml").write_text("[tool.resume-audit]\nselect = []\n")
    (tmp_path / "a.py").write_text("x = 1\n")
    proc = subprocess.run(
        [sys.executable, "-m", "resume_audit", "scan", str(tmp_path)], capture_output=True, text=True, timeout=300
    )
    assert proc.returncode == 2 and "selects no rule" in proc.stderr


def test_more_bad_arguments_are_usage_errors_not_tracebacks(tmp_path):
    """An infinite --max-file-size, an unwritable --write-baseline and a pyproject whose `tool` is not a
    table each printed a traceback ("internal error" or an OverflowError) before."""
    import subprocess
    import sys

    (tmp_path / "a.py").write_text("x = 1\n")

    def scan(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run(
            [sys.executable, "-m", "resume_audit", "scan", *args],
            cwd=tmp_path,
            capture_output=True,
            text=True,
            timeout=300,
        )

    proc = scan("a.py", "--max-file-size", "inf")
    assert proc.returncode == 2 and "Traceback" not in proc.stderr and "--max-file-size" in proc.stderr
    proc = scan("a.py", "--write-baseline", "/proc/nope/baseline.json")
    assert proc.returncode == 2 and "cannot write the baseline to /proc/nope/baseline.json" in proc.stderr
    assert "Traceback" not in proc.stderr
    (tmp_path / "pyproject.toml").write_text("tool = 3\n")
    assert scan("a.py").returncode == 0  # no [tool.resume-audit] table: defaults
    proc = scan("a.py", "--config", "pyproject.toml")
    assert proc.returncode == 2 and "`tool` must be a table" in proc.stderr and "Traceback" not in proc.stderr


def test_an_effect_without_a_colon_is_a_usage_error():
    import subprocess
    import sys

    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "resume_audit",
            "crash-sweep",
            "fixtures/dynamic/langgraph/two_gates.py:build_graph",
            "--effect",
            "nocolon",
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 2 and "expected MODULE:FUNCTION" in proc.stderr and "internal error" not in proc.stderr


@pytest.mark.parametrize("phase", ["reading", "analysis"])
def test_sigterm_stops_a_pool_mode_scan_and_its_workers(tmp_path, phase):
    """SIGTERM to the scan process only (as a CI runner cancelling the step sends it): the command
    exits 143 promptly and leaves no worker behind, whether the signal finds the reader processes
    (the first children of a scan of this many files) or the analysis workers forked after them.
    Before: the process died with the signal and orphaned its workers; with the signal handled but
    the pool left to the executor's exit, it waited for every queued chunk (about 40 s for this tree
    on two cores); a reader killed while writing its chunk back hung the exit for ever (seen in CI)."""
    import signal
    import subprocess
    import sys
    import time

    source = (REPO / "fixtures" / "dynamic" / "langgraph" / "two_gates.py").read_text()
    for i in range(4000):
        package = tmp_path / f"pkg{i // 100}"
        package.mkdir(exist_ok=True)
        (package / f"m{i}.py").write_text(source.replace("Refund", f"Refund{i}"))
    proc = subprocess.Popen(
        [sys.executable, "-m", "resume_audit", "scan", str(tmp_path), "--no-cache", "--jobs", "2"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )

    def workers() -> set[int]:
        out = set()
        for entry in os.listdir("/proc"):
            try:
                with open(f"/proc/{entry}/stat", "rb") as fh:
                    fields = fh.read().rsplit(b")", 1)[-1].split()
            except (OSError, ValueError):
                continue
            if entry.isdigit() and int(fields[1]) == proc.pid and fields[0] != b"Z":
                out.add(int(entry))
        return out

    def wait_for_two(other_than: set[int]) -> set[int]:
        deadline = time.monotonic() + 60
        while len(workers() - other_than) < 2:
            assert proc.poll() is None and time.monotonic() < deadline, (
                f"the scan ended before its {phase} pool started"
            )
            time.sleep(0.01)
        return workers() - other_than

    try:
        readers = wait_for_two(set())
        pool = readers if phase == "reading" else wait_for_two(readers)
        proc.send_signal(signal.SIGTERM)
        _out, err = proc.communicate(timeout=15)  # far less than draining the queue takes
    finally:
        if proc.poll() is None:  # a failed run must not leave the scan behind
            proc.kill()
            proc.wait()
    assert proc.returncode == 143, err[-2000:]
    time.sleep(0.5)
    alive = [
        pid
        for pid in pool | readers
        if os.path.exists(f"/proc/{pid}")
        and open(f"/proc/{pid}/stat", "rb").read().rsplit(b")", 1)[-1].split()[0] != b"Z"
    ]
    assert alive == []


def test_a_fifo_or_a_device_named_py_is_reported_not_read(tmp_path):
    """Before: a FIFO named ``*.py`` blocked the scan forever; a ``*.py`` link to /dev/zero read until
    memory ran out (the size limit was applied after the read)."""
    import subprocess
    import sys

    os.mkfifo(tmp_path / "pipe.py")
    (tmp_path / "zero.py").symlink_to("/dev/zero")
    (tmp_path / "agent.py").write_text("from langgraph.types import interrupt\n")

    def notes(*extra: str) -> dict[str, str]:
        proc = subprocess.run(
            [sys.executable, "-m", "resume_audit", "scan", str(tmp_path), "--no-cache", "--format", "json", *extra],
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert proc.returncode == 0, proc.stderr[-2000:]
        return {n["path"]: n["message"] for n in json.loads(proc.stdout)["notifications"]}

    followed = notes("--follow-symlinks")  # /dev/zero is outside the tree: only read when links are followed
    assert followed["pipe.py"] == "a FIFO, not a source file; skipped"
    assert followed["zero.py"] == "a device, not a source file; skipped"
    assert notes()["zero.py"].startswith("a symlink to a file outside the scanned folder; skipped")
