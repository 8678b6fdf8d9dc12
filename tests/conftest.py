"""Shared test helpers: scan a set of files written to a temporary tree."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from resume_audit.config.settings import Config
from resume_audit.engine.scan import scan
from resume_audit.findings import ScanResult

EXPECT = re.compile(r"#\s*expect:\s*(?P<ids>RA\d{3}(?:\s*,\s*RA\d{3})*)")
REPO = Path(__file__).resolve().parents[1]


def write_tree(root: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")


def expected_markers(root: Path, files: dict[str, str]) -> set[tuple[str, int, str]]:
    """(path, line, rule) for every `# expect: RAxxx` marker in the files."""
    out = set()
    for rel, text in files.items():
        for lineno, line in enumerate(text.splitlines(), start=1):
            m = EXPECT.search(line)
            if m:
                for rule_id in re.split(r"\s*,\s*", m.group("ids")):
                    out.add((Path(rel).as_posix(), lineno, rule_id))
    return out


def scan_tree(root: Path, config: Config | None = None) -> ScanResult:
    return scan([root], config or Config(), root)


@pytest.fixture
def scan_files(tmp_path: Path):
    """Write ``files`` under a temp dir and scan it; returns the ScanResult."""

    def run(files: dict[str, str], config: Config | None = None) -> ScanResult:
        write_tree(tmp_path, files)
        return scan_tree(tmp_path, config)

    return run
