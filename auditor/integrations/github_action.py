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

When the SARIF marks results with ``baselineState`` (see
:mod:`resume_audit.integrations.sarif_baseline`: the action compares the head scan with a
scan of the merge base, or with a baseline file), only ``new`` results are
judged and annotated; ``unchanged`` ones are listed in the summary as
pre-existing. They are not annotated at all: the pull request did not add
them, and GitHub's 10-per-level cap is better spent on what it did add.
"""

from __future__ import annotations

import dataclasses
import json
import os
import sys
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable
from urllib.parse import quote, unquote, urlparse

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

from resume_audit.config.settings import find_pyproject, load_config
from resume_audit.findings import NOT_UNANALYSED, PROPERTIES, Severity
from resume_audit.integrations.sarif_baseline import REFERENCE_KEY, UNAVAILABLE_KEY, BaselineState
from resume_audit.postprocess.gitdiff import ChangedLines, DiffError, changed_lines
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
    #: SARIF ``baselineState``: "new", "unchanged" (pre-existing), or "" when nothing was compared
    baseline_state: str = ""

    @property
    def severity(self) -> Severity:
        return _SEVERITY.get(self.level, Severity.WARNING)

    @property
    def pre_existing(self) -> bool:
        return self.baseline_state == BaselineState.UNCHANGED.value


#: notification kinds that do not mean a file went unanalysed (see ScanResult.unanalysed)
_NOT_UNANALYSED = {kind.value for kind in NOT_UNANALYSED}


@dataclass(frozen=True)
class Notice:
    """A tool execution notification read back from SARIF."""

    message: str
    #: the file it concerns, root-relative as in the SARIF ("" for a scan-wide one)
    path: str
    #: False for information that is not about a file left unanalysed (a baseline that matched nothing)
    unanalysed: bool


@dataclass(frozen=True)
class SarifRun:
    """What ``github-report`` needs from one SARIF log."""

    findings: list[Reported]
    notices: list[Notice]
    #: the source root (SRCROOT)
    root: Path | None
    #: what ``baselineState`` was judged against, e.g. "the merge base abc1234" (None: nothing compared)
    reference: str | None
    #: why nothing could be compared although it was asked for (the base could not be scanned)
    reference_unavailable: str | None


def _uri_path(uri: str) -> str:
    return unquote(urlparse(uri).path) if uri.startswith("file://") else unquote(uri)


def read_sarif(path: Path) -> tuple[list[Reported], list[str], Path | None]:
    """Findings, tool notification messages and the source root (SRCROOT) of a resume-audit SARIF log."""
    run = read_sarif_run(path)
    return run.findings, [n.message for n in run.notices], run.root


def read_sarif_run(path: Path) -> SarifRun:
    """Everything ``github-report`` reads from a resume-audit SARIF log."""
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
        uri = _uri_path(loc["artifactLocation"]["uri"])
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
                baseline_state=str(result.get("baselineState", "")),
            )
        )
    notices = [
        _notice(n) for inv in run.get("invocations", []) for n in inv.get("toolExecutionNotifications", []) or []
    ]
    props = run.get("properties", {}) or {}
    return SarifRun(
        findings=out,
        notices=notices,
        root=root,
        reference=props.get(REFERENCE_KEY) or None,
        reference_unavailable=props.get(UNAVAILABLE_KEY) or None,
    )


def _notice(n: dict[str, Any]) -> Notice:
    locations = n.get("locations") or []
    uri = locations[0].get("physicalLocation", {}).get("artifactLocation", {}).get("uri", "") if locations else ""
    kind = (n.get("descriptor") or {}).get("id", "")
    return Notice(
        message=n["message"]["text"], path=_uri_path(uri) if uri else "", unanalysed=kind not in _NOT_UNANALYSED
    )


def mark_changed(findings: list[Reported], changed: ChangedLines, root: Path) -> list[Reported]:
    out = []
    for f in findings:
        path = Path(f.path) if Path(f.path).is_absolute() else root / f.path
        out.append(dataclasses.replace(f, on_changed_line=changed.touches(path, f.start_line, f.end_line)))
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
    where = [f"file={escape_property(f.path)}", f"line={f.start_line}", f"endLine={f.end_line}"]
    if f.end_line == f.start_line:  # GitHub: columns only for an annotation on a single line
        where += [f"col={f.start_col}", f"endColumn={f.end_col}"]
    props = ",".join([*where, f"title={escape_property(title)}"])
    message = f"[{f.confirmation}] {f.message}" if f.confirmation else f.message
    return f"::{_GH_LEVEL.get(f.level, 'warning')} {props}::{escape_data(message)}"


def link(f: Reported, server: str | None, repository: str | None, sha: str | None) -> str:
    where = f"{f.path}:{f.start_line}"
    if not (server and repository and sha) or Path(f.path).is_absolute():
        return f"`{where}`"
    lines = f"L{f.start_line}" if f.end_line == f.start_line else f"L{f.start_line}-L{f.end_line}"
    return f"[`{where}`]({server}/{repository}/blob/{sha}/{quote(f.path)}#{lines})"


def head_sha(env: dict[str, str]) -> str | None:
    """The commit a reader of the summary should see: the pull request's head, from the event
    payload. ``GITHUB_SHA`` is, on ``pull_request``, a temporary merge commit whose links break
    once the branch moves on."""
    event_path = env.get("GITHUB_EVENT_PATH")
    if event_path:
        try:
            event = json.loads(Path(event_path).read_text(encoding="utf-8"))
            sha = event["pull_request"]["head"]["sha"]
            if isinstance(sha, str) and sha:
                return sha
        except (OSError, ValueError, KeyError, TypeError):
            pass
    return env.get("GITHUB_SHA")


def resolve_fail_on(fail_on: str | None, config_from: Path) -> tuple[str, str]:
    """The ``fail-on`` to apply and where it came from: the explicit value, else the scanned
    project's ``[tool.resume-audit] fail-on`` (found as ``resume-audit scan`` finds it), else warning."""
    if fail_on:
        return fail_on, "the fail-on input"
    from resume_audit.rules import all_rules

    pyproject = find_pyproject(config_from) if config_from.exists() else None
    if pyproject is None:
        return "warning", "the default"
    config = load_config(pyproject, [r.id for r in all_rules()])  # validates, as the scan did
    try:
        where = pyproject.resolve().relative_to(Path.cwd().resolve()).as_posix()
    except ValueError:
        where = str(pyproject)
    table = tomllib.loads(pyproject.read_text(encoding="utf-8")).get("tool", {}).get("resume-audit", {})
    return config.fail_on, f"{where}" if "fail-on" in table else "the default"


