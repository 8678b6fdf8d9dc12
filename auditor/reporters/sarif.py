"""SARIF 2.1.0 built with sarif-om, for GitHub code scanning and every SARIF viewer.

The object model is sarif-om's; this module only fills it in and serialises
it. Serialisation maps attrs fields to their schema property names and drops
absent values -- but keeps ``level`` even when it equals the schema default
(``warning``), because users and GitHub read it explicitly.
"""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path
from typing import Any
from urllib.parse import quote, urlsplit, urlunsplit

import attr
import sarif_om as so

from resume_audit.catalog.descriptors import RuleDescriptor, descriptors
from resume_audit.catalog.docs import help_uri
from resume_audit.catalog.docs import render_rule as documentation
from resume_audit.findings import Autofix, Edit, Finding, FixSafety, FlowStep, Notification, ScanResult, Span
from resume_audit.postprocess.fingerprint import FINGERPRINT_KEY
from resume_audit.version import __version__

SARIF_SCHEMA_URI = "https://json.schemastore.org/sarif-2.1.0.json"
SRCROOT = "SRCROOT"
_ALWAYS_KEEP = {"level"}


def relative_uri(path: str) -> str:
    """A relative path as a URI reference: ``#``, ``?``, ``%``, spaces and non-ASCII percent-encoded,
    so a file named ``a#b.py`` is not read as ``a`` with a fragment (SARIF 2.1.0 §3.4.3)."""
    return quote(path, safe="/")


