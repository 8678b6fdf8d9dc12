"""The effect catalog as one row per SDK: what ``resume-audit effects`` prints and what the
generated page ``docs/reference/effects.md`` lists, read from the one table
(:data:`resume_audit.analysis.effect_catalog.EFFECT_SINKS`) so neither can drift from it."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class EffectRow:
    """One SDK of the catalog, as a reader sees it."""

    sdk: str
    modules: tuple[str, ...]
    client: str
    #: the call patterns that write (globs over qualified names)
    calls: tuple[str, ...]
    #: method names recognised as writes whatever the receiver's type
    any_receiver_methods: tuple[str, ...]
    #: what a repeat does, in the catalog's words
    why: str
    idempotency_key: str | None


def effect_rows() -> list[EffectRow]:
    """Every SDK of the catalog, the generic families first (the order the effect model matches)."""
    from resume_audit.analysis.effect_catalog import CATALOG, GENERIC_SINKS

    return [
        EffectRow(
            sdk=sdk.name,
            modules=tuple(sdk.modules),
            client=sdk.client,
            calls=tuple(p for w in sdk.writes for p in w.patterns),
            any_receiver_methods=tuple(m for w in sdk.writes for m in w.methods),
            why="; ".join(dict.fromkeys(w.consequence for w in sdk.writes)),
            idempotency_key=sdk.idempotency_key,
        )
        for sdk in (*GENERIC_SINKS, *CATALOG)
    ]
