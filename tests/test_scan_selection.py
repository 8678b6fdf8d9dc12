"""Which files `resume-audit scan` reads and under which configuration: .gitignore, exclude
patterns (gitignore syntax), --force-exclude for names on the command line (the pre-commit
hook), and each file's nearest [tool.resume-audit] in a monorepo -- all through the real CLI,
on real folders and real git repositories."""

from __future__ import annotations

import json
import shlex
import subprocess
from pathlib import Path

import yaml
from conftest import REPO, write_tree
from test_config_and_suppression import CUSTOM_SINK, HAZARD, run  # the same hazard, sink and CLI runner


def flagged(*args: str, cwd: Path) -> set[tuple[str, str]]:
    """(path, rule) of every finding of `resume-audit scan ARGS -f json` (uncached unless ARGS say)."""
    extra = [] if "--cache-dir" in args else ["--no-cache"]
    out = run("scan", *args, "-f", "json", *extra, cwd=cwd)
    assert out.returncode in (0, 1), out.stderr
    return {(f["path"], f["rule_id"]) for f in json.loads(out.stdout)["findings"]}


def git_init(folder: Path) -> None:
    subprocess.run(["git", "init", "-q", str(folder)], check=True, capture_output=True)


def hazards(*paths: str) -> set[tuple[str, str]]:
    return {(p, "RA101") for p in paths}


# -- .gitignore -----------------------------------------------------------------------------


def gitignored_repo(tmp_path: Path) -> Path:
    write_tree(
        tmp_path,
        {
            ".gitignore": "build_out/\n*.gen.py\n!keep.gen.py\n/top_only.py\n",
            "pkg/.gitignore": "local_secret.py\n",
            "app/node.py": HAZARD,
            "build_out/node.py": HAZARD,
            "app/client.gen.py": HAZARD,
            "app/keep.gen.py": HAZARD,
            "top_only.py": HAZARD,
            "sub/top_only.py": HAZARD,
            "pkg/local_secret.py": HAZARD,
            "pkg/node.py": HAZARD,
            "scratch.py": HAZARD,
        },
    )
    git_init(tmp_path)
    (tmp_path / ".git" / "info").mkdir(exist_ok=True)
    (tmp_path / ".git" / "info" / "exclude").write_text("scratch.py\n")
    return tmp_path


EVERY_FILE = hazards(
    "app/node.py",
    "build_out/node.py",
    "app/client.gen.py",
    "app/keep.gen.py",
    "top_only.py",
    "sub/top_only.py",
    "pkg/local_secret.py",
    "pkg/node.py",
    "scratch.py",
)
NOT_IGNORED = hazards("app/node.py", "app/keep.gen.py", "sub/top_only.py", "pkg/node.py")


def test_gitignore_is_honoured_with_git_semantics(tmp_path: Path) -> None:
    repo = gitignored_repo(tmp_path)
    # directory pattern, glob, negation, anchored pattern, nested .gitignore, .git/info/exclude
    assert flagged(".", cwd=repo) == NOT_IGNORED
    # the same files whichever folder is named
    assert flagged("pkg", "app", cwd=repo) == hazards("app/node.py", "app/keep.gen.py", "pkg/node.py")


def test_no_respect_gitignore_flag_and_config_key_scan_everything(tmp_path: Path) -> None:
    repo = gitignored_repo(tmp_path)
    assert flagged(".", "--no-respect-gitignore", cwd=repo) == EVERY_FILE
    (repo / "pyproject.toml").write_text("[tool.resume-audit]\nrespect-gitignore = false\n")
    assert flagged(".", cwd=repo) == EVERY_FILE
    assert flagged(".", "--respect-gitignore", cwd=repo) == NOT_IGNORED


def test_gitignore_outside_a_git_repository_is_not_read(tmp_path: Path) -> None:
    # as git: a .gitignore counts only in a work tree
    write_tree(tmp_path, {".gitignore": "*.py\n", "node.py": HAZARD})
    assert flagged(".", cwd=tmp_path) == hazards("node.py")


# -- exclude patterns and --force-exclude ----------------------------------------------------


def test_exclude_patterns_have_gitignore_semantics_and_old_globs_still_work(tmp_path: Path) -> None:
    write_tree(
        tmp_path,
        {
            "pyproject.toml": '[tool.resume-audit]\nexclude = ["migrations/*", "tests/*", "*_pb2.py", "/scripts/", "!keep_pb2.py"]\n',
            "app/node.py": HAZARD,
            "migrations/0001.py": HAZARD,
            "migrations/deep/0002.py": HAZARD,
            "tests/test_node.py": HAZARD,
            "app/api_pb2.py": HAZARD,
            "app/keep_pb2.py": HAZARD,
            "scripts/run.py": HAZARD,
            "app/scripts/run.py": HAZARD,  # /scripts/ is anchored to the config's folder
        },
    )
    assert flagged(".", cwd=tmp_path) == hazards("app/node.py", "app/keep_pb2.py", "app/scripts/run.py")
    # --exclude is relative to the root, and adds to the configuration's patterns
    assert flagged(".", "--exclude", "app/scripts", cwd=tmp_path) == hazards("app/node.py", "app/keep_pb2.py")


