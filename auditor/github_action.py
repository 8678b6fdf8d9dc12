"""The pull-request side of the GitHub Action: annotations, job summary, outputs, verdict.

The action scans once to SARIF (which code scanning ingests); this module
reads that SARIF back and does the rest, so nothing is scanned twice:

* annotations within GitHub's limits -- at most 10 per level per step and 50
  per job -- choosing findings on lines the pull request changed first, then
  the most severe;
* a markdown job summary (``$GITHUB_STEP_SUMMARY``): counts by rule and by
  contract property, the top findings linked to their lines, and how many
  annotations were not shown;
* step outputs (``$GITHUB_OUTPUT``) and the exit code ``--fail-on`` asks for.
"""

from __future__ import annotations

import json
import os
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable
from urllib.parse import unquote, urlparse

from resume_audit.findings import PROPERTIES, Severity
from resume_audit.gitdiff import ChangedLines, DiffError, changed_lines
from resume_audit.reporters.github import escape_data, escape_property

#: GitHub's annotation limits (https://docs.github.com/actions: "10 warning, 10 error
#: and 10 notice annotations per step, 50 per job").
PER_LEVEL_PER_STEP = 10
PER_JOB = 50
TOP_FINDINGS = 10

_GH_LEVEL = {"error": "error", "warning": "warning", "note": "notice", "none": "notice"}
_SEVERITY = {"error": Severity.ERROR, "warning": Severity.WARNING, "note": Severity.NOTE, "none": Severity.NOTE}


class SarifReadError(Exception):
    """The SARIF file is missing or not a resume-audit SARIF log (exit 2)."""


@dataclass(frozen=True)
class Reported:
    """One finding as read back from SARIF."""

    rule_id: str
    rule_name: str
    level: str
    properties: tuple[str, ...]
    path: str
    start_line: int
    end_line: int
    start_col: int
    end_col: int
    message: str
    on_changed_line: bool = False
    #: ``audit`` runs: "confirmed", "not-reproduced", "not-exercised" or "dynamic-only"; "" for a scan
    confirmation: str = ""

    @property
    def severity(self) -> Severity:
        return _SEVERITY.get(self.level, Severity.WARNING)


def read_sarif(path: Path) -> tuple[list[Reported], list[str], Path | None]:
    """Findings, tool notifications and the source root (SRCROOT) of a resume-audit SARIF log."""
    try:
        log = json.loads(path.read_text(encoding="utf-8"))
        run = log["runs"][0]
    except FileNotFoundError as exc:
        raise SarifReadError(f"SARIF file not found: {path}") from exc
    except (OSError, ValueError, KeyError, IndexError, TypeError) as exc:
        raise SarifReadError(f"{path} is not a SARIF log: {exc}") from exc
    rules = run.get("tool", {}).get("driver", {}).get("rules", [])
    root_uri = run.get("originalUriBaseIds", {}).get("SRCROOT", {}).get("uri")
    root = Path(unquote(urlparse(root_uri).path)) if root_uri else None
    out: list[Reported] = []
    for result in run.get("results", []):
        rule = rules[result["ruleIndex"]] if 0 <= result.get("ruleIndex", -1) < len(rules) else {}
        loc = result["locations"][0]["physicalLocation"]
        region = loc.get("region", {})
        uri = loc["artifactLocation"]["uri"]
        uri = unquote(urlparse(uri).path) if uri.startswith("file://") else unquote(uri)
        tags = tuple(t for t in result.get("properties", {}).get("tags", []) if t in PROPERTIES)
        out.append(
            Reported(
                rule_id=result["ruleId"],
                rule_name=rule.get("name", ""),
                level=result.get("level", "warning"),
                properties=tags,
                path=uri,
                start_line=region.get("startLine", 1),
                end_line=region.get("endLine", region.get("startLine", 1)),
                start_col=region.get("startColumn", 1),
                end_col=region.get("endColumn", region.get("startColumn", 1)),
                message=result["message"]["text"],
                confirmation=str(result.get("properties", {}).get("confirmation", "")),
            )
        )
    notes = [n["message"]["text"] for inv in run.get("invocations", []) for n in inv.get("toolExecutionNotifications", []) or []]
    return out, notes, root


def mark_changed(findings: list[Reported], changed: ChangedLines, root: Path) -> list[Reported]:
    out = []
    for f in findings:
        path = Path(f.path) if Path(f.path).is_absolute() else root / f.path
        out.append(Reported(**{**f.__dict__, "on_changed_line": changed.touches(path, f.start_line, f.end_line)}))
    return out


def prioritise(findings: Iterable[Reported]) -> list[Reported]:
    """Changed lines first, then worst severity, then location."""
    return sorted(findings, key=lambda f: (not f.on_changed_line, -f.severity.rank, f.path, f.start_line, f.rule_id))


def select_annotations(findings: list[Reported]) -> list[Reported]:
    """Respect GitHub's caps: 10 per level for this step, 50 for the job."""
    per_level: Counter[str] = Counter()
    chosen: list[Reported] = []
    for f in prioritise(findings):
        level = _GH_LEVEL.get(f.level, "warning")
        if per_level[level] >= PER_LEVEL_PER_STEP or len(chosen) >= PER_JOB:
            continue
        per_level[level] += 1
        chosen.append(f)
    return chosen


def annotation_line(f: Reported) -> str:
    title = f"{f.rule_id} {f.rule_name}".strip()
    props = ",".join(
        [
            f"file={escape_property(f.path)}",
            f"line={f.start_line}",
            f"endLine={f.end_line}",
            f"col={f.start_col}",
            f"endColumn={f.end_col}",
            f"title={escape_property(title)}",
        ]
    )
    message = f"[{f.confirmation}] {f.message}" if f.confirmation else f.message
    return f"::{_GH_LEVEL.get(f.level, 'warning')} {props}::{escape_data(message)}"


