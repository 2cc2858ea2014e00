"""Reading an agent's tool call from its reply, and which form the call was written in.

Accepted forms (``CallForm``) and their default format scores (``FORMAT_SCORES``, seed digest §4):

* ``json`` (1.0): the whole reply is ``{"name": ..., "arguments": {...}}`` (``arguments`` may be a JSON string;
  ``parameters`` is read as ``arguments``), a list of such calls, or ``{"tool_calls": [...]}``;
* ``tool_calls`` (1.0): an OpenAI ``tool_calls`` list or assistant message passed as Python objects;
* ``code_block`` (0.8): JSON inside a fenced block (```json ... ``` or ``` ... ```);
* ``tagged`` (0.8): JSON inside ``<tool_call>...</tool_call>`` tags;
* ``partial`` (0.5): recoverable JSON: a call object inside surrounding prose, or a Python dict literal;
* ``python_call`` (0.5): ``name(arg=value, ...)`` with literal values only (parsed with ``ast``, never evaluated);
* ``invalid`` (0.0): nothing usable; ``ParsedCall.error`` says what is wrong (JSON errors give their position).

Reasoning in leading ``<think>...</think>`` blocks is not part of the call and does not change its form.
"""

from __future__ import annotations

import ast
import enum
import json
import warnings
import re
from collections.abc import Mapping, Sequence
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from clinical_gym.tools.trusted import trusted


class CallForm(str, enum.Enum):
    """How a tool call was written."""

    JSON = "json"
    TOOL_CALLS = "tool_calls"
    CODE_BLOCK = "code_block"
    TAGGED = "tagged"
    PARTIAL = "partial"
    PYTHON_CALL = "python_call"
    INVALID = "invalid"


FORMAT_SCORES: Mapping[CallForm, float] = {
    CallForm.JSON: 1.0, CallForm.TOOL_CALLS: 1.0, CallForm.CODE_BLOCK: 0.8, CallForm.TAGGED: 0.8,
    CallForm.PARTIAL: 0.5, CallForm.PYTHON_CALL: 0.5, CallForm.INVALID: 0.0,
}

EXAMPLE = '{"name": "<tool name>", "arguments": {"<argument>": <value>}}'
_CODE_BLOCK = re.compile(r"```[ \t]*([A-Za-z0-9_+-]*)[ \t]*\n?(.*?)```", re.S)
_TAG = re.compile(r"<tool_call>(.*?)(?:</tool_call>|$)", re.S | re.I)
_PYTHON_CALL = re.compile(r"^[A-Za-z_][\w.]*\s*\(.*\)$", re.S)
_JSON_NAMES = {"true": True, "false": False, "null": None}
_LEADING_THINK = re.compile(r"^\s*(?:<think>.*?</think>\s*)+", re.S | re.I)
_DECODER = json.JSONDecoder()  # stateless: one for every search, not one per call
_SCAN = _DECODER.scan_once  # what json.loads runs (its decoder has the same settings)
_BRACKETS = frozenset("{[")
_CALL_KEYS = frozenset({"name", "function", "tool_calls"})
_CALL_GIVEN = frozenset({"name", "arguments", "form", "call_id"})  # the fields a call read from an object gives


class ParsedCall(BaseModel):
    """One tool call read from an agent's reply; ``error`` is set (and ``form`` is ``invalid``) when unusable."""

    model_config = ConfigDict(frozen=True)

    name: str = ""
    arguments: dict[str, Any] = Field(default_factory=dict)
    form: CallForm
    error: str | None = None
    call_id: str | None = None

    @property
    def ok(self) -> bool:
        return self.error is None

    @property
    def format_score(self) -> float:
        """The default format reward for this call's form."""
        return FORMAT_SCORES[self.form]