def test_files_named_on_the_command_line_are_scanned_unless_force_exclude(tmp_path: Path) -> None:
    write_tree(
        tmp_path,
        {
            "pyproject.toml": '[tool.resume-audit]\nexclude = ["generated/"]\n',
            ".gitignore": "vendored/\n",
            "app/node.py": HAZARD,
            "generated/node.py": HAZARD,
            "vendored/node.py": HAZARD,
        },
    )
    git_init(tmp_path)
    named = ("app/node.py", "generated/node.py", "vendored/node.py")
    # default: a name on the command line is what the user asked for
    assert flagged(*named, cwd=tmp_path) == hazards(*named)
    # --force-exclude: exclude and .gitignore apply to the names too (and to their folders)
    assert flagged(*named, "--force-exclude", cwd=tmp_path) == hazards("app/node.py")
    assert flagged(*named, "--force-exclude", "--exclude", "app/node.py", cwd=tmp_path) == set()
    # a folder walk is unaffected by the flag
    assert flagged(".", cwd=tmp_path) == flagged(".", "--force-exclude", cwd=tmp_path) == hazards("app/node.py")
    # the config key, and the flag that turns it off again
    (tmp_path / "pyproject.toml").write_text('[tool.resume-audit]\nexclude = ["generated/"]\nforce-exclude = true\n')
    assert flagged(*named, cwd=tmp_path) == hazards("app/node.py")
    assert flagged(*named, "--no-force-exclude", cwd=tmp_path) == hazards(*named)


def test_pre_commit_hooks_skip_excluded_staged_files(tmp_path: Path) -> None:
    """pre-commit runs `entry` with the staged file names appended: an excluded or ignored file
    among them must not fail the commit."""
    write_tree(
        tmp_path,
        {
            "pyproject.toml": '[tool.resume-audit]\nexclude = ["generated/"]\n',
            ".gitignore": "vendored/\n",
            "app/safe.py": "def add(a, b):\n    return a + b\n",
            "generated/node.py": HAZARD,
            "vendored/node.py": HAZARD,
        },
    )
    git_init(tmp_path)
    hooks = yaml.safe_load((REPO / ".pre-commit-hooks.yaml").read_text())
    assert {h["id"] for h in hooks} == {"resume-audit", "resume-audit-errors"}
    for hook in hooks:
        args = shlex.split(hook["entry"])[1:]  # drop the `resume-audit` console script
        out = run(*args, "--no-cache", "app/safe.py", "generated/node.py", "vendored/node.py", cwd=tmp_path)
        assert out.returncode == 0, (hook["id"], out.stdout, out.stderr)
        (tmp_path / "app" / "node.py").write_text(HAZARD)
        failing = run(*args, "--no-cache", "app/safe.py", "app/node.py", cwd=tmp_path)
        assert failing.returncode == 1, (hook["id"], failing.stdout)
        (tmp_path / "app" / "node.py").unlink()


# -- hierarchical configuration --------------------------------------------------------------


def monorepo(tmp_path: Path) -> Path:
    write_tree(
        tmp_path,
        {
            "pyproject.toml": '[project]\nname = "mono"\n\n[tool.resume-audit]\nsafe-calls = ["requests.get"]\n',
            # pkg_a: its own sink, RA101 on its tests ignored, a generated folder excluded
            "pkg_a/pyproject.toml": '[tool.resume-audit]\neffect-sinks = ["billing.charge"]\nexclude = ["gen/"]\n'
            '[tool.resume-audit.per-path-ignores]\n"tests/*" = ["RA101"]\n',
            "pkg_a/src/a_node.py": HAZARD,
            "pkg_a/src/a_custom.py": CUSTOM_SINK,
            "pkg_a/tests/test_a.py": HAZARD,
            "pkg_a/gen/a_gen.py": HAZARD,
            # pkg_b: RA101 ignored outright; billing.charge is nothing to it
            "pkg_b/pyproject.toml": '[tool.resume-audit]\nignore = ["RA101"]\n',
            "pkg_b/b_node.py": HAZARD,
            "pkg_b/b_custom.py": CUSTOM_SINK,
            "pkg_b/gen/b_gen.py": HAZARD,
            # under the root configuration
            "tools/t_node.py": HAZARD,
        },
    )
    return tmp_path


