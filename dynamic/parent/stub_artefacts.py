"""Findings that rest on a value a typed stub made up are the tool's, not the program's: drop them, and say so.

A typed stub (``audit``'s default, :mod:`resume_audit.dynamic.child.stub_values`)
answers an effect nobody gave a value for with a plain value of the expected
type -- ``"example open_ticket"`` for ``-> str``, a text allowing attribute
access when nothing says. The program then stores it, and a schema check can
fail on it (a made-up text in an ``int`` field) where the real service's answer
would validate. The children note every made-up value (``MadeUp``); here each
RA706 hit whose persisted value is one of them (or a text built around one) is
taken off its cell, and a note tells the user which stub to configure to check
that field for real.
"""

from __future__ import annotations

from collections.abc import Iterable

from resume_audit.dynamic.cells import FAIL, PASS, Cell
from resume_audit.dynamic.effect_spec import MADE_UP_NOTE, MadeUp
from resume_audit.dynamic.probes import validity
from resume_audit.dynamic.values import short, to_jsonable

#: (kind, detail), as :mod:`.notes` keeps them
Note = tuple[str, str]


def made_up_values(notes: Iterable[Note]) -> list[MadeUp]:
    """Every value the children's typed stubs made up, once each."""
    found = (MadeUp.from_note(detail) for kind, detail in notes if kind == MADE_UP_NOTE)
    return sorted({(m.effect, repr(m.value)): m for m in found if m is not None}.values(), key=lambda m: m.effect)


def rests_on(value: object, made: MadeUp) -> bool:
    """Whether a persisted ``value`` is the made-up one, or a text that contains it."""
    plain = to_jsonable(value)
    if plain == made.value:
        return True
    return isinstance(plain, str) and isinstance(made.value, str) and len(made.value) >= 6 and made.value in plain


def drop_stub_artefacts(cells: list[Cell], notes: Iterable[Note]) -> list[Note]:
    """Take the RA706 hits resting on made-up stub values off ``cells`` (in place); the notes that say so."""
    made = made_up_values(notes)
    out: list[Note] = []
    if not made:
        return out
    for cell in cells:
        if cell.kind is not validity.kind or not cell.hits:
            continue
        kept = []
        for hit in cell.hits:
            witness = hit.witness
            value = getattr(witness, "value", None)
            source = next((m for m in made if witness is not None and rests_on(value, m)), None)
            if source is None:
                kept.append(hit)
                continue
            field = getattr(witness, "field", "?")
            out.append(
                (
                    "stub-artefact",
                    (
                        f"RA706 on `{field}` = {short(value)} was left out: the value is what the stub of {source.effect} "
                        f"made up ({source.how}), not what the program persists; give that effect a real answer under "
                        f"`stubs` in [tool.resume-audit.audit] to check the field"
                    ),
                )
            )
        if len(kept) != len(cell.hits):
            cell.hits = kept
            cell.verdict = FAIL if kept else PASS
            cell.detail = (
                f"{len(kept)} invalid field value(s) persisted"
                if kept
                else "every persisted checkpoint validates against the schema but for values a stub made up"
            )
    return out
