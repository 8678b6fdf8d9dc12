"""Which files a scan reads, and how it survives files it cannot read."""

from __future__ import annotations

import os
from pathlib import Path

from conftest import write_tree

from resume_audit.config.settings import Config
from resume_audit.discovery.walk import discover
from resume_audit.engine.scan import scan

HAZARD = """import requests
from langgraph.types import interrupt


def node(state):
    requests.post("https://example.com/x", json=state)
    return {"ok": interrupt("go?")}
"""


def test_skips_environments_caches_and_build_output(tmp_path: Path) -> None:
    files = {
        "app/graph.py": HAZARD,
        ".venv/lib/python3.11/site-packages/x.py": HAZARD,
        "env/lib/x.py": HAZARD,
        "env/pyvenv.cfg": "home = /usr\n",
        "node_modules/pkg/x.py": HAZARD,
        ".git/hooks/x.py": HAZARD,
        "build/lib/x.py": HAZARD,
        "lib/site-packages/y.py": HAZARD,
        "migrations/0001.py": HAZARD,
        "notes.txt": "not python",
    }
    write_tree(tmp_path, files)
    found = [s.display for s in discover([tmp_path], tmp_path, ["migrations"])]
    assert found == ["app/graph.py"]


def test_symlink_loops_are_not_followed(tmp_path: Path) -> None:
    write_tree(tmp_path, {"pkg/a.py": "x = 1\n"})
    os.symlink(tmp_path, tmp_path / "pkg" / "loop")
    assert [s.display for s in discover([tmp_path], tmp_path)] == ["pkg/a.py"]


def test_bad_files_are_reported_and_the_scan_goes_on(tmp_path: Path) -> None:
    broken_agent = "from langgraph.types import interrupt\n\ndef f(:\n    pass\n"
    write_tree(
        tmp_path, {"good.py": HAZARD, "broken.py": broken_agent, "bom.py": "\ufeff" + HAZARD, "plain.py": "x = (\n"}
    )
    (tmp_path / "binary.py").write_bytes(b"\x89PNG\r\n\x1a\n\x00\xff\xfe")
    os.symlink(tmp_path / "gone.py", tmp_path / "dangling.py")
    result = scan([tmp_path], Config(), tmp_path)
    kinds = {n.path: n.kind.value for n in result.notifications}
    assert kinds == {"broken.py": "parse-error", "binary.py": "decode-error", "dangling.py": "unreadable"}
    broken = [n for n in result.notifications if n.path == "broken.py"][0]
    assert broken.line == 3 and "does not parse" in broken.message
    assert sorted((f.span.path, f.span.start_line) for f in result.findings) == [("bom.py", 6), ("good.py", 6)]
    assert result.files_scanned == 6
    # plain.py imports no framework: it cannot hold a hazard, so it is not parsed (and its
    # syntax error is not this tool's to report); the three framework files were analysed
    assert result.files_analysed == 3


def test_the_scan_never_imports_scanned_code(tmp_path: Path) -> None:
    marker = tmp_path / "imported.txt"
    write_tree(tmp_path, {"evil.py": f"open({str(marker)!r}, 'w').write('ran')\n" + HAZARD})
    result = scan([tmp_path], Config(), tmp_path)
    assert not marker.exists()
    assert [f.rule_id for f in result.findings] == ["RA101"]
