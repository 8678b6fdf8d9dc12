"""ToyFlow's dynamic adapter: recognises a ``Pipeline`` subclass (a sweep of one is out of this fixture's scope)."""

from __future__ import annotations

from typing import Any

from resume_audit.dynamic.adapters.base import Adapter, Instruments, Session, StoreSettings


class ToyFlowAdapter(Adapter):
    name = "toyflow"

    def preload_modules(self) -> list[str]:
        return []

    def accepts(self, obj: Any) -> bool:
        return isinstance(obj, type) and any(c.__name__ == "Pipeline" for c in obj.__mro__[1:])

    def prepare_process(self, instruments: Instruments, store: StoreSettings) -> None:
        raise NotImplementedError

    def open(self, obj: Any, store: StoreSettings, instruments: Instruments, thread_id: str,
             config: dict[str, Any]) -> Session:
        raise NotImplementedError

    def effect_context(self) -> tuple[str | None, int | None, str | None]:
        return None, None, None