def _parse_expression(text: str) -> ast.Expression:
    """``ast.parse`` in eval mode, silent about odd escapes in the agent's string literals."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return ast.parse(text, mode="eval")

def _loads(text: str):
    """``json.loads`` that reports absurd nesting as a JSON error instead of raising RecursionError. Text that opens
    with a bracket (a call, stripped) goes to the scanner ``json.loads`` ends in, directly (loads, decode and
    raw_decode are three Python calls and two whitespace matches around it: 1.7 -> 0.7 us a call); it raises what
    json.loads would, and a value followed by more text goes through json.loads for its verdict."""
    try:
        if text[:1] in _BRACKETS:
            value, end = _SCAN(text, 0)
            if end == len(text):
                return value
        return json.loads(text)
    except StopIteration as exc:  # a value missing inside: what raw_decode makes of it
        raise json.JSONDecodeError("Expecting value", text, exc.value) from None
    except RecursionError:
        raise json.JSONDecodeError("brackets nested too deeply", text, 0) from None


def invalid(error: str, name: str = "") -> ParsedCall:
    """An unusable call with the reason."""
    return ParsedCall(name=name, form=CallForm.INVALID, error=error)


def parse_tool_call(action: Any) -> ParsedCall:
    """The single tool call in ``action`` (text, a call dict, an OpenAI message dict or ``tool_calls`` list)."""
    calls = parse_tool_calls(action)
    if len(calls) > 1:
        return invalid(f"expected one tool call per turn, got {len(calls)}: send them one at a time")
    return calls[0]


def parse_tool_calls(action: Any) -> list[ParsedCall]:
    """Every tool call in ``action``; an unusable action gives one invalid ``ParsedCall`` saying why."""
    if isinstance(action, str):
        return _from_text(action)
    if isinstance(action, (Mapping, list, tuple)):
        return _from_value(action, CallForm.TOOL_CALLS if _has_tool_calls(action) else CallForm.JSON)
    return [invalid(f"expected text or a tool-call object, got {type(action).__name__}")]


def _has_tool_calls(value: Any) -> bool:
    if isinstance(value, Mapping):
        return "tool_calls" in value or "function" in value
    return bool(value) and all(isinstance(item, Mapping) and "function" in item for item in value)


def _from_text(text: str) -> list[ParsedCall]:
    if "<" in text:  # only then can it open with <think> blocks
        text = _LEADING_THINK.sub("", text)
    text = text.strip()
    if not text:
        return [invalid(f"the reply is empty; expected a tool call such as {EXAMPLE}")]
    if text[0] in "{[":
        return _from_json_text(text)
    block = _CODE_BLOCK.search(text)
    if block:
        return _from_code_block(block.group(1).lower(), block.group(2).strip())
    tags = _TAG.findall(text)
    if tags:
        return [call for body in tags for call in _rewrap(_from_json_text(body.strip()), CallForm.TAGGED)]
    if _PYTHON_CALL.match(text):
        return [_from_python_call(text)]
    embedded = _embedded_json(text)
    if embedded is not None:
        return embedded
    return [invalid(_no_call_found(text))]


def _from_json_text(text: str) -> list[ParsedCall]:
    """Calls from text that should be JSON; a Python literal or JSON followed by prose is recovered as partial."""
    try:
        value = _loads(text)
    except json.JSONDecodeError as exc:
        # a dict or list literal ends with its closing bracket, or with a comment after it: other text (JSON cut
        # short) need not go through the Python parser
        literal = _python_literal(text) if text[-1:] in "}]" or "#" in text else None
        if literal is not None:
            return _from_value(literal, CallForm.PARTIAL)
        # json.loads read the object at 0 as raw_decode would; unless only text after it failed ("Extra data"), the
        # search for an embedded call need not decode it again
        embedded = _embedded_json(text, 0 if exc.msg == "Extra data" else 1)
        return embedded if embedded is not None else [invalid(_json_error(exc))]
    if not isinstance(value, (dict, list)):
        return [invalid(f"expected a JSON object such as {EXAMPLE}, got {type(value).__name__}")]
    return _from_value(value, CallForm.JSON, decoded=True)


def _from_code_block(language: str, body: str) -> list[ParsedCall]:
    if not body:
        return [invalid("the code block is empty")]
    if language.startswith("py") or (body[0] not in "{[" and _PYTHON_CALL.match(body)):
        return [_from_python_call(body)]
    calls = _from_json_text(body)
    if len(calls) == 1 and not calls[0].ok:
        return [invalid(f"in the code block: {calls[0].error}", calls[0].name)]
    return _rewrap(calls, CallForm.CODE_BLOCK)


def _rewrap(calls: list[ParsedCall], form: CallForm) -> list[ParsedCall]:
    """Calls found inside markup take the markup's form unless they were only partially recovered."""
    return [c.model_copy(update={"form": form}) if c.form is CallForm.JSON else c for c in calls]


def _from_value(value: Mapping[str, Any] | Sequence[Any], form: CallForm, decoded: bool = False) -> list[ParsedCall]:
    """Calls from a call object, a list of them, or a message with ``tool_calls``; ``decoded``: decoded JSON."""
    if type(value) is dict and "tool_calls" not in value:  # the usual reply: one call object
        return [_from_call_object(value, form, decoded)]
    if _is_mapping(value) and "tool_calls" in value:
        value = value["tool_calls"]
        if not isinstance(value, (list, tuple)) or not value:
            return [invalid('"tool_calls" must be a non-empty list of calls')]
    if _is_mapping(value):
        return [_from_call_object(value, form, decoded)]
    if not value:
        return [invalid(f"the list of calls is empty; expected a call such as {EXAMPLE}")]
    return [_from_call_object(item, form, decoded) if isinstance(item, Mapping)
            else invalid(f"each call must be a JSON object, got {type(item).__name__}") for item in value]


def _is_mapping(value: Any) -> bool:
    """``isinstance(value, Mapping)``, with decoded JSON's plain dicts answered without the ABC check."""
    return type(value) is dict or isinstance(value, Mapping)


