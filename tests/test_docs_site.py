"""The documentation a user reads: a short README whose first commands set up and test the
project, reference pages generated from the code's own tables, and a site that builds with
``mkdocs build --strict`` (no broken link, no missing or unlisted page)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import REPO

from resume_audit.catalog import reference

README = REPO / "README.md"
DOCS = REPO / "docs"

#: the README's first two commands, in this order: the first scans the bundled example, the
#: second is the test command .ci/run runs (step by step) on a fresh machine
SET_UP_COMMANDS = (
    "python3 -m venv .venv && . .venv/bin/activate && pip install -e . && resume-audit scan fixtures/myagent --fail-on never",
    "python3 -m venv .venv && . .venv/bin/activate && pip install -e '.[test]' && python -m pytest",
)


def _fenced_blocks(text: str) -> list[tuple[str, str]]:
    """(language, body) of every fenced block, in order."""
    return [(m.group(1), m.group(2)) for m in re.finditer(r"^```(\w*)\n(.*?)^```$", text, re.M | re.S)]


def test_the_readme_is_short_and_starts_with_the_two_set_up_commands() -> None:
    text = README.read_text(encoding="utf-8")
    assert len(text.splitlines()) <= 150
    first_two = [body.strip() for _, body in _fenced_blocks(text)[:2]]
    assert first_two == list(SET_UP_COMMANDS)
    run = (REPO / ".ci" / "run").read_text(encoding="utf-8")
    assert "pip install -q -e '.[test]'" in run and "\npython -m pytest" in run


def test_the_readme_example_is_the_real_output() -> None:
    """The 30-second example shows exactly what the command prints today."""
    text = README.read_text(encoding="utf-8")
    [example] = [
        body for lang, body in _fenced_blocks(text) if lang == "text" and body.startswith("$ resume-audit scan")
    ]
    command, _, shown = example.partition("\n")
    argv = command.removeprefix("$ resume-audit ").split()
    env = {k: v for k, v in os.environ.items() if k not in ("FORCE_COLOR", "COLUMNS")}
    proc = subprocess.run(
        [sys.executable, "-m", "resume_audit", *argv, "--no-cache"],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 1, proc.stderr
    assert proc.stdout.rstrip("\n") == shown.rstrip("\n")


def test_every_readme_link_reaches_a_file() -> None:
    text = README.read_text(encoding="utf-8")
    targets = re.findall(r"\]\(([^)#]+)(?:#[^)]*)?\)", text)
    local = [t for t in targets if "://" not in t]
    assert len(local) >= 20  # one click from the README to every topic
    for target in local:
        assert (REPO / target).exists(), f"README links {target}, which does not exist"


@pytest.mark.parametrize("page", reference.pages(), ids=lambda page: page.path)
def test_the_generated_pages_are_current(page: reference.Page) -> None:
    committed = DOCS / page.path
    assert committed.is_file(), f"missing {committed}; run python -m resume_audit.catalog.reference"
    assert committed.read_text(encoding="utf-8") == page.text, (
        f"{committed} is stale; run python -m resume_audit.catalog.reference"
    )


def test_every_configuration_key_is_in_the_reference() -> None:
    from resume_audit.audit.plan import TARGET_KEYS
    from resume_audit.config.settings import CONFIG_KEYS, ConfigError, config_from_table

    page = (DOCS / "reference" / "configuration.md").read_text(encoding="utf-8")
    for key in (*CONFIG_KEYS, *TARGET_KEYS):
        assert f"| `{key.name}` |" in page, key.name
    # the table is the validator's: a key it does not list is refused, each key it lists is accepted
    with pytest.raises(ConfigError, match="unknown key"):
        config_from_table({"not-a-key": True}, None, ["RA101"])
    values = {"list of strings": ["RA101"], "string": "error", "boolean": True, "table": {}}
    for key in CONFIG_KEYS:
        config_from_table({key.name: values[key.kind.value]}, None, ["RA101"])


def test_every_command_line_option_is_in_the_reference() -> None:
    page = (DOCS / "reference" / "cli.md").read_text(encoding="utf-8")
    options = reference.cli_options()
    assert {"scan", "fix", "audit", "crash-sweep", "conformance"} <= set(options)
    assert "--fail-on-unused-suppressions" in options["scan"]
    for command, names in options.items():
        if command != "resume-audit":
            assert f"## `{command}`" in page, command
        section = page if command == "resume-audit" else page.split(f"## `{command}`", 1)[1].split("\n## ", 1)[0]
        for name in names:
            assert re.search(rf"(?<![\w-]){re.escape(name)}(?![\w-])", section), f"{command} {name}"


def test_the_site_builds_strictly(tmp_path: Path) -> None:
    """``mkdocs build --strict``: every page in the menu, no broken link or anchor, the API pages
    rendered from the docstrings (mkdocs and its plugins come with the test extra)."""
    mkdocs = shutil.which("mkdocs", path=str(Path(sys.executable).parent)) or shutil.which("mkdocs")
    if mkdocs is None:
        if os.environ.get("RESUME_AUDIT_REQUIRE_TOOLS"):
            pytest.fail("mkdocs is required in CI: pip install -e '.[test]'")
        pytest.skip("mkdocs not installed (the test extra installs it)")
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    proc = subprocess.run(
        [mkdocs, "build", "--strict", "--site-dir", str(tmp_path / "site")],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stderr[-4000:]
    api = (tmp_path / "site" / "python-api" / "index.html").read_text(encoding="utf-8")
    assert "crash_sweep" in api and "ScanRequest" in api
    assert (tmp_path / "site" / "rules" / "RA101" / "index.html").is_file()
