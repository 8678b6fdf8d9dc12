"""Hostile file systems and sources (issue 19): each costs a notification for that file, never the
scan, a hang or a silent drop. Every case here ended in a traceback, a segfault, a lost finding or
no notification before; the real thing is made each time (symlink loops, non-UTF-8 names,
unlistable folders as an unprivileged user, a 8,000-term boolean chain, control sequences).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import jsonschema
import pytest
from conftest import REPO

from resume_audit.config.settings import Config
from resume_audit.engine import analysing
from resume_audit.engine.scan import scan
from resume_audit.engine.timelimit import Alarm, TimeLimit
from resume_audit.reading import readers

SCHEMA = json.loads((Path(__file__).parent / "data" / "sarif-schema-2.1.0.json").read_text())
HAZARD = (
    "import requests\nfrom langgraph.types import interrupt\n\n"
    "def node(state):\n"
    "    requests.post('https://example.com/x', json=state)\n"
    "    return {'ok': interrupt('go?')}\n"
)


def run(*args: str, cwd: Path, user: list[str] | None = None) -> subprocess.CompletedProcess[bytes]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")]))}
    return subprocess.run(
        [*(user or []), sys.executable, "-m", "resume_audit", *args], cwd=cwd, capture_output=True, timeout=300, env=env
    )


def notes_of(stdout: bytes) -> dict[str, tuple[str, str]]:
    data = json.loads(stdout.decode("utf-8"))  # strict UTF-8: a report must stay valid whatever the names
    return {n["path"]: (n["kind"], n["message"]) for n in data["notifications"]}


def test_loops_odd_names_and_cookies_cost_one_file_each(tmp_path: Path) -> None:
    tree = tmp_path / "tree"
    tree.mkdir()
    (tree / "agent.py").write_text(HAZARD)
    os.symlink("b.py", tree / "a.py")  # a file symlink loop
    os.symlink("a.py", tree / "b.py")
    (tree / os.fsdecode(b"bad\xff.py")).write_text(HAZARD)  # not UTF-8: scanned, shown escaped
    (tree / "puny.py").write_bytes(b"# coding: punycode\nx = 1\n")
    (tree / "undef.py").write_bytes(b"# coding: undefined\nx = 1\n")
    (tree / "rot.py").write_bytes(b"# coding: rot13\nx = 1\n")
    (tree / "chain.py").write_text("from langgraph.types import interrupt\nx = " + " and ".join(["a"] * 8500) + "\n")
    cache = tmp_path / "cache"
    for attempt in ("cold", "warm"):
        proc = run("scan", "tree", "-f", "json", "--cache-dir", str(cache), cwd=tmp_path)
        assert proc.returncode == 1, (
            attempt,
            proc.stderr.decode()[-2000:],
        )  # findings, not a crash (2) or a segfault (-11)
        data = json.loads(proc.stdout.decode("utf-8"))
        assert sorted(f["path"] for f in data["findings"]) == ["tree/agent.py", "tree/bad\\xff.py"], attempt
        kinds = {path: kind for path, (kind, _) in notes_of(proc.stdout).items()}
        assert kinds == {
            "tree/a.py": "unreadable",
            "tree/b.py": "unreadable",
            "tree/puny.py": "decode-error",
            "tree/undef.py": "decode-error",
            "tree/rot.py": "decode-error",
            "tree/chain.py": "parse-error",
        }, attempt
    sarif = run("scan", "tree", "-f", "sarif", "--no-cache", cwd=tmp_path)
    jsonschema.Draft4Validator(SCHEMA).validate(json.loads(sarif.stdout.decode("utf-8")))


@pytest.mark.skipif(not shutil.which("setpriv") and os.geteuid() == 0, reason="needs setpriv to drop root")
def test_folders_that_cannot_be_listed_are_reported(tmp_path: Path) -> None:
    """As an unprivileged user (root lists any folder): one folder can be entered but not listed (mode
    311), one can be neither (mode 000). Before, the first was skipped silently and the second ended
    the scan with a PermissionError traceback."""
    tree = tmp_path / "tree"
    for folder in ("open", "nolist", "closed"):
        (tree / folder).mkdir(parents=True)
        (tree / folder / "agent.py").write_text(HAZARD)
    (tree / "nolist").chmod(0o311)
    (tree / "closed").chmod(0o000)
    user: list[str] = []
    if os.geteuid() == 0:
        user = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"]
        for p in [tmp_path, *tmp_path.parents]:
            if p == Path("/"):
                break
            p.chmod(p.stat().st_mode | 0o005)  # the unprivileged user must reach the tree
    try:
        proc = run("scan", str(tree), "--root", str(tree), "-f", "json", "--no-cache", cwd=tree, user=user)
        strict = run("scan", str(tree), "--root", str(tree), "--no-cache", "--strict", cwd=tree, user=user)
    finally:
        (tree / "nolist").chmod(0o755)
        (tree / "closed").chmod(0o755)
    assert proc.returncode == 1, proc.stderr.decode()[-2000:]
    assert [f["path"] for f in json.loads(proc.stdout)["findings"]] == ["open/agent.py"]
    notes = notes_of(proc.stdout)
    assert notes["nolist"][0] == notes["closed"][0] == "unreadable"
    assert "cannot list this folder" in notes["nolist"][1]
    assert strict.returncode == 2


def test_a_slow_dependency_is_charged_to_itself(tmp_path: Path) -> None:
    """A neighbour's analysis parses the slow module it imports; the parse used to run on the
    neighbour's clock, so the neighbour timed out and its real finding was lost (exit 0)."""
    (tmp_path / "a_agent.py").write_text(
        "import requests\nfrom langgraph.types import interrupt\nfrom z_data import send\n\n"
        "def node(state):\n    requests.post('https://example.com/x', json=state)\n    send(state)\n"
        "    return {'ok': interrupt('go?')}\n"
    )
    (tmp_path / "z_data.py").write_text(
        "import requests\n\nDATA = [" + ", ".join(str(i) for i in range(60_000)) + "]\n\n"
        "def send(x):\n    requests.post('https://example.com/y', json=x)\n"
    )
    result = scan([tmp_path], Config(), tmp_path, jobs=1, time_limit=0.5, cache_dir=tmp_path / "cache")
    assert [(f.rule_id, f.span.path, f.span.start_line) for f in result.findings if f.span.path == "a_agent.py"][
        :1
    ] == [("RA101", "a_agent.py", 6)]
    assert [(n.kind.value, n.path) for n in result.notifications] == [("timeout", "z_data.py")]
    # the neighbour's result leaned on a parse that ran out of time: it is not cached as final
    again = scan([tmp_path], Config(), tmp_path, jobs=1, time_limit=120, cache_dir=tmp_path / "cache")
    assert again.notifications == []
    assert {(f.rule_id, f.span.path, f.span.start_line) for f in again.findings} >= {("RA101", "a_agent.py", 7)}


