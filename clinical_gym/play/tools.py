"""Playing a tool domain by hand: a tool call typed as JSON (or any form the environment reads) is sent unchanged;
the short form ``tool_name key=value ...`` is turned into the JSON call, with values read by the tool's schema.

Short form: values with spaces go in quotes (``reasoning="ST elevation in II, III, aVF"``); a string parameter
keeps the text as typed, other types read it as JSON (``12``, ``true``, ``["a", "b"]``; a list of strings also
takes ``a,b``). A tool whose one required parameter is a string takes the rest of the line without ``key=``
(``submit_answer B``, ``think check the potassium first``). Unknown tools, unknown or missing arguments and bad
values are caught before sending (no turn used), with what the tool takes.
"""

from __future__ import annotations

import difflib
import json
import re
import shlex
import textwrap
from collections.abc import Mapping
from typing import Any

from clinical_gym.play.session import PlayFamily, Typed
from clinical_gym.tools.schema import describe_schema

_PASS_THROUGH = re.compile(r"^\s*(?:[\[{]|```|<tool_call>|<think>)", re.I)
_PYTHON_FORM = re.compile(r"^\s*([A-Za-z_]\w*)\s*\(.*\)\s*$", re.S)
WIDTH = 110


class ShortFormError(ValueError):
    """A short-form call that cannot be turned into JSON; the message says why."""


def _parameters(schema: Mapping[str, Any]) -> tuple[dict[str, Any], list[str]]:
    parameters = schema.get("function", schema).get("parameters") or {}
    return dict(parameters.get("properties") or {}), list(parameters.get("required") or [])


def _is_string(schema: Mapping[str, Any]) -> bool:
    if schema.get("type") == "string":
        return True
    return bool(schema.get("enum")) and all(isinstance(v, str) for v in schema["enum"])


def read_value(text: str, schema: Mapping[str, Any]) -> Any:
    """A typed value as the parameter's schema wants it (see the module docstring)."""
    if _is_string(schema):
        return text
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        if schema.get("type") == "array" and _is_string(schema.get("items") or {}):
            return [part.strip() for part in text.split(",") if part.strip()]
        if schema.get("type") in ("integer", "number", "boolean", "array", "object"):
            raise ShortFormError(f"{text!r} is not a valid {describe_schema(schema)}") from None
        return text


def short_form_call(line: str, schemas: Mapping[str, Mapping[str, Any]]) -> dict[str, Any]:
    """``{"name": ..., "arguments": {...}}`` from ``tool_name key=value ...``; ``ShortFormError`` says what is
    wrong (an unknown tool, argument or value, a missing required argument)."""
    name, _, rest = line.strip().partition(" ")
    if name not in schemas:
        close = difflib.get_close_matches(name, list(schemas), n=3)
        raise ShortFormError(f"no tool named {name!r}" + (f"; did you mean {', '.join(close)}?" if close else "")
                             + " ('tools' lists them)")
    properties, required = _parameters(schemas[name])
    rest = rest.strip()
    try:
        words = shlex.split(rest) if rest else []
    except ValueError as e:
        raise ShortFormError(f"cannot read the arguments: {e}") from None
    single = [p for p in required if _is_string(properties.get(p, {}))]
    if words and not all("=" in w for w in words):
        if len(required) == 1 and single:
            return {"name": name, "arguments": {single[0]: _unquoted(rest)}}
        raise ShortFormError(f"write the arguments as key=value; {name} takes {_signature(name, properties, required)}")
    arguments: dict[str, Any] = {}
    for word in words:
        key, _, text = word.partition("=")
        if key not in properties:
            raise ShortFormError(f"{name} has no argument {key!r}; it takes {_signature(name, properties, required)}")
        arguments[key] = read_value(text, properties[key])
    missing = [p for p in required if p not in arguments]
    if missing:
        raise ShortFormError(f"{name} needs {', '.join(missing)}; it takes {_signature(name, properties, required)}")
    return {"name": name, "arguments": arguments}


def _unquoted(text: str) -> str:
    text = text.strip()
    return text[1:-1] if len(text) >= 2 and text[0] == text[-1] and text[0] in "'\"" else text


def _signature(name: str, properties: Mapping[str, Any], required: list[str]) -> str:
    if not properties:
        return "no arguments"
    return " ".join(f"{p}=<{p}>" if p in required else f"[{p}=<{p}>]" for p in properties)


