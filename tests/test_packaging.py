"""What a release ships, checked on every CI run rather than first at a tag: the sdist and the
wheel build (the wheel from the sdist, as the release workflow does), pass ``twine check``, hold
every module of ``auditor/``, ``rules/`` and ``dynamic/`` under ``resume_audit`` and nothing else at
the top, and the installed wheel -- not the editable checkout -- scans the bundled example with
the same findings. The release workflow itself is linted by actionlint."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
import yaml
from conftest import REPO

REQUIRE_TOOLS = os.environ.get("RESUME_AUDIT_REQUIRE_TOOLS") == "1"
MAPPED = {"auditor": "resume_audit", "rules": "resume_audit/rules", "dynamic": "resume_audit/dynamic"}


@pytest.fixture(scope="module")
def dist(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("dist")
    # a copy of the tracked files only: a build in the checkout would write build/ and *.egg-info
    # into it, and an untracked file there must not reach the test's sdist
    src = tmp_path_factory.mktemp("src")
    tracked = subprocess.run(["git", "ls-files", "-z"], cwd=REPO, capture_output=True, check=True).stdout.split(b"\0")
    for name in filter(None, tracked):
        target = src / os.fsdecode(name)
        if (REPO / os.fsdecode(name)).is_file():
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(REPO / os.fsdecode(name), target)
    proc = subprocess.run(
        [sys.executable, "-m", "build", "--no-isolation", "--outdir", str(out), str(src)],
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    return out


def _wheel(dist: Path) -> Path:
    [wheel] = dist.glob("*.whl")
    return wheel


def test_twine_accepts_the_sdist_and_the_wheel(dist: Path) -> None:
    files = sorted(str(p) for p in dist.iterdir())
    assert sorted(Path(f).suffix for f in files) == [".gz", ".whl"], files
    proc = subprocess.run([sys.executable, "-m", "twine", "check", "--strict", *files], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout.count("PASSED") == 2, proc.stdout


def test_the_wheel_holds_every_module_under_one_top_level_name(dist: Path) -> None:
    names = zipfile.ZipFile(_wheel(dist)).namelist()
    packaged = {n for n in names if n.endswith(".py")}
    expected = {
        f"{MAPPED[top]}/{p.relative_to(REPO / top).as_posix()}"
        for top in MAPPED
        for p in (REPO / top).rglob("*.py")
        if "__pycache__" not in p.parts
    }
    assert expected - packaged == set(), "modules the wheel would not ship"
    assert packaged - expected == set(), "modules the wheel ships that are not in the tree"
    tops = {n.split("/", 1)[0] for n in names}
    assert {t for t in tops if not t.endswith(".dist-info")} == {"resume_audit"}  # never `auditor`, `rules`, `dynamic`
    assert "resume_audit/py.typed" in names
    [meta] = [n for n in names if n.endswith(".dist-info/entry_points.txt")]
    entry_points = zipfile.ZipFile(_wheel(dist)).read(meta).decode()
    assert (
        "resume-audit = resume_audit.cli:main" in entry_points
        and "resume_audit = resume_audit.integrations.pytest_plugin" in entry_points
    )


def test_the_installed_wheel_scans_the_example_like_the_checkout(dist: Path, tmp_path: Path) -> None:
    target = tmp_path / "site"
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "install",
            "--quiet",
            "--no-deps",
            "--no-index",
            "--target",
            str(target),
            str(_wheel(dist)),
        ],
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 0, proc.stderr
    env = {**os.environ, "PYTHONPATH": str(target)}
    where = subprocess.run(
        [sys.executable, "-c", "import resume_audit, resume_audit.rules; print(resume_audit.__file__)"],
        env=env,
        capture_output=True,
        text=True,
        cwd=tmp_path,
    )
    assert Path(where.stdout.strip()).is_relative_to(target), where.stdout + where.stderr  # the wheel, not the checkout

    def scan(environment: dict[str, str]) -> list[tuple[str, str, int]]:
        run = subprocess.run(
            [
                sys.executable,
                "-m",
                "resume_audit",
                "scan",
                str(REPO / "fixtures" / "myagent"),
                "--root",
                str(REPO),
                "--format",
                "json",
                "--no-cache",
            ],
            env=environment,
            capture_output=True,
            text=True,
            cwd=tmp_path,
        )
        assert run.returncode == 1, run.stderr  # the example holds findings
        return sorted((f["rule_id"], f["path"], f["start_line"]) for f in json.loads(run.stdout)["findings"])

    installed = scan(env)
    assert installed and installed == scan(dict(os.environ))


def test_the_release_workflow_passes_actionlint_and_publishes_by_trusted_publishing() -> None:
    workflow_path = REPO / ".github" / "workflows" / "release.yml"
    workflow = yaml.safe_load(workflow_path.read_text())
    jobs = workflow["jobs"]
    assert workflow[True]["push"]["tags"] == ["v[0-9]+.[0-9]+.[0-9]+"]  # yaml reads the key `on` as True
    assert jobs["publish"]["permissions"] == {"id-token": "write"} and jobs["publish"]["environment"] == "pypi"
    assert workflow["permissions"] == {"contents": "read"}  # nothing else may write
    assert any(s.get("uses", "").startswith("pypa/gh-action-pypi-publish@") for s in jobs["publish"]["steps"])
    assert not any("password" in json.dumps(s) for s in jobs["publish"]["steps"])  # no stored token
    actionlint, shellcheck = shutil.which("actionlint"), shutil.which("shellcheck")
    if actionlint is None or shellcheck is None:
        if REQUIRE_TOOLS:
            pytest.fail("actionlint and shellcheck are required in CI: pip install -e '.[test]'")
        pytest.skip("actionlint / shellcheck not installed (the test extra installs both)")
    proc = subprocess.run(
        [actionlint, "-shellcheck", shellcheck, str(workflow_path)], capture_output=True, text=True, cwd=REPO
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_the_release_refuses_a_tag_that_is_not_the_package_version(tmp_path: Path) -> None:
    """The build job's first check, run as the workflow runs it (bash, in the repository root)."""
    workflow = yaml.safe_load((REPO / ".github" / "workflows" / "release.yml").read_text())
    [check] = [
        s for s in workflow["jobs"]["build"]["steps"] if s.get("name", "").startswith("The tag names the version")
    ]
    from resume_audit.version import __version__ as version

    for tag, ok in ((f"v{version}", True), ("v99.0.0", False)):
        proc = subprocess.run(
            ["bash", "-e", "-c", check["run"]], cwd=REPO, env={**os.environ, "TAG": tag}, capture_output=True, text=True
        )
        assert (proc.returncode == 0) is ok, (tag, proc.stdout, proc.stderr)
        if not ok:
            assert f"::error title=release::tag {tag} does not match the version {version}" in proc.stdout
