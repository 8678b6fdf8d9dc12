"""SARIF output: valid against the official 2.1.0 schema, complete, and stably fingerprinted."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest
from conftest import REPO, write_tree

from resume_audit.api import ScanRequest, resolve_config
from resume_audit.config.settings import Config
from resume_audit.engine.scan import scan
from resume_audit.postprocess.fingerprint import FINGERPRINT_KEY
from resume_audit.reporters.sarif import build_sarif

SCHEMA = json.loads((Path(__file__).parent / "data" / "sarif-schema-2.1.0.json").read_text())


def validate_sarif(log: dict) -> None:
    jsonschema.Draft4Validator(SCHEMA).validate(log)


def sarif_for(path: Path, root: Path) -> dict:
    result = scan([path], resolve_config(ScanRequest(paths=[path])), root)
    log = build_sarif(result)
    validate_sarif(log)
    return log


def test_fixture_sarif_is_schema_valid_and_complete() -> None:
    log = sarif_for(REPO / "fixtures", REPO)
    run = log["runs"][0]
    rules = run["tool"]["driver"]["rules"]
    assert [r["id"] for r in rules] == sorted(r["id"] for r in rules)
    for rule in rules:
        for key in ("shortDescription", "fullDescription", "help", "helpUri", "defaultConfiguration", "properties"):
            assert key in rule, (rule["id"], key)
        assert rule["help"]["markdown"].startswith(f"# {rule['id']}")
        assert rule["helpUri"].endswith(f"/docs/rules/{rule['id']}.md")
        assert rule["defaultConfiguration"]["level"] in ("error", "warning", "note")
        assert set(rule["properties"]["tags"]) & {"EO", "PC", "FD", "FI", "CV", "CO", "RD", "LV"}
    assert run["originalUriBaseIds"]["SRCROOT"]["uri"] == REPO.as_uri() + "/"
    assert len(run["results"]) >= 16
    for result in run["results"]:
        assert rules[result["ruleIndex"]]["id"] == result["ruleId"]
        assert result["level"] in ("error", "warning", "note")
        loc = result["locations"][0]["physicalLocation"]
        assert loc["artifactLocation"]["uriBaseId"] == "SRCROOT"
        assert loc["artifactLocation"]["uri"].startswith("fixtures/")
        assert (REPO / loc["artifactLocation"]["uri"]).is_file()
        region = loc["region"]
        assert {"startLine", "startColumn", "endLine", "endColumn"} <= region.keys()
        assert result["relatedLocations"], result
        assert len(result["partialFingerprints"][FINGERPRINT_KEY]) == 32
        assert "Fix:" in result["message"]["text"]


def test_cross_module_effect_has_code_flow() -> None:
    log = sarif_for(REPO / "fixtures" / "myagent", REPO)
    ra101 = [r for r in log["runs"][0]["results"] if r["ruleId"] == "RA101"]
    flows = [r["codeFlows"] for r in ra101 if "codeFlows" in r]
    assert flows, "the helper-reached effect must carry a code flow node -> helper -> sink"
    steps = flows[0][0]["threadFlows"][0]["locations"]
    uris = [s["location"]["physicalLocation"]["artifactLocation"]["uri"] for s in steps]
    assert uris == ["fixtures/myagent/myagent/graph.py", "fixtures/myagent/myagent/tools/notify.py"]


def test_notifications_for_unparsable_files_are_schema_valid(tmp_path: Path) -> None:
    write_tree(tmp_path, {"broken.py": "import langgraph\ndef f(:\n  pass\n", "ok.py": "x = 1\n"})
    (tmp_path / "latin1.py").write_bytes("s = 'caf\xe9'\n".encode("latin-1"))
    log = sarif_for(tmp_path, tmp_path)
    notes = log["runs"][0]["invocations"][0]["toolExecutionNotifications"]
    by_uri = {n["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]: n for n in notes}
    assert set(by_uri) == {"broken.py", "latin1.py"}
    assert by_uri["broken.py"]["descriptor"]["id"] == "parse-error"
    assert by_uri["broken.py"]["locations"][0]["physicalLocation"]["region"]["startLine"] == 2
    assert by_uri["latin1.py"]["descriptor"]["id"] == "decode-error"


HAZARD = """import requests
from langgraph.types import interrupt


def node(state):
    requests.post("https://example.com/x", json=state)
    return {"ok": interrupt("go?")}


def other(state):
    requests.post("https://example.com/x", json=state)
    return {"ok": interrupt("again?")}
