"""pydantic names used to tell a validated-looking state class from a TypedDict.

Checked against pydantic 2.12.5 (2026-12-02). ``pydantic.v1`` is the v1
compatibility namespace shipped inside pydantic 2.
"""

from __future__ import annotations

BASE_MODEL = frozenset(
    {"pydantic.BaseModel", "pydantic.main.BaseModel", "pydantic.v1.BaseModel", "pydantic.v1.main.BaseModel"}
)
DATACLASS = frozenset({"pydantic.dataclasses.dataclass", "pydantic.v1.dataclasses.dataclass"})
#: class methods that build a validated instance from raw data
VALIDATING_CONSTRUCTORS = frozenset({"model_validate", "model_validate_json", "parse_obj", "validate"})

#: Library classes that are pydantic models themselves: an instance is validated when built
#: (LangChain's messages are ``BaseMessage``, a pydantic model).
LIBRARY_MODEL_PREFIXES = ("langchain_core.messages.", "langchain.schema.messages.", "langchain_core.documents.")