def test_a_time_limit_swallowed_by_a_gc_callback_fires_again() -> None:
    """Python prints and drops an exception raised inside a gc callback or ``__del__`` (CI showed
    hypothesis's gc callback eating the limit); the file then ran on with no limit at all."""
    import time

    def busy(seconds: float) -> None:
        end = time.perf_counter() + seconds
        while time.perf_counter() < end:
            pass

    swallowed = 0
    started = time.perf_counter()
    with pytest.raises(TimeLimit):
        with Alarm(0.05):
            try:  # what the interpreter does with an exception out of a gc callback
                busy(1.0)
            except TimeLimit:
                swallowed += 1
            busy(10.0)
    assert swallowed == 1 and time.perf_counter() - started < 2.0
    assert not Alarm.running()


def test_a_repeat_that_fires_after_the_block_does_nothing() -> None:
    """The repeat is armed when the limit fires; one delivered while the body's exception unwinds
    (or later) must neither raise nor re-arm once the block is left -- it once crashed pytest far
    from any analysis."""
    import signal
    import time

    before = signal.getsignal(signal.SIGALRM)
    alarm = Alarm(0.05)
    with pytest.raises(TimeLimit):
        with alarm:
            end = time.perf_counter() + 10
            while time.perf_counter() < end:
                pass
    assert not Alarm.running() and signal.getsignal(signal.SIGALRM) == before
    alarm._raise(signal.SIGALRM, None)  # a late delivery of the repeat: a no-op
    assert not Alarm.running()


