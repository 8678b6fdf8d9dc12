"""What a stubbed effect returns: a value of the type the code expects, and findings resting on a made-up
value are the tool's, not the program's.

`fixtures/dynamic/langgraph/typed_stubs.py` stores and inspects what its unannotated CRM helpers return.
With the stub answering `None` (what `audit` did before), the run broke on `"urgent" in None` and the
checkpoints it left were reported schema-invalid (RA706 `case_id = null`) -- values the real program,
whose CRM answers a string, never writes. Typed, the run completes; the one RA706 the program really
causes (`owner = None`, written by the node itself) is still reported.
"""

from __future__ import annotations

import pytest
from dyn_helpers import run_sweep

from resume_audit.dynamic.child.stub_values import StubJson, StubResponse, StubText, typed_value
from resume_audit.dynamic.effect_spec import TYPED_STUB

TARGET = "typed_stubs.py:build_graph"
HELPERS = ["typed_stubs:create_case", "typed_stubs:score_case", "typed_stubs:tag_case"]


def ra706_fields(report) -> list[str]:
    return sorted(f.witness["field"] for f in report.findings if f.rule_id == "RA706")


def test_a_stub_answering_none_breaks_the_program_and_makes_a_false_ra706():
    """The reproduction: the old `None` stub (still what `--stub null` asks for)."""
    report = run_sweep(TARGET, effects=HELPERS, input={"summary": "printer on fire"}, stub=None, cells=["validity"])
    assert not report.complete
    assert "argument of type 'NoneType' is not iterable" in report.dry_run.detail
    assert ra706_fields(report) == ["case_id", "priority"]  # both nulls are the stub's, not the program's


def test_typed_stubs_keep_the_program_running_and_report_only_its_own_invalid_state():
    report = run_sweep(
        TARGET, effects=HELPERS, input={"summary": "printer on fire"}, stub=TYPED_STUB, cells=["validity"]
    )
    assert report.complete, report.dry_run.detail
    assert ra706_fields(report) == ["owner"]  # the node's own None: real
    notes = [n.message for n in report.notifications]
    # the made-up text in the int field is dropped, and the note says which stub to configure
    assert any("RA706 on `priority`" in n and "typed_stubs.score_case" in n and "stubs" in n for n in notes), notes
    assert report.protocol.stub == "typed"


def test_a_library_call_answers_its_sdk_response_shape():
    """Stubbing `requests.post` itself: the helpers' `.json()["id"]` reads a response object."""
    report = run_sweep(
        TARGET, effects=["requests:post"], input={"summary": "printer on fire"}, stub=TYPED_STUB, cells=["validity"]
    )
    assert report.complete, report.dry_run.detail
    assert report.dry_run.effects == {"requests.post": (3, 3)}
    assert ra706_fields(report) == ["owner"]


def _annotated_str() -> str:
    return "real"


def _annotated_none() -> None:
    return None


def _annotated_dict() -> dict:
    return {}


def test_the_value_follows_the_annotation_then_the_sdk_then_attribute_access():
    value, made = typed_value(_annotated_str, "mod", "_annotated_str", "mod._annotated_str")
    assert isinstance(value, str) and made is not None and "annotation" in made.how
    assert typed_value(_annotated_none, "mod", "_annotated_none", "mod._annotated_none") == (None, None)
    mapping, _ = typed_value(_annotated_dict, "mod", "_annotated_dict", "x")
    assert isinstance(mapping, StubJson) and mapping["id"] == "stub _annotated_dict" and mapping.get("n", 3) == 3
    import requests

    response, made = typed_value(requests.post, "requests", "post", "requests.post")
    assert (
        isinstance(response, StubResponse) and response.status_code == 200 and response.raise_for_status() is response
    )
    assert response.json()["id"] == "stub post" and made is not None and made.value == "stub post"


def test_stub_text_allows_attribute_call_and_item_access():
    text = StubText("stub ask")
    assert text.output_text == text and text.choices[0] == "s" and text["id"] == text and text() == text
    assert "urgent" not in text
    with pytest.raises(AttributeError):
        text.__deepcopy_hook__  # noqa: B018 - dunders stay plain
