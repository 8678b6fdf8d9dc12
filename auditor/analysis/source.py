"""Reading and parsing one file, turning every way it can fail into a notification.

The scan must never stop because one file is bad: a file that cannot be read,
is not valid text in its declared encoding, or does not parse is reported and
skipped, and the rest of the tree is scanned.
"""

from __future__ import annotations

import ast
import io
import tokenize
from dataclasses import dataclass
from pathlib import Path

import libcst as cst

from auditor.findings import Notification, NotificationKind


@dataclass(frozen=True)
class SourceText:
    """A file's decoded text, ready to parse."""

    path: Path
    display_path: str
    text: str
    encoding: str


def read_source(path: Path, display_path: str) -> SourceText | Notification:
    """Read and decode ``path`` honouring PEP 263 coding cookies and a UTF-8 BOM."""
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        return Notification(NotificationKind.UNREADABLE, "file vanished before it could be read", display_path)
    except (PermissionError, IsADirectoryError, OSError) as exc:
        return Notification(NotificationKind.UNREADABLE, f"cannot read file: {exc.strerror or exc}", display_path)
    return decode_source(raw, path, display_path)


def decode_source(raw: bytes, path: Path, display_path: str) -> SourceText | Notification:
    """Decode file bytes as Python does (coding cookie, BOM, default UTF-8)."""
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(raw).readline)
    except SyntaxError as exc:
        return Notification(NotificationKind.DECODE_ERROR, f"cannot determine encoding: {exc}", display_path)
    try:
        text = raw.decode(encoding)
    except (UnicodeDecodeError, LookupError) as exc:
        return Notification(
            NotificationKind.DECODE_ERROR,
            f"not valid {encoding} text ({exc.__class__.__name__}: {exc}); file skipped",
            display_path,
        )
    if text.startswith("\ufeff"):
        text = text[1:]
    return SourceText(path=path, display_path=display_path, text=text, encoding=encoding)


def parse_source(source: SourceText) -> cst.Module | Notification:
    """Parse with LibCST; a syntax error becomes a parse-error notification with its position.

    LibCST's error positions can point past the real mistake, so the position
    and wording come from the compiler's own parser (``ast.parse`` only parses;
    it never runs the code) when it agrees the file is invalid.
    """
    try:
        return cst.parse_module(source.text)
    except cst.ParserSyntaxError as exc:
        line, column, reason = exc.raw_line, exc.raw_column + 1, exc.message
        try:
            ast.parse(source.text)
        except SyntaxError as py_exc:
            line, column, reason = py_exc.lineno or line, py_exc.offset or column, py_exc.msg
        except (ValueError, RecursionError, MemoryError):
            pass
        else:
            reason = f"LibCST cannot parse this file ({exc.message})"
        return Notification(
            NotificationKind.PARSE_ERROR,
            f"does not parse, file skipped: {reason} (line {line}, column {column})",
            source.display_path,
            line=line,
            column=column,
        )
    except RecursionError:
        return Notification(
            NotificationKind.PARSE_ERROR,
            "nesting too deep to parse, file skipped",
            source.display_path,
        )