def _from_call_object(obj: Mapping[str, Any], form: CallForm, decoded: bool = False) -> ParsedCall:
    """A call from ``{"name", "arguments"}`` or an OpenAI ``{"type": "function", "function": {...}}`` entry;
    ``decoded``: ``obj`` is decoded JSON (text keys, JSON values)."""
    call_id = obj.get("id")
    if call_id is not None and not isinstance(call_id, str):
        call_id = None
    function = obj.get("function")
    body = function if function is not None and _is_mapping(function) else obj
    name = body.get("name")
    name = name.strip() if isinstance(name, str) else ""
    if not name:
        return invalid(f'the call has no "name" (a non-empty string); expected {EXAMPLE}')
    arguments = body.get("arguments", body.get("parameters"))
    if arguments is None:
        arguments = {}
    if isinstance(arguments, str):
        if not arguments.strip():
            arguments = {}
        else:
            try:
                arguments = _loads(arguments)
            except json.JSONDecodeError as exc:
                return invalid(f"the arguments of {name!r} are not valid JSON: {_json_error(exc)}", name)
    if not _is_mapping(arguments):
        return invalid(f'the "arguments" of {name!r} must be a JSON object, got {type(arguments).__name__}', name)
    if decoded:  # what validation would build (it would only copy the arguments), without validating again
        return trusted(ParsedCall, _CALL_GIVEN, name=name, arguments=dict(arguments), form=form, error=None,
                       call_id=call_id)
    odd = [key for key in arguments if not isinstance(key, str)]  # (a Python literal or object: validation refuses)
    if odd:
        return invalid(f"the argument names of {name!r} must be text, got {odd[0]!r}", name)
    return ParsedCall(name=name, arguments=dict(arguments), form=form, call_id=call_id)


def _from_python_call(text: str) -> ParsedCall:
    """``name(arg=value, ...)``: keyword arguments with literal values (``true``/``false``/``null`` allowed)."""
    try:
        node = _parse_expression(text.strip()).body
    except SyntaxError as exc:
        return invalid(f"invalid call syntax at column {exc.offset}: {exc.msg}")
    if not isinstance(node, ast.Call) or not isinstance(node.func, (ast.Name, ast.Attribute)):
        return invalid(f"expected a call such as tool_name(argument=value) or {EXAMPLE}")
    name = node.func.id if isinstance(node.func, ast.Name) else node.func.attr
    if node.args:
        return invalid(f"{name}(...) uses positional arguments; write each as argument=value", name)
    arguments: dict[str, Any] = {}
    for keyword in node.keywords:
        if keyword.arg is None:
            return invalid(f"{name}(...) uses **-unpacking; write each argument as argument=value", name)
        try:
            arguments[keyword.arg] = ast.literal_eval(_JsonNames().visit(keyword.value))
        except ValueError:
            return invalid(f"argument {keyword.arg!r} of {name}(...) is not a literal value "
                           f"(use numbers, strings, true/false, null, lists or objects)", name)
    return ParsedCall(name=name, arguments=arguments, form=CallForm.PYTHON_CALL)


class _JsonNames(ast.NodeTransformer):
    """Reads the bare names ``true``, ``false`` and ``null`` as their JSON values."""

    def visit_Name(self, node: ast.Name) -> ast.AST:
        return ast.Constant(_JSON_NAMES[node.id]) if node.id in _JSON_NAMES else node


def _python_literal(text: str) -> Any:
    """``text`` as a Python dict or list literal, or None."""
    try:
        value = ast.literal_eval(_JsonNames().visit(_parse_expression(text)))
    except (SyntaxError, ValueError, TypeError, MemoryError, RecursionError):
        return None
    return value if isinstance(value, (dict, list)) else None


def _embedded_json(text: str, start: int = 0) -> list[ParsedCall] | None:
    """The first JSON object in ``text`` (from ``start``) that looks like a call (has "name", "function" or
    "tool_calls")."""
    at = text.find("{", start)
    while at >= 0:
        try:
            value, _ = _SCAN(text, at)  # what raw_decode runs, without its error for a value missing inside
        except (json.JSONDecodeError, StopIteration, RecursionError):
            at = text.find("{", at + 1)
            continue
        if isinstance(value, dict) and not _CALL_KEYS.isdisjoint(value):
            return _from_value(value, CallForm.PARTIAL, decoded=True)
        at = text.find("{", at + 1)
    return None


def _no_call_found(text: str) -> str:
    """Why prose holds no call: the JSON error of its first ``{``, or that it has no JSON object with a name."""
    if "{" in text:
        try:
            _DECODER.raw_decode(text, text.index("{"))
        except json.JSONDecodeError as exc:
            return _json_error(exc)
        except RecursionError:
            return "the JSON in the reply nests brackets too deeply to read"
        return f'the JSON object in the reply has no "name"; expected a call such as {EXAMPLE}'
    return f"no tool call found; reply with a JSON object such as {EXAMPLE}"


def _json_error(exc: json.JSONDecodeError) -> str:
    return f"invalid JSON at line {exc.lineno}, column {exc.colno} (character {exc.pos}): {exc.msg}"
