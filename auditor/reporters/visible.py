"""Text from scanned files made safe to print on a terminal.

A report quotes the user's code, file names and string literals. A hostile (or
just odd) file can hold terminal control sequences -- ``ESC [2J`` clears the
screen, ``ESC [8m`` hides the text after it, ``ESC ]0;`` retitles the window --
or Unicode bidirectional overrides that show code other than what runs. The
text and GitHub reports show each such character as an escape (``\\x1b``,
``\\u202e``) instead of sending it to the reader's terminal.
"""

from __future__ import annotations

import re

#: C0 controls but tab, DEL, C1 controls, and the bidirectional embedding/override/isolate characters
_INVISIBLE = re.compile("[\x00-\x08\x0a-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def _escape(match: re.Match[str]) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def visible(text: str) -> str:
    """``text`` with every control or bidi-override character shown as an escape (newlines
    included: call it per line)."""
    return _INVISIBLE.sub(_escape, text)