class ToolFamily(PlayFamily):
    """A tool domain (ClinicalDiagnosis, Triage, ..., ClinicalPathway): the person calls the tools."""

    label = "tool"
    opening_label = "task"
    catalogue_commands = ("tools",)
    catalogue_help = "the tools; 'tools NAME' shows one tool's description and arguments, 'tools WORD' searches"

    def __init__(self, env: Any, info: Mapping[str, Any]) -> None:
        super().__init__(env, info)
        self.schemas = {s["function"]["name"]: s for s in info.get("tools") or []}
        self.last_phase: Mapping[str, Any] = info.get("phase") or {}
        self.phase = self.last_phase.get("index")

    def how_to_act(self) -> list[str]:
        return ["You are the agent. Each line you type is one turn's tool call:",
                "  the short form, e.g.  get_vital_signs patient_id=E001",
                '  or JSON, e.g.         {"name": "get_vital_signs", "arguments": {"patient_id": "E001"}}',
                "  finish with           submit_answer answer=\"...\" reasoning=\"...\"   (or: submit_answer ...)",
                f"There are {len(self.schemas)} tools ('tools' lists them); the short form is sent as the JSON call."]

    def parse(self, line: str) -> Typed:
        python_form = _PYTHON_FORM.match(line)
        if _PASS_THROUGH.match(line) or (python_form and python_form.group(1) in self.schemas):
            return Typed(action=line)
        try:
            call = short_form_call(line, self.schemas)
        except ShortFormError as e:
            return Typed(notice=f"Not sent (no turn used): {str(e).rstrip('.')}.")
        text = json.dumps(call, ensure_ascii=False)
        return Typed(action=text, shown=text)

    def catalogue(self, query: str) -> str:
        if query in self.schemas:
            return self._describe(query)
        word = query.lower()
        names = [n for n, s in self.schemas.items()
                 if word in n.lower() or word in (s["function"].get("description") or "").lower()]
        if not names:
            return f"No tool name or description holds {query!r}."
        kinds = getattr(self.env, "tool_kinds", {})
        width = max(len(n) for n in names)
        lines = []
        for name in names:
            kind = getattr(kinds.get(name), "value", "")
            summary = (self.schemas[name]["function"].get("description") or "").split(". ")[0].rstrip(".")
            lines.append(_clip(f"  {name:<{width}}  {kind:<6} {summary}", WIDTH))
        return "\n".join(lines + ["'tools NAME' shows a tool's arguments."])

    def _describe(self, name: str) -> str:
        function = self.schemas[name]["function"]
        properties, required = _parameters(self.schemas[name])
        lines = [f"{name}: {function.get('description', '')}"]
        for param, schema in properties.items():
            need = "required" if param in required else "optional"
            text = f"  {param} ({describe_schema(schema)}, {need}): {schema.get('description', '')}"
            lines.append(textwrap.fill(text, WIDTH, subsequent_indent="      "))
        lines.append(f"short form: {name} {_signature(name, properties, required)}")
        return "\n".join(lines)

    def record(self) -> str:
        calls = getattr(self.env, "calls", [])
        lines = []
        if self.last_phase:
            lines.append(_phase_line(self.last_phase))
        if not calls:
            return "\n".join(lines + ["No tool called yet."])
        lines.append(f"Calls so far ({self.env.turn} turn(s) used):")
        for call in calls:
            arguments = ", ".join(f"{k}={json.dumps(v, ensure_ascii=False)}" for k, v in call.arguments.items())
            status = "ok" if call.ok else f"error ({call.error_kind})"
            result = " ".join(str(call.content).split())
            lines.append(_clip(f"  turn {call.turn}: {call.name}({arguments}) -> {status}: {result}", WIDTH * 2))
        return "\n".join(lines)

    def turns(self) -> tuple[int, int]:
        return self.env.turn, self.env.max_turns

    def last_turn_warning(self) -> str:
        return "Last turn: call submit_answer now, or the task ends without an answer."

    def after_step(self, observation: str, info: Mapping[str, Any]) -> str | None:
        phase = info.get("phase")
        if not phase:
            return None
        self.last_phase = phase
        if phase.get("index") == self.phase:
            return None
        self.phase = phase.get("index")
        return _phase_line(phase)

    def ending(self, outcome: Mapping[str, Any]) -> list[str]:
        lines = [f"your answer: {outcome.get('answer') or '-'}   expected: {outcome.get('gold_answer')}"
                 + (f" ({outcome['gold_option_text']})" if outcome.get("gold_option_text") else "")]
        scores = outcome.get("scores") or {}
        if scores:
            lines.append("dimension scores: " + ", ".join(f"{k} {v:.2f}" for k, v in scores.items()))
        for violation in outcome.get("violations") or []:
            lines.append(f"safety violation (severity {violation.get('severity')}): {violation.get('name')}: "
                         f"{violation.get('description', '')}")
        phases = outcome.get("phases") or []
        if phases:
            lines.append(f"phases passed: {outcome.get('phases_passed', 0)}/{len(phases)}")
        return lines


def _clip(text: str, width: int) -> str:
    return text if len(text) <= width else text[: width - 4] + " ..."


def _phase_line(phase: Mapping[str, Any]) -> str:
    if not phase:
        return ""
    limit = f", time limit {phase['time_limit']} calls" if phase.get("time_limit") else ""
    return (f"[phase {phase.get('index')}/{phase.get('of')}: {phase.get('title') or phase.get('name')}{limit}] "
            f"{phase.get('goal') or ''}").rstrip()
