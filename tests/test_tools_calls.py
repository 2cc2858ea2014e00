"""Reading tool calls from agent output: every accepted form, the form reported for the format reward, and errors."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from clinical_gym.tools import FORMAT_SCORES, CallForm, parse_tool_call, parse_tool_calls

ARGS = {"mrn": "MRN-001", "limit": 2}


@pytest.mark.parametrize("text, form", [
    ('{"name": "get_patient", "arguments": {"mrn": "MRN-001", "limit": 2}}', CallForm.JSON),
    ('  {"name": "get_patient", "arguments": "{\\"mrn\\": \\"MRN-001\\", \\"limit\\": 2}"}\n', CallForm.JSON),
    ('{"name": "get_patient", "parameters": {"mrn": "MRN-001", "limit": 2}}', CallForm.JSON),
    ('{"tool_calls": [{"type": "function", "function": {"name": "get_patient", '
     '"arguments": "{\\"mrn\\": \\"MRN-001\\", \\"limit\\": 2}"}}]}', CallForm.JSON),
    ('```json\n{"name": "get_patient", "arguments": {"mrn": "MRN-001", "limit": 2}}\n```', CallForm.CODE_BLOCK),
    ('Let me look.\n```\n{"name": "get_patient", "arguments": {"mrn": "MRN-001", "limit": 2}}\n```',
     CallForm.CODE_BLOCK),
    ('<tool_call>\n{"name": "get_patient", "arguments": {"mrn": "MRN-001", "limit": 2}}\n</tool_call>',
     CallForm.TAGGED),
    ('I will check the record: {"name": "get_patient", "arguments": {"mrn": "MRN-001", "limit": 2}} and then decide.',
     CallForm.PARTIAL),
    ("{'name': 'get_patient', 'arguments': {'mrn': 'MRN-001', 'limit': 2}}", CallForm.PARTIAL),
    ('{"name": "get_patient", "arguments": {"mrn": "MRN-001", "limit": 2,},}', CallForm.PARTIAL),
    ('get_patient(mrn="MRN-001", limit=2)', CallForm.PYTHON_CALL),
    ('```python\nget_patient(mrn="MRN-001", limit=2)\n```', CallForm.PYTHON_CALL),
    ('<think>The record number is in the ticket.</think>\n{"name": "get_patient", "arguments": {"mrn": "MRN-001", '
     '"limit": 2}}', CallForm.JSON),
])
def test_each_form_yields_the_same_call(text, form):
    call = parse_tool_call(text)
    assert call.ok, call.error
    assert (call.name, call.arguments, call.form) == ("get_patient", ARGS, form)


def test_format_scores_follow_the_seed_grading():
    assert parse_tool_call('{"name": "a", "arguments": {}}').format_score == 1.0
    assert parse_tool_call('```json\n{"name": "a", "arguments": {}}\n```').format_score == 0.8
    assert parse_tool_call('Calling {"name": "a", "arguments": {}} now').format_score == 0.5
    assert parse_tool_call("a()").format_score == 0.5
    assert parse_tool_call("no call here").format_score == 0.0
    assert set(FORMAT_SCORES) == set(CallForm)


def test_openai_tool_calls_as_objects():
    message = {"role": "assistant", "content": None, "tool_calls": [
        {"id": "call_1", "type": "function", "function": {"name": "get_patient", "arguments": json.dumps(ARGS)}}]}
    call = parse_tool_call(message)
    assert (call.name, call.arguments, call.form, call.call_id) == ("get_patient", ARGS, CallForm.TOOL_CALLS, "call_1")
    assert parse_tool_call(message["tool_calls"]).arguments == ARGS
    assert parse_tool_call({"name": "get_patient", "arguments": ARGS}).form is CallForm.JSON


def test_several_calls_are_all_read_but_parse_tool_call_wants_one():
    text = json.dumps([{"name": "a", "arguments": {}}, {"name": "b", "arguments": {"x": 1}}])
    assert [c.name for c in parse_tool_calls(text)] == ["a", "b"]
    call = parse_tool_call(text)
    assert not call.ok and "one tool call per turn, got 2" in call.error


def test_python_call_accepts_json_literals_and_nested_values():
    call = parse_tool_call('order(test="CBC", urgent=true, note=null, codes=["a", "b"], extra={"k": 1.5})')
    assert call.arguments == {"test": "CBC", "urgent": True, "note": None, "codes": ["a", "b"], "extra": {"k": 1.5}}
    assert parse_tool_call("tools.order(test='CBC')").name == "order"


@pytest.mark.parametrize("text, message", [
    ('order(__import__("os").system("true"))', "positional arguments"),
    ('order(test=__import__("os").system("true"))', "not a literal value"),
    ("order(test=open('/etc/passwd').read())", "not a literal value"),
    ("order(**{'test': 1})", "**-unpacking"),
    ("order(test=1", "no tool call found"),
])
def test_python_call_never_evaluates_code(text, message):
    call = parse_tool_call(text)
    assert not call.ok and message in call.error


@pytest.mark.parametrize("text, message", [
    ('{"name": "a", "arguments": {"x": 1 "y": 2}}', "invalid JSON at line 1, column 36 (character 35): Expecting ','"),
    ('{"name": "a", "arguments": {"x": 1}', "invalid JSON at line 1"),
    ('I call {"name": "a", "arguments": {"x": }}', "invalid JSON at line 1, column 41 (character 40): Expecting value"),
    ('```json\n{"name": "a" "arguments": {}}\n```', "in the code block: invalid JSON at line 1, column 14"),
    ('{"name": "a", "arguments": "{x: 1}"}',
     "the arguments of 'a' are not valid JSON: invalid JSON at line 1, column 2"),
    ('{"arguments": {}}', 'no "name"'),
    ('{"name": "", "arguments": {}}', 'no "name"'),
    ('{"name": "a", "arguments": [1, 2]}', "must be a JSON object, got list"),
    ('{"tool_calls": []}', "non-empty list"),
    ("[]", "empty"),
    ("[42]", "each call must be a JSON object, got int"),
    ('"get_patient"', "no tool call found"),
    ("```json\n42\n```", "expected a JSON object such as"),
    ("<tool_call>\"get_patient\"</tool_call>", "got str"),
    ("   ", "the reply is empty"),
    ("<think>I should look up the patient.</think>", "the reply is empty"),
    ("I think the answer is pneumonia.", "no tool call found"),
    ('Here: {"tool": "a"}', 'has no "name"'),
])
def test_invalid_calls_say_what_is_wrong(text, message):
    call = parse_tool_call(text)
    assert not call.ok and call.form is CallForm.INVALID and call.format_score == 0.0
    assert message in call.error


def test_non_text_actions_are_invalid_not_exceptions():
    call = parse_tool_call(3.5)
    assert not call.ok and "got float" in call.error


@given(st.text(max_size=200), st.sampled_from(["{}", "```json\n{}\n```", "```\n{}```", "<tool_call>{}</tool_call>",
                                                "[{}]", "{{{}", "x({})", "f(a={})", "say {}"]))
def test_any_text_parses_without_raising(text, wrapper):
    for call in parse_tool_calls(wrapper.format(text)):
        assert call.ok or call.error


@given(st.from_regex(r"[a-z_]{1,12}", fullmatch=True),
       st.dictionaries(st.from_regex(r"[a-z_]{1,8}", fullmatch=True),
                       st.one_of(st.integers(), st.text(max_size=20), st.booleans(), st.none(),
                                 st.lists(st.integers(), max_size=3)), max_size=4))
def test_plain_json_round_trips(name, arguments):
    call = parse_tool_call(json.dumps({"name": name, "arguments": arguments}, ensure_ascii=False))
    assert (call.name, call.arguments, call.form) == (name, arguments, CallForm.JSON)


def test_absurdly_nested_brackets_are_an_invalid_call_not_a_crash():
    from clinical_gym.tools.calls import parse_tool_calls

    for text in ["[" * 9999, '{"name": "x", "arguments": "' + "[" * 5000 + '"}', 'x {"a": ' + "[" * 9999]:
        calls = parse_tool_calls(text)
        assert calls[0].error, text[:20]


def test_json_cut_short_and_python_literals_with_comments():
    # text that cannot be a Python literal skips the Python parser; a literal followed by a comment still parses
    cut = parse_tool_call('{"name": "get_patient", "arguments": {"mrn": ')
    assert cut.form is CallForm.INVALID and cut.error == "invalid JSON at line 1, column 45 (character 44): Expecting value"
    commented = parse_tool_call("{'name': 'get_patient', 'arguments': {'mrn': 'MRN-001'}}  # the chart")
    assert commented.form is CallForm.PARTIAL and commented.arguments == {"mrn": "MRN-001"}
    assert parse_tool_call("[{'name': 'get_patient'}]").form is CallForm.PARTIAL


@pytest.mark.parametrize("text, name, form", [
    # JSON with text after it ("Extra data"): the object at the start is still the one recovered
    ('{"name": "get_patient", "arguments": {"mrn": "MRN-001"}} and then I will decide', "get_patient",
     CallForm.PARTIAL),
    # the outer object fails; a call object inside it is found
    ('{"plan": {"name": "get_patient", "arguments": {"mrn": "MRN-001"}}, "then": ', "get_patient", CallForm.PARTIAL),
    # a first object without a name is passed over for the call after it
    ('{"thought": "chart first"} {"name": "get_patient", "arguments": {}}', "get_patient", CallForm.PARTIAL),
    ('{"name": "get_patient", "arguments": {"mrn": "MRN-001"}', "", CallForm.INVALID),
])
def test_json_that_fails_is_searched_for_an_embedded_call(text, name, form):
    call = parse_tool_call(text)
    assert (call.name, call.form) == (name, form), call.error


def test_call_json_is_read_as_json_loads_reads_it():
    # _loads hands text opening with a bracket to the scanner json.loads ends in: the same value or the same error
    # (message and position) as json.loads for every cut of a call, with closing text added, and for odd texts
    import random

    from clinical_gym.tools.calls import _loads

    def verdict(read, text):
        try:
            return "value", read(text)
        except json.JSONDecodeError as exc:
            return "error", exc.msg, exc.pos

    full = '{"name": "get_patient_info", "arguments": {"patient_id": "P001", "n": [1, 2.5, true, null], "s": "x\\"y"}}'
    rng = random.Random(0)
    texts = ['{"a": }', "[1,", "{'a': 1}", '{"a": 1,}', '{"a": NaN}', '{"a":1} x', '{"a":1}  ', " {}", "\ufeff{}", "",
             '"s"', "1"]
    texts += [full[:rng.randrange(len(full) + 1)] + rng.choice(["", "}", "]", " ", "x", "}}", ",", '"'])
              for _ in range(1500)]
    for text in texts:
        assert verdict(_loads, text) == verdict(json.loads, text), text


@pytest.mark.parametrize("text", [
    '{"name": "get_labs", "arguments": {"patient_id": "P1", "n": [1, 2.5, null]}}',
    '{"tool_calls": [{"id": "c1", "type": "function", "function": {"name": "get_labs", "arguments": "{\\"a\\": 1}"}}]}',
    '```json\n{"name": "get_labs", "parameters": {"a": true}}\n```',
    'I will call {"name": "get_labs", "arguments": {"a": "x"}} now',
    "{'name': 'get_labs', 'arguments': {1: 'x'}}",  # a Python literal (keys not text): validated as before
])
def test_calls_read_from_decoded_json_are_the_records_validation_builds(text):
    # calls read from decoded JSON are built without re-validation: equal to the validated record in every way
    from clinical_gym.tools import ParsedCall

    parsed = parse_tool_call(text)
    if parsed.ok:
        validated = ParsedCall(name=parsed.name, arguments=parsed.arguments, form=parsed.form, call_id=parsed.call_id)
        assert parsed == validated and list(parsed.__dict__) == list(validated.__dict__)
        assert parsed.model_fields_set == validated.model_fields_set
        assert parsed.model_dump_json() == validated.model_dump_json()
    else:  # an argument name that is not text: an invalid call saying so (validation raised before)
        assert parsed.error == "the argument names of 'get_labs' must be text, got 1" and parsed.name == "get_labs"
