"""Decoding a source file's bytes as Python does (coding cookie, BOM, default UTF-8).

Apart from :mod:`resume_audit.facts.parse` (which parses) because every file a scan reads is
decoded -- a bad one is reported whatever it holds -- while only the candidates are parsed: a
warm scan that re-reads a changed library file must not import LibCST to decode it.
"""

from __future__ import annotations

import io
import tokenize
from dataclasses import dataclass
from pathlib import Path

from resume_audit.findings import Notification, NotificationKind


@dataclass(frozen=True)
class SourceText:
    """A file's decoded text, ready to parse."""

    path: Path
    display_path: str
    text: str
    encoding: str


def decode_source(raw: bytes, path: Path, display_path: str) -> SourceText | Notification:
    """Decode file bytes as Python does (coding cookie, BOM, default UTF-8)."""
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(raw).readline)
    except SyntaxError as exc:
        return Notification(NotificationKind.DECODE_ERROR, f"cannot determine encoding: {exc}", display_path)
    if not _is_text_codec(encoding):
        return Notification(
            NotificationKind.DECODE_ERROR,
            f"declares the encoding {encoding!r}, which is not a text encoding Python source can use; file skipped",
            display_path,
        )
    try:
        text = raw.decode(encoding)
    except (UnicodeError, LookupError) as exc:  # UnicodeError: codecs such as punycode or "undefined"
        return Notification(
            NotificationKind.DECODE_ERROR,
            f"not valid {encoding} text ({exc.__class__.__name__}: {exc}); file skipped",
            display_path,
        )
    if text.startswith("\ufeff"):
        text = text[1:]
    return SourceText(path=path, display_path=display_path, text=text, encoding=encoding)


def _is_text_codec(encoding: str) -> bool:
    """A codec that turns bytes into text (``tokenize`` accepts any registered name, including
    ``rot13`` and ``base64``-style codecs that LibCST and the compiler then choke on)."""
    import codecs

    try:
        info = codecs.lookup(encoding)
    except LookupError:
        return True  # reported by the decode that follows, with the codec's own message
    return getattr(info, "_is_text_encoding", True)