PER_PACKAGE = hazards("pkg_a/src/a_node.py", "pkg_a/src/a_custom.py")


def test_each_package_of_a_monorepo_keeps_its_own_configuration(tmp_path: Path) -> None:
    repo = monorepo(tmp_path)
    assert flagged("pkg_a", "pkg_b", cwd=repo) == PER_PACKAGE
    assert flagged("pkg_b", "pkg_a", cwd=repo) == PER_PACKAGE
    assert flagged(".", cwd=repo) == PER_PACKAGE | hazards("tools/t_node.py")
    # files named one by one get their package's settings too, in any order
    files = ("pkg_b/b_custom.py", "pkg_a/src/a_custom.py", "pkg_b/b_node.py", "pkg_a/tests/test_a.py")
    assert flagged(*files, cwd=repo) == hazards("pkg_a/src/a_custom.py")
    # scanned from inside a package, the findings are the same (paths relative to it)
    assert flagged(".", cwd=repo / "pkg_a") == hazards("src/a_node.py", "src/a_custom.py")


def test_command_line_flags_apply_to_every_package(tmp_path: Path) -> None:
    repo = monorepo(tmp_path)
    # --ignore replaces each package's ignore: pkg_b's RA101 comes back (pkg_a's exclude of gen/ is not pkg_b's)
    assert flagged(".", "--ignore", "RA301", cwd=repo) == PER_PACKAGE | hazards(
        "tools/t_node.py", "pkg_b/b_node.py", "pkg_b/gen/b_gen.py"
    )
    assert flagged(".", "--select", "RA2", cwd=repo) == set()


def test_config_file_forces_one_configuration_for_every_file(tmp_path: Path) -> None:
    repo = monorepo(tmp_path)
    # pkg_b's settings everywhere: no RA101 anywhere, pkg_a's sink and exclude do not exist
    assert flagged(".", "--config", "pkg_b/pyproject.toml", cwd=repo) == set()
    # pkg_a's: its sink counts in pkg_b too; its exclude and per-path-ignores are relative to pkg_a
    assert flagged(".", "--config", "pkg_a/pyproject.toml", cwd=repo) == PER_PACKAGE | hazards(
        "pkg_b/b_node.py", "pkg_b/b_custom.py", "pkg_b/gen/b_gen.py", "tools/t_node.py"
    )


def test_fail_on_comes_from_the_root_configuration_whatever_the_order(tmp_path: Path) -> None:
    repo = monorepo(tmp_path)
    (repo / "pyproject.toml").write_text('[tool.resume-audit]\nfail-on = "never"\n')
    (repo / "pkg_b" / "pyproject.toml").write_text('[tool.resume-audit]\nignore = ["RA101"]\nfail-on = "note"\n')
    # the folder holding both packages is the root: its fail-on = "never" decides, in either order
    for args in (("pkg_a", "pkg_b"), ("pkg_b", "pkg_a")):
        out = run("scan", *args, "--no-cache", "-f", "json", cwd=repo)
        assert out.returncode == 0, out.stderr
        assert {(f["path"], f["rule_id"]) for f in json.loads(out.stdout)["findings"]} == PER_PACKAGE
    # a package scanned alone is its own root: pkg_a's default fail-on (warning) fails on its findings
    assert run("scan", "pkg_a", "--no-cache", cwd=repo).returncode == 1


def test_the_cache_follows_each_files_configuration(tmp_path: Path) -> None:
    repo = monorepo(tmp_path)
    cache = ("--cache-dir", str(tmp_path / "cache"))
    assert flagged(".", *cache, cwd=repo) == PER_PACKAGE | hazards("tools/t_node.py")
    assert flagged(".", *cache, cwd=repo) == PER_PACKAGE | hazards("tools/t_node.py")  # warm
    # pkg_b's configuration changes: its files' cached results must not be reused; pkg_a's stay right
    (repo / "pkg_b" / "pyproject.toml").write_text('[tool.resume-audit]\neffect-sinks = ["billing.charge"]\n')
    expected = PER_PACKAGE | hazards("tools/t_node.py", "pkg_b/b_node.py", "pkg_b/b_custom.py", "pkg_b/gen/b_gen.py")
    assert flagged(".", *cache, cwd=repo) == expected
    assert flagged(".", *cache, cwd=repo) == expected == flagged(".", cwd=repo)
    # the same file under another package's configuration (--config) is another cache entry
    assert flagged(".", *cache, "--config", "pkg_a/pyproject.toml", cwd=repo) == flagged(
        ".", "--config", "pkg_a/pyproject.toml", cwd=repo
    )