def test_files_deleted_or_edited_after_discovery_are_analysed_as_read(tmp_path: Path, monkeypatch) -> None:
    """The scan hashes what it read; it must analyse the same bytes. Before, the analysis read the
    tree again: a helper deleted meanwhile vanished without a word (the finding it carried with it)
    and an edited file's new result was cached under the old content's hash."""
    (tmp_path / "graph.py").write_text(
        "from langgraph.graph import StateGraph\nfrom langgraph.types import interrupt\nfrom helpers import pay\n\n"
        "def node(state):\n    pay(state)\n    return {'ok': interrupt('go?')}\n"
    )
    (tmp_path / "helpers.py").write_text("import stripe\n\ndef pay(state):\n    stripe.Charge.create(amount=1)\n")
    expected = scan([tmp_path], Config(), tmp_path, jobs=1, cache_dir=None)
    assert any(f.rule_id == "RA101" for f in expected.findings)
    real_read_files = readers.read_files

    def read_then_change(*args, **kwargs):
        reads = list(real_read_files(*args, **kwargs))  # every file read...
        (tmp_path / "helpers.py").unlink()  # ...then changed before the scan analyses them
        (tmp_path / "graph.py").write_text("x = 1\n")
        yield from reads

    monkeypatch.setattr(readers, "read_files", read_then_change)
    during = scan([tmp_path], Config(), tmp_path, jobs=1, cache_dir=tmp_path / "cache")
    monkeypatch.undo()
    assert [(f.rule_id, f.span.start_line, f.fingerprint) for f in during.findings] == [
        (f.rule_id, f.span.start_line, f.fingerprint) for f in expected.findings
    ]
    assert during.notifications == expected.notifications
    after = scan([tmp_path], Config(), tmp_path, jobs=1, cache_dir=tmp_path / "cache")
    assert after.findings == [] == scan([tmp_path], Config(), tmp_path, jobs=1, cache_dir=None).findings


def test_control_sequences_in_the_source_are_shown_not_sent(tmp_path: Path) -> None:
    (tmp_path / "agent.py").write_text(
        "import requests\nfrom langgraph.types import interrupt\n\ndef node(state):\n"
        "    requests.post('\x1b[2J\x1b[8mhidden\u202e', json=state)\n"
        "    return {'ok': interrupt('go?\x1b]0;title\x07')}\n"
    )
    for fmt in ("text", "github"):
        proc = run("scan", ".", "-f", fmt, "--no-cache", cwd=tmp_path)
        assert proc.returncode == 1
        out = proc.stdout.decode("utf-8")
        assert "\x1b" not in out and "\x07" not in out and "\u202e" not in out, fmt
    text = run("scan", ".", "--no-cache", cwd=tmp_path).stdout.decode()
    assert "requests.post('\\x1b[2J\\x1b[8mhidden\\u202e', json=state)" in text


def test_symlinks_out_of_the_tree_are_skipped_unless_followed(tmp_path: Path) -> None:
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    (outside / "secret.py").write_text(HAZARD)
    tree = tmp_path / "tree"
    tree.mkdir()
    (tree / "agent.py").write_text(HAZARD)
    (tree / "inside.py").symlink_to(tree / "agent.py")  # same file: scanned once
    (tree / "outside.py").symlink_to(outside / "secret.py")
    plain = run("scan", ".", "-f", "json", "--no-cache", cwd=tree)
    assert [f["path"] for f in json.loads(plain.stdout)["findings"]] == ["agent.py"]
    assert notes_of(plain.stdout) == {
        "outside.py": (
            "skipped",
            "a symlink to a file outside the scanned folder; skipped (scan it with --follow-symlinks)",
        )
    }
    followed = run("scan", ".", "-f", "json", "--no-cache", "--follow-symlinks", cwd=tree)
    assert [f["path"] for f in json.loads(followed.stdout)["findings"]] == ["agent.py", "outside.py"]
    assert notes_of(followed.stdout) == {}


def test_malformed_baselines_and_unbounded_timeouts_are_usage_errors(tmp_path: Path) -> None:
    (tmp_path / "agent.py").write_text(HAZARD)
    (tmp_path / "baseline.json").write_text(json.dumps({"version": 1, "findings": [{"fingerprint": ["x"]}]}))
    proc = run("scan", ".", "--baseline", "baseline.json", cwd=tmp_path)
    assert proc.returncode == 2 and b"has no fingerprint string" in proc.stderr and b"Traceback" not in proc.stderr
    proc = run("scan", ".", "--file-timeout", "inf", cwd=tmp_path)
    assert proc.returncode == 2 and b"--file-timeout" in proc.stderr and b"Traceback" not in proc.stderr


def test_a_long_boolean_chain_in_pool_mode_is_a_notification(tmp_path: Path) -> None:
    """Pool mode (200+ candidate files): the chain that made LibCST segfault killed a worker and the
    scan ended in a BrokenProcessPool traceback."""
    for i in range(analysing.PARALLEL_THRESHOLD):
        (tmp_path / f"agent_{i:03}.py").write_text(HAZARD)
    (tmp_path / "chain.py").write_text(
        "from langgraph.types import interrupt\nx = " + " and ".join(["a"] * 8500) + "\n"
    )
    proc = run("scan", ".", "-f", "json", "--no-cache", "-j", "2", cwd=tmp_path)
    assert proc.returncode == 1, proc.stderr.decode()[-2000:]
    assert len(json.loads(proc.stdout)["findings"]) == analysing.PARALLEL_THRESHOLD
    assert notes_of(proc.stdout)["chain.py"][0] == "parse-error"