@dataclass(frozen=True)
class Judgement:
    """What the report decided: the findings judged, the verdict and the ``fail-on`` behind it."""

    #: the findings the verdict and the annotations are about: the new ones, or all when nothing was compared
    judged: list[Reported]
    pre_existing: list[Reported]
    fail_on: str
    #: where ``fail_on`` came from: "the fail-on input", a pyproject.toml, "the default"
    fail_on_source: str
    failing: bool
    #: whether changed lines are known (a base was given and diffed)
    changed_known: bool


def judge(findings: list[Reported], fail_on: str, fail_on_source: str, *, changed_known: bool) -> Judgement:
    judged = [f for f in findings if not f.pre_existing]
    if fail_on == "confirmed":  # an audit's SARIF: fail on what the sweep reproduced
        failing = any(f.confirmation in ("confirmed", "dynamic-only") for f in judged)
    else:
        threshold = None if fail_on == "never" else Severity(fail_on)
        failing = threshold is not None and any(f.severity.rank >= threshold.rank for f in judged)
    return Judgement(judged, [f for f in findings if f.pre_existing], fail_on, fail_on_source, failing, changed_known)


def _plural(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


def _finding_item(
    f: Reported, server: str | None, repository: str | None, sha: str | None, *, changed_known: bool
) -> str:
    mark = " (changed line)" if changed_known and f.on_changed_line else ""
    first_sentence = f.message.split(". ")[0].rstrip(".")
    return f"- **{f.level} {f.rule_id}** {link(f, server, repository, sha)}{mark}: {escape_markdown(first_sentence)}."


def escape_markdown(text: str) -> str:
    """A scanned file's text in the summary: no HTML, no stray table pipes."""
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace("|", "\\|")


def summary_markdown(
    run: SarifRun,
    judgement: Judgement,
    shown: int,
    *,
    diff_note: str | None,
    server: str | None = None,
    repository: str | None = None,
    sha: str | None = None,
) -> str:
    findings, j = run.findings, judgement
    compared = run.reference is not None
    lines = ["## resume-audit", ""]
    if not findings:
        lines.append("No resume-plane hazards found.")
    else:
        by_level = Counter(f.severity.value for f in findings)
        parts = ", ".join(f"{by_level[s.value]} {s.value}" for s in Severity if by_level[s.value])
        head = f"**{_plural(len(findings), 'finding')}** ({parts})"
        if compared:
            head += f": **{len(j.judged)} new**, {len(j.pre_existing)} pre-existing (already in {run.reference})"
        head += "."
        if j.changed_known:
            head += f" {sum(1 for f in findings if f.on_changed_line)} on lines this change touches."
        lines.append(head)
    verdict = "fails" if j.failing else "passes"
    judged_what = f"new findings judged ({len(j.judged)})" if compared else "every finding judged"
    lines += ["", f"The check **{verdict}** (`fail-on: {j.fail_on}`, from {j.fail_on_source}; {judged_what})."]
    if run.reference_unavailable:
        lines += [
            "",
            f"> **New findings could not be told from pre-existing ones:** {run.reference_unavailable} Every finding is judged.",
        ]
    if diff_note:
        lines += ["", f"> {diff_note}"]
    if findings:
        new_col = " new |" if compared else ""
        lines += [
            "",
            "### By rule",
            "",
            f"| rule | property | findings |{new_col}",
            "|---|---|---:|" + ("---:|" if compared else ""),
        ]
        by_rule = Counter((f.rule_id, f.rule_name, "/".join(f.properties)) for f in findings)
        new_by_rule = Counter((f.rule_id, f.rule_name, "/".join(f.properties)) for f in j.judged)
        for key, n in sorted(by_rule.items()):
            rid, name, props = key
            lines.append(f"| {rid} {name} | {props} | {n} |" + (f" {new_by_rule[key]} |" if compared else ""))
        lines += ["", "### By property", "", "| property | findings |", "|---|---:|"]
        by_prop = Counter(p for f in findings for p in f.properties)
        for prop, n in sorted(by_prop.items()):
            lines.append(f"| {prop} ({PROPERTIES[prop]}) | {n} |")
        if j.judged:
            lines += ["", "### New findings" if compared else "### Top findings", ""]
            lines += [
                _finding_item(f, server, repository, sha, changed_known=j.changed_known)
                for f in prioritise(j.judged)[:TOP_FINDINGS]
            ]
            if len(j.judged) > TOP_FINDINGS:
                lines.append(f"- ... and {len(j.judged) - TOP_FINDINGS} more.")
            hidden = len(j.judged) - shown
            what = "new findings" if compared else "findings"
            lines += [
                "",
                f"{shown} of {len(j.judged)} {what} are annotated on the diff"
                + (
                    f"; {hidden} not shown (GitHub shows at most {PER_LEVEL_PER_STEP} per level per step, {PER_JOB} per job) -- see the code scanning results or the SARIF artifact."
                    if hidden
                    else "."
                ),
            ]
        if j.pre_existing:
            lines += [
                "",
                f"### {_plural(len(j.pre_existing), 'pre-existing finding')}",
                "",
                f"Already in {run.reference}: listed here, not annotated, and not judged.",
                "",
            ]
            lines += [
                _finding_item(f, server, repository, sha, changed_known=j.changed_known)
                for f in prioritise(j.pre_existing)[:TOP_FINDINGS]
            ]
            if len(j.pre_existing) > TOP_FINDINGS:
                lines.append(f"- ... and {len(j.pre_existing) - TOP_FINDINGS} more.")
    unanalysed = [n for n in run.notices if n.unanalysed]
    if unanalysed:
        lines += ["", f"### {_plural(len(unanalysed), 'file')} could not be analysed", ""]
        lines += [
            f"- `{n.path}`: {escape_markdown(n.message)}" if n.path else f"- {escape_markdown(n.message)}"
            for n in unanalysed[:20]
        ]
        if len(unanalysed) > 20:
            lines.append(f"- ... and {len(unanalysed) - 20} more (see the SARIF's tool notifications).")
    other = [n for n in run.notices if not n.unanalysed]
    if other:
        lines += ["", "### Notes", ""] + [f"- {escape_markdown(n.message)}" for n in other[:20]]
    return "\n".join(lines) + "\n"


def run_report(
    sarif: Path,
    *,
    fail_on: str | None,
    annotate: bool,
    base: str | None,
    workspace: Path,
    env: dict[str, str] | None = None,
    config_from: Path | None = None,
) -> tuple[int, str, list[str]]:
    """Do the whole report. Returns (exit code, summary markdown, annotation lines) and writes
    ``$GITHUB_STEP_SUMMARY`` / ``$GITHUB_OUTPUT`` when they are set. ``fail_on`` None: the
    scanned project's configuration decides (found from ``config_from``, default ``workspace``)."""
    env = dict(os.environ if env is None else env)
    run = read_sarif_run(sarif)
    threshold, source = resolve_fail_on(fail_on, config_from or workspace)
    root = run.root or workspace
    diff_note = None
    changed_known = False
    if base:
        try:
            changed = changed_lines(base, workspace)
            run = dataclasses.replace(run, findings=mark_changed(run.findings, changed, root))
            changed_known = True
            if changed.approximate:
                diff_note = f"The merge base with `{base}` is not in this shallow checkout; changed lines were taken from a diff against `{base}` itself."
        except DiffError as exc:
            diff_note = f"Changed lines unknown ({exc}); annotations are ordered by severity only."
    judgement = judge(run.findings, threshold, source, changed_known=changed_known)
    chosen = select_annotations(judgement.judged) if annotate else []
    summary = summary_markdown(
        run,
        judgement,
        len(chosen),
        diff_note=diff_note,
        server=env.get("GITHUB_SERVER_URL"),
        repository=env.get("GITHUB_REPOSITORY"),
        sha=head_sha(env),
    )
    annotations = [annotation_line(f) for f in chosen]
    if env.get("GITHUB_STEP_SUMMARY"):
        with open(env["GITHUB_STEP_SUMMARY"], "a", encoding="utf-8") as fh:
            fh.write(summary)
    if env.get("GITHUB_OUTPUT"):
        counts = Counter(f.severity.value for f in judgement.judged)
        with open(env["GITHUB_OUTPUT"], "a", encoding="utf-8") as fh:
            fh.write(f"findings={len(run.findings)}\n")
            fh.write(f"new-findings={len(judgement.judged)}\n")
            fh.write(f"pre-existing={len(judgement.pre_existing)}\n")
            for level in ("error", "warning", "note"):
                fh.write(f"{level}s={counts[level]}\n")
            fh.write(f"annotated={len(chosen)}\n")
            fh.write(f"fail-on={threshold}\n")
            fh.write(f"failing={'true' if judgement.failing else 'false'}\n")
            fh.write(f"sarif-file={sarif}\n")
    return (1 if judgement.failing else 0), summary, annotations
