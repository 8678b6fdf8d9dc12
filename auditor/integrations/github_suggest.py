"""Post the fixes of a pull request's findings as review-comment suggestions.

GitHub renders a review comment holding a ```` ```suggestion ```` block as a change a reviewer
applies with one click; the block replaces whole lines (``start_line``..``line`` on the head
side). So a fix becomes a suggestion when all its replacements are in one file and on lines the
pull request changed (GitHub accepts review comments only on lines of the diff), and the block is
those lines with the replacements made. The review is one ``POST
/repos/{owner}/{repo}/pulls/{number}/reviews`` with ``event: COMMENT`` (it never approves or
requests changes), which needs ``pull-requests: write``.
"""

from __future__ import annotations

import json
import os
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from resume_audit.fixes.apply import FixConflict, line_starts, offset_of, splice
from resume_audit.postprocess.gitdiff import ChangedLines, DiffError, changed_lines

#: at most this many suggestions in one review: a reviewer reads them, a bot flood helps nobody
MAX_SUGGESTIONS = 30


class SuggestError(Exception):
    """The review could not be posted (no pull request in the event, no token, an API error)."""


@dataclass(frozen=True)
class Suggestion:
    """One review comment: lines ``start_line``..``line`` of ``path`` become ``replacement``."""

    path: str
    start_line: int
    line: int
    replacement: str
    rule_id: str
    description: str

    def comment(self) -> dict[str, Any]:
        body = f"**resume-audit {self.rule_id}**: {self.description}\n\n```suggestion\n{self.replacement}```\n"
        out: dict[str, Any] = {"path": self.path, "line": self.line, "side": "RIGHT", "body": body}
        if self.start_line != self.line:
            out.update(start_line=self.start_line, start_side="RIGHT")
        return out


def _replaced_lines(text: str, replacements: list[dict[str, Any]]) -> tuple[int, int, str] | None:
    """The first and last line the replacements touch, and those lines after them (with their
    line endings); None when a region does not lie in the text."""
    starts = line_starts(text)
    edits = []
    try:
        for r in replacements:
            region = r["deletedRegion"]
            start = offset_of(starts, text, region["startLine"], region.get("startColumn", 1))
            end = offset_of(starts, text, region.get("endLine", region["startLine"]), region.get("endColumn", 1))
            edits.append((start, end, r.get("insertedContent", {}).get("text", "")))
    except (FixConflict, KeyError, TypeError):
        return None
    first = min(r["deletedRegion"]["startLine"] for r in replacements)
    last = max(r["deletedRegion"].get("endLine", r["deletedRegion"]["startLine"]) for r in replacements)
    lo = starts[first - 1]
    hi = starts[last] if last < len(starts) else len(text)
    block = splice(text[lo:hi], edits, base=lo)
    if not block.endswith("\n"):
        block += "\n"
    return first, last, block


def suggestions(sarif: dict[str, Any], root: Path, changed: ChangedLines) -> list[Suggestion]:
    """A suggestion per result whose fix is in one file, entirely on changed lines, in the order of
    the SARIF (new findings only when the SARIF says which are new)."""
    out: list[Suggestion] = []
    for run in sarif.get("runs", []):
        for result in run.get("results", []) or []:
            if result.get("baselineState") == "unchanged":
                continue  # the pull request did not add it
            for fix in result.get("fixes") or []:
                changes = fix.get("artifactChanges") or []
                if len(changes) != 1:
                    continue
                uri = changes[0]["artifactLocation"]["uri"]
                path = root / urllib.request.url2pathname(uri)
                try:
                    text = path.read_bytes().decode("utf-8")
                except (OSError, UnicodeDecodeError):
                    continue
                replaced = _replaced_lines(text, changes[0].get("replacements") or [])
                if replaced is None:
                    continue
                first, last, block = replaced
                if not all(changed.touches(path, n, n) for n in range(first, last + 1)):
                    continue  # GitHub takes review comments only on lines of the diff
                rel = path.resolve().relative_to(changed.repo_root.resolve()).as_posix()
                description = fix.get("description", {}).get("text", "")
                out.append(Suggestion(rel, first, last, block, result.get("ruleId", ""), description))
    return out[:MAX_SUGGESTIONS]


def review_payload(found: list[Suggestion], head_sha: str) -> dict[str, Any]:
    return {
        "commit_id": head_sha,
        "event": "COMMENT",
        "body": f"resume-audit: {len(found)} fix{'es' if len(found) != 1 else ''} you can apply with one click.",
        "comments": [s.comment() for s in found],
    }


def post_review(payload: dict[str, Any], *, api_url: str, repository: str, number: int, token: str) -> None:
    request = urllib.request.Request(
        f"{api_url.rstrip('/')}/repos/{repository}/pulls/{number}/reviews",
        data=json.dumps(payload).encode("utf-8"),
        method="POST",
        headers={
            "Authorization": f"Bearer {token}",
            "Accept": "application/vnd.github+json",
            "X-GitHub-Api-Version": "2022-11-28",
            "Content-Type": "application/json",
        },
    )
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            response.read()
    except urllib.error.HTTPError as exc:
        detail = exc.read().decode("utf-8", "replace")[:300]
        hint = " (does the job have `pull-requests: write`?)" if exc.code in (403, 404) else ""
        raise SuggestError(f"GitHub refused the review: HTTP {exc.code}{hint}: {detail}") from exc
    except urllib.error.URLError as exc:
        raise SuggestError(f"cannot reach the GitHub API at {api_url}: {exc.reason}") from exc


def run_suggest(
    sarif_path: Path, *, workspace: Path, env: dict[str, str] | None = None, dry_run: bool = False
) -> tuple[int, dict[str, Any] | None]:
    """Read the event, find the suggestions, post them (unless ``dry_run``); (how many, the payload)."""
    env = dict(os.environ if env is None else env)
    try:
        event = json.loads(Path(env["GITHUB_EVENT_PATH"]).read_text(encoding="utf-8"))
        pull = event["pull_request"]
        number, base, head = int(pull["number"]), pull["base"]["sha"], pull["head"]["sha"]
    except (KeyError, OSError, ValueError, TypeError) as exc:
        raise SuggestError(f"not a pull_request event (GITHUB_EVENT_PATH): {exc}") from exc
    try:
        sarif = json.loads(sarif_path.read_text(encoding="utf-8"))
        changed = changed_lines(base, workspace)
    except (OSError, ValueError) as exc:
        raise SuggestError(f"cannot read {sarif_path}: {exc}") from exc
    except DiffError as exc:
        raise SuggestError(f"changed lines unknown, so no line can be suggested on: {exc}") from exc
    root_uri = ((sarif.get("runs") or [{}])[0].get("originalUriBaseIds") or {}).get("SRCROOT", {}).get("uri")
    root = Path(urllib.request.url2pathname(root_uri.removeprefix("file://"))) if root_uri else workspace
    found = suggestions(sarif, root, changed)
    if not found:
        return 0, None
    payload = review_payload(found, head)
    if not dry_run:
        token = env.get("GITHUB_TOKEN", "")
        if not token:
            raise SuggestError("no GITHUB_TOKEN: give the step `GITHUB_TOKEN: ${{ github.token }}`")
        post_review(
            payload,
            api_url=env.get("GITHUB_API_URL", "https://api.github.com"),
            repository=env["GITHUB_REPOSITORY"],
            number=number,
            token=token,
        )
    return len(found), payload