def _to_json_value(obj: Any) -> Any:
    if attr.has(type(obj)):
        out: dict[str, Any] = {}
        for f in attr.fields(type(obj)):
            value = getattr(obj, f.name)
            if value is None:
                continue
            default = f.default.factory() if isinstance(f.default, attr.Factory) else f.default  # type: ignore[arg-type]
            if f.name not in _ALWAYS_KEEP and default is not attr.NOTHING and value == default:
                continue
            out[f.metadata.get("schema_property_name", f.name)] = _to_json_value(value)
        return out
    if isinstance(obj, dict):
        return {k: _to_json_value(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_to_json_value(v) for v in obj]
    return obj


def _region(span: Span) -> so.Region:
    return so.Region(
        start_line=span.start_line, start_column=span.start_col, end_line=span.end_line, end_column=span.end_col
    )


def _is_absolute(path: str) -> bool:
    return path.startswith("/") or (len(path) > 2 and path[1] == ":")


def _artifact(path: str) -> so.ArtifactLocation:
    if _is_absolute(path):
        return so.ArtifactLocation(uri=Path(path).as_uri())
    return so.ArtifactLocation(uri=relative_uri(path), uri_base_id=SRCROOT)


def _physical(span: Span) -> so.PhysicalLocation:
    return so.PhysicalLocation(artifact_location=_artifact(span.path), region=_region(span))


def _location(span: Span, message: str | None = None, ident: int | None = None) -> so.Location:
    return so.Location(
        id=ident if ident is not None else -1,
        physical_location=_physical(span),
        message=so.Message(text=message) if message else None,
    )


def _rule_descriptor(rule: RuleDescriptor) -> so.ReportingDescriptor:
    def text(s: str) -> str:  # collapse the docstring-style wrapping
        return " ".join(s.split())

    return so.ReportingDescriptor(
        id=rule.id,
        name=rule.name,
        short_description=so.MultiformatMessageString(text=text(rule.summary)),
        full_description=so.MultiformatMessageString(text=text(rule.description)),
        help=so.MultiformatMessageString(
            text=f"{text(rule.runtime)} Fix: {text(rule.fix)}", markdown=documentation(rule)
        ),
        help_uri=help_uri(rule.id),
        default_configuration=so.ReportingConfiguration(level=rule.severity.value),
        properties={
            "tags": [*rule.properties, *rule.frameworks, "resume-plane"],
            "precision": "high" if rule.id.startswith("RA7") else "medium",
            "problem.severity": "error" if rule.severity.value == "error" else "warning",
        },
    )


def _code_flow(steps: tuple[FlowStep, ...]) -> so.CodeFlow:
    return so.CodeFlow(
        thread_flows=[
            so.ThreadFlow(
                locations=[
                    so.ThreadFlowLocation(
                        location=_location(step.span, step.message), nesting_level=0, execution_order=i
                    )
                    for i, step in enumerate(steps)
                ]
            )
        ]
    )


def _result(f: Finding, index: dict[str, int]) -> so.Result:
    props: dict[str, Any] = {"tags": list(f.properties), "origin": f.origin}
    if f.witness:
        props["witness"] = f.witness
    if f.confirmation is not None:
        props["confirmation"] = f.confirmation.value
        props["confirmationNote"] = f.confirmation_note
    return so.Result(
        rule_id=f.rule_id,
        rule_index=index[f.rule_id],
        level=f.severity.value,
        message=so.Message(text=f"{f.message} Fix: {f.fix}"),
        locations=[_location(f.span)],
        related_locations=[_location(r.span, r.message, i) for i, r in enumerate(f.related, start=1)],
        code_flows=[_code_flow(steps) for steps in f.flows] or None,
        partial_fingerprints={FINGERPRINT_KEY: f.fingerprint} if f.fingerprint else None,
        fixes=[_fix(f.autofix)] if f.autofix is not None else None,
        properties=props,
    )


def _fix(fix: Autofix) -> so.Fix:
    """SARIF's proposed fix: per file, regions to delete and the text to insert there."""
    by_path: dict[str, list[Edit]] = {}
    for edit in fix.edits:
        by_path.setdefault(edit.span.path, []).append(edit)
    return so.Fix(
        description=so.Message(
            text=f"{fix.description} ({fix.safety.value} fix: resume-audit fix"
            f"{' --unsafe-fixes' if fix.safety is FixSafety.UNSAFE else ''})"
        ),
        artifact_changes=[
            so.ArtifactChange(
                artifact_location=_artifact(path),
                replacements=[
                    so.Replacement(
                        deleted_region=so.Region(
                            start_line=e.span.start_line,
                            start_column=e.span.start_col,
                            end_line=e.span.end_line,
                            end_column=e.span.end_col,
                        ),
                        inserted_content=so.ArtifactContent(text=e.replacement),
                    )
                    for e in edits
                ],
            )
            for path, edits in by_path.items()
        ],
    )


def _notification(n: Notification) -> so.Notification:
    locations = None
    if n.path:
        region = so.Region(start_line=n.line, start_column=n.column) if n.line else None
        artifact = (
            so.ArtifactLocation(uri=Path(n.path).as_uri())
            if _is_absolute(n.path)
            else so.ArtifactLocation(uri=relative_uri(n.path), uri_base_id=SRCROOT)
        )
        locations = [so.Location(physical_location=so.PhysicalLocation(artifact_location=artifact, region=region))]
    return so.Notification(
        message=so.Message(text=n.message),
        level=n.level.value,
        locations=locations,
        descriptor=so.ReportingDescriptorReference(id=n.kind.value),
    )


def _provenance(root: Path) -> list[so.VersionControlDetails] | None:
    """The commit the scan saw, when the root is in a git work tree: code scanning ties alerts to it."""

    def git(*args: str) -> str:
        try:
            proc = subprocess.run(["git", "-C", str(root), *args], capture_output=True, text=True, timeout=10)
        except (OSError, subprocess.SubprocessError):
            return ""
        return proc.stdout.strip() if proc.returncode == 0 else ""

    revision = git("rev-parse", "HEAD")
    if not revision:
        return None
    remote = git("config", "--get", "remote.origin.url")
    scp = re.fullmatch(r"([\w.-]+@)?([\w.-]+):(?!//)(.+)", remote)  # git@github.com:acme/agents.git
    uri = f"ssh://{scp.group(1) or ''}{scp.group(2)}/{scp.group(3)}" if scp else remote
    if uri and "://" not in uri:  # a remote that is a folder on this machine
        uri = (root / uri).resolve().as_uri()
    parts = urlsplit(uri)
    if parts.scheme in ("http", "https") and "@" in parts.netloc:  # never a token from the remote URL
        uri = urlunsplit(parts._replace(netloc=parts.netloc.rsplit("@", 1)[1]))
    if not uri:
        top = git("rev-parse", "--show-toplevel")
        uri = Path(top).as_uri() if top else ""
    if not uri:
        return None
    branch = git("symbolic-ref", "--short", "-q", "HEAD")
    return [so.VersionControlDetails(repository_uri=uri, revision_id=revision, branch=branch or None)]


def build_sarif(result: ScanResult) -> dict[str, Any]:
    """The SARIF log as a JSON-ready dict."""
    catalog = descriptors()
    ids = sorted(set(result.rules_run) | {f.rule_id for f in result.findings})
    rules = [catalog[i] for i in ids if i in catalog]
    index = {r.id: i for i, r in enumerate(rules)}
    root_uri = Path(result.root).resolve().as_uri() + "/"
    run = so.Run(
        tool=so.Tool(
            driver=so.ToolComponent(
                name="resume-audit",
                version=__version__,
                semantic_version=__version__,
                information_uri="https://github.com/resume-audit/resume-audit",
                rules=[_rule_descriptor(r) for r in rules],
            )
        ),
        original_uri_base_ids={SRCROOT: so.ArtifactLocation(uri=root_uri)},
        results=[_result(f, index) for f in result.findings if f.rule_id in index],
        invocations=[
            so.Invocation(
                execution_successful=True,
                tool_execution_notifications=[_notification(n) for n in result.notifications] or None,
            )
        ],
        column_kind="unicodeCodePoints",
        automation_details=so.RunAutomationDetails(id=f"resume-audit/{result.category}/") if result.category else None,
        version_control_provenance=_provenance(Path(result.root)),
    )
    log = _to_json_value(so.SarifLog(version="2.1.0", schema_uri=SARIF_SCHEMA_URI, runs=[run]))
    # conventional key order: $schema and version first
    return {"$schema": log.pop("$schema"), "version": log.pop("version"), **log}


def render_sarif(result: ScanResult) -> str:
    return json.dumps(build_sarif(result), indent=2, sort_keys=False) + "\n"
