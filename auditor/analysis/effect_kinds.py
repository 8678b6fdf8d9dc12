"""A classified effect: its kind, the name that matched, and what a repeat of it does."""

from __future__ import annotations

from dataclasses import dataclass

#: what a repeat of an effect of each kind does, when the catalog has nothing more precise
KIND_CONSEQUENCES: dict[str, str] = {
    "http": "sends the HTTP request again",
    "payment": "moves the money again (a second charge or refund)",
    "email": "sends the email again",
    "message": "publishes the message again",
    "cloud": "repeats the cloud write",
    "sql": "repeats the database write",
    "file": "repeats the file change",
    "subprocess": "runs the command again",
    "saas": "repeats the write to the service",
    "mcp": "calls the MCP tool again",
    "configured": "repeats the effect",
}


@dataclass(frozen=True)
class Effect:
    """A classified effect call."""

    kind: str
    #: the qualified name (or method) that matched, shown to users
    label: str
    #: what a repeat does, in the user's words ("sends the Gmail message again")
    consequence: str = ""

    @property
    def repeat(self) -> str:
        return self.consequence or KIND_CONSEQUENCES.get(self.kind, "repeats the effect")