"""


def _fingerprints(root: Path) -> dict[int, str]:
    log = sarif_for(root, root)
    return {
        r["locations"][0]["physicalLocation"]["region"]["startLine"]: r["partialFingerprints"][FINGERPRINT_KEY]
        for r in log["runs"][0]["results"]
    }


def test_fingerprints_survive_unrelated_edits_above(tmp_path: Path) -> None:
    write_tree(tmp_path, {"agent.py": HAZARD})
    before = _fingerprints(tmp_path)
    assert len(set(before.values())) == 2, "identical code in two functions must still get two fingerprints"
    edited = '"""Module docstring added later."""\nimport os  # new import\n\n' + HAZARD.replace(
        "import requests", "import requests  # http"
    )
    write_tree(tmp_path, {"agent.py": edited})
    after = _fingerprints(tmp_path)
    assert sorted(after) == [k + 3 for k in sorted(before)]
    assert sorted(after.values()) == sorted(before.values())
    # changing the flagged line itself changes that finding's fingerprint only
    write_tree(
        tmp_path,
        {
            "agent.py": HAZARD.replace(
                'requests.post("https://example.com/x", json=state)\n    return {"ok": interrupt("go?")}',
                'requests.post("https://example.com/y", json=state)\n    return {"ok": interrupt("go?")}',
            )
        },
    )
    changed = _fingerprints(tmp_path)
    assert len(set(changed.values()) & set(before.values())) == 1


@pytest.mark.parametrize("fmt", ["sarif"])
def test_empty_tree_sarif_is_valid(tmp_path: Path, fmt: str) -> None:
    log = sarif_for(tmp_path, tmp_path)
    assert log["runs"][0]["results"] == []


def test_relative_uris_are_percent_encoded(tmp_path: Path) -> None:
    """A file named ``a#b c?é.py`` (legal on Linux) must not read as ``a`` with a fragment: the URI is
    percent-encoded, still schema-valid, and the GitHub reporter maps it back to the file."""
    from resume_audit.integrations.github_action import read_sarif

    source = next((REPO / "fixtures" / "static" / "ra101").glob("*hazard*.py"), None) or next(
        (REPO / "fixtures" / "static" / "ra101").rglob("*.py")
    )
    odd = tmp_path / "a#b c?é.py"
    odd.write_text(source.read_text())
    log = sarif_for(tmp_path, tmp_path)
    uris = {r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] for r in log["runs"][0]["results"]}
    assert uris == {"a%23b%20c%3F%C3%A9.py"}
    out = tmp_path / "log.sarif"
    out.write_text(json.dumps(log))
    reported, _notes, _root = read_sarif(out)
    assert {r.path for r in reported} == {"a#b c?é.py"}


def test_category_and_commit_for_code_scanning(tmp_path: Path) -> None:
    """``automationDetails.id`` names what was scanned (two jobs scanning different paths must not
    close each other's alerts) and ``versionControlProvenance`` the commit, when in git."""
    import subprocess

    (tmp_path / "agents").mkdir()
    (tmp_path / "agents" / "graph.py").write_text(
        (REPO / "fixtures" / "static" / "ra101" / "hazard_refund_loop.py").read_text()
    )
    outside = build_sarif(scan([tmp_path / "agents"], Config(), tmp_path, jobs=1))["runs"][0]
    assert outside["automationDetails"] == {"id": "resume-audit/scan/agents/"}
    assert "versionControlProvenance" not in outside  # not a git work tree

    def git(*args: str) -> str:
        return subprocess.run(["git", *args], cwd=tmp_path, check=True, capture_output=True, text=True).stdout.strip()

    git("init", "-q", "-b", "main")
    git("add", "-A")
    git("-c", "user.email=ci@example.com", "-c", "user.name=ci", "commit", "-qm", "agents")
    git("remote", "add", "origin", "git@github.com:acme/agents.git")
    log = build_sarif(scan([tmp_path / "agents"], Config(), tmp_path, jobs=1))
    validate_sarif(log)
    [provenance] = log["runs"][0]["versionControlProvenance"]
    assert provenance == {
        "repositoryUri": "ssh://git@github.com/acme/agents.git",
        "revisionId": git("rev-parse", "HEAD"),
        "branch": "main",
    }
    git("remote", "set-url", "origin", "https://x-access-token:ghs_secret@github.com/acme/agents.git")
    [provenance] = build_sarif(scan([tmp_path / "agents"], Config(), tmp_path, jobs=1))["runs"][0][
        "versionControlProvenance"
    ]
    assert provenance["repositoryUri"] == "https://github.com/acme/agents.git"  # the token stays out of the report