def link(f: Reported, server: str | None, repository: str | None, sha: str | None) -> str:
    where = f"{f.path}:{f.start_line}"
    if not (server and repository and sha) or Path(f.path).is_absolute():
        return f"`{where}`"
    lines = f"L{f.start_line}" if f.end_line == f.start_line else f"L{f.start_line}-L{f.end_line}"
    return f"[`{where}`]({server}/{repository}/blob/{sha}/{f.path}#{lines})"


def summary_markdown(
    findings: list[Reported],
    notes: list[str],
    shown: int,
    *,
    fail_on: str,
    failing: bool,
    diff_note: str | None,
    server: str | None = None,
    repository: str | None = None,
    sha: str | None = None,
) -> str:
    by_level = Counter(f.severity.value for f in findings)
    lines = ["## resume-audit", ""]
    if not findings:
        lines.append("No resume-plane hazards found.")
    else:
        parts = ", ".join(f"{by_level[s.value]} {s.value}" for s in Severity if by_level[s.value])
        changed = sum(1 for f in findings if f.on_changed_line)
        lines.append(f"**{len(findings)} finding{'s' if len(findings) != 1 else ''}** ({parts}); {changed} on lines this change touches.")
    verdict = "fails" if failing else "passes"
    lines += ["", f"The check **{verdict}** (`fail-on: {fail_on}`)."]
    if diff_note:
        lines += ["", f"> {diff_note}"]
    if findings:
        lines += ["", "### By rule", "", "| rule | property | findings |", "|---|---|---:|"]
        by_rule = Counter((f.rule_id, f.rule_name, "/".join(f.properties)) for f in findings)
        for (rid, name, props), n in sorted(by_rule.items()):
            lines.append(f"| {rid} {name} | {props} | {n} |")
        lines += ["", "### By property", "", "| property | findings |", "|---|---:|"]
        by_prop = Counter(p for f in findings for p in f.properties)
        for prop, n in sorted(by_prop.items()):
            lines.append(f"| {prop} ({PROPERTIES[prop]}) | {n} |")
        lines += ["", f"### Top findings", ""]
        for f in prioritise(findings)[:TOP_FINDINGS]:
            mark = " (changed line)" if f.on_changed_line else ""
            first_sentence = f.message.split(". ")[0].rstrip(".")
            lines.append(f"- **{f.level} {f.rule_id}** {link(f, server, repository, sha)}{mark}: {first_sentence}.")
        hidden = len(findings) - shown
        lines += [
            "",
            f"{shown} of {len(findings)} findings are annotated on the diff"
            + (f"; {hidden} not shown (GitHub shows at most {PER_LEVEL_PER_STEP} per level per step, {PER_JOB} per job) -- see the code scanning results or the SARIF artifact." if hidden else "."),
        ]
    if notes:
        lines += ["", f"### {len(notes)} file(s) could not be analysed", ""] + [f"- {n}" for n in notes[:20]]
    return "\n".join(lines) + "\n"


def run_report(
    sarif: Path,
    *,
    fail_on: str,
    annotate: bool,
    base: str | None,
    workspace: Path,
    env: dict[str, str] | None = None,
) -> tuple[int, str, list[str]]:
    """Do the whole report. Returns (exit code, summary markdown, annotation lines) and writes
    ``$GITHUB_STEP_SUMMARY`` / ``$GITHUB_OUTPUT`` when they are set."""
    env = dict(os.environ if env is None else env)
    findings, notes, root = read_sarif(sarif)
    root = root or workspace
    diff_note = None
    if base:
        try:
            changed = changed_lines(base, workspace)
            findings = mark_changed(findings, changed, root)
            if changed.approximate:
                diff_note = f"The merge base with `{base}` is not in this shallow checkout; changed lines were taken from a diff against `{base}` itself."
        except DiffError as exc:
            diff_note = f"Changed lines unknown ({exc}); annotations are ordered by severity only."
    chosen = select_annotations(findings) if annotate else []
    if fail_on == "confirmed":  # an audit's SARIF: fail on what the sweep reproduced
        failing = any(f.confirmation in ("confirmed", "dynamic-only") for f in findings)
    else:
        threshold = None if fail_on == "never" else Severity(fail_on)
        failing = threshold is not None and any(f.severity.rank >= threshold.rank for f in findings)
    summary = summary_markdown(
        findings,
        notes,
        len(chosen),
        fail_on=fail_on,
        failing=failing,
        diff_note=diff_note,
        server=env.get("GITHUB_SERVER_URL"),
        repository=env.get("GITHUB_REPOSITORY"),
        sha=env.get("GITHUB_SHA"),
    )
    annotations = [annotation_line(f) for f in chosen]
    if env.get("GITHUB_STEP_SUMMARY"):
        with open(env["GITHUB_STEP_SUMMARY"], "a", encoding="utf-8") as fh:
            fh.write(summary)
    if env.get("GITHUB_OUTPUT"):
        counts = Counter(f.severity.value for f in findings)
        with open(env["GITHUB_OUTPUT"], "a", encoding="utf-8") as fh:
            fh.write(f"findings={len(findings)}\n")
            for level in ("error", "warning", "note"):
                fh.write(f"{level}s={counts[level]}\n")
            fh.write(f"annotated={len(chosen)}\n")
            fh.write(f"failing={'true' if failing else 'false'}\n")
            fh.write(f"sarif-file={sarif}\n")
    return (1 if failing else 0), summary, annotations
