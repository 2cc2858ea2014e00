"""Grading a task's natural-language assertions: by their rule when they have one (``clinical_gym.tool_env.tasks``
rule kinds), else by an LLM judge when one is configured, else left ungraded (and out of the score).

A judge that fails (``LLMError``) or answers neither PASS nor FAIL leaves the assertion ungraded with the error
recorded, so grader failures are never scored as failed assertions; a tool environment then ends the episode as
truncated with ``info["error"]`` (``ToolDomainEnv``), so the incomplete grade is never trained on.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

from clinical_gym.cases.schema import normalize
from clinical_gym.llm.base import LLMClient, LLMError
from clinical_gym.rewards.episode import EpisodeRecord, contains_term
from clinical_gym.tool_env.tasks import (
    AnswerMentionsRule,
    AnswerOmitsRule,
    Assertion,
    CalledBeforeRule,
    CalledRule,
    NotCalledRule,
    RecordKeysRule,
    RecordMentionsRule,
    RecordRule,
    Rule,
    ToolPattern,
    values_match,
)

JUDGE_PROMPT = ("You grade one statement about a clinical agent's episode. Read the task, the agent's tool calls and "
                "its final answer, then reply with exactly one word: PASS if the statement is true of the episode, "
                "FAIL otherwise.")


class AssertionVerdict(BaseModel):
    """The grade of one assertion: ``passed`` is None when it could not be graded (``error`` says why)."""

    model_config = ConfigDict(frozen=True)

    text: str
    passed: bool | None
    method: Literal["rule", "judge", "ungraded"]
    error: str | None = None


def check_rule(rule: Rule, record: EpisodeRecord) -> bool:
    """Whether ``record`` satisfies ``rule``."""
    check = _CHECKS.get(type(rule)) or next((c for kind, c in _CHECKS.items() if isinstance(rule, kind)), None)
    if check is None:
        raise TypeError(f"unknown rule {type(rule).__name__}")
    return check(rule, record)


def _answer_text(record: EpisodeRecord) -> str:
    return record.answer.text if record.answer else ""


def _called_before(rule: CalledBeforeRule, record: EpisodeRecord) -> bool:
    first, then = _first_match(rule.first, record), _first_match(rule.then, record)
    return first is not None and then is not None and first < then


def _answer_omits(rule: AnswerOmitsRule, record: EpisodeRecord) -> bool:
    text = _answer_text(record)
    return record.answer is not None and not any(contains_term(text, term) for term in rule.none_of)


def _record_keys(rule: RecordKeysRule, record: EpisodeRecord) -> bool:
    return any(_has_keys(_field(item, rule.field), rule.keys) for item in _collection(record.final_db,
               rule.collection) if _item_matches(item, rule.match))


def _record_mentions(rule: RecordMentionsRule, record: EpisodeRecord) -> bool:
    return any(any(contains_term(_field_text(_field(item, rule.field)), term) for term in rule.any_of)
               for item in _collection(record.final_db, rule.collection) if _item_matches(item, rule.match))


_CHECKS: dict[type, Callable[[Any, EpisodeRecord], bool]] = {  # one function per rule kind, found by the rule's type
    CalledRule: lambda rule, record: _first_match(rule.call, record) is not None,
    NotCalledRule: lambda rule, record: _first_match(rule.call, record) is None,
    CalledBeforeRule: _called_before,
    AnswerMentionsRule: lambda rule, record: any(contains_term(_answer_text(record), term) for term in rule.any_of),
    AnswerOmitsRule: _answer_omits,
    RecordRule: lambda rule, record: any(_item_matches(item, rule.match)
                                         for item in _collection(record.final_db, rule.collection)),
    RecordKeysRule: _record_keys,
    RecordMentionsRule: _record_mentions,
}


def _first_match(pattern: ToolPattern, record: EpisodeRecord) -> int | None:
    """The index of the first successful call matching ``pattern`` (only the tool's own calls are looked at)."""
    for c in record.call_summary.by_name.get(pattern.name, ()):
        if pattern.matches(c.name, c.arguments):
            return c.index
    return None


def _collection(db: BaseModel | None, path: str) -> list[Any]:
    """The items at dotted ``path`` (model attributes or mapping keys) of the final database."""
    node: Any = db
    for part in path.split("."):
        if isinstance(node, BaseModel) and part in type(node).__pydantic_fields__:  # (model_fields: ~0.4 us more)
            node = getattr(node, part)
        elif isinstance(node, Mapping) and part in node:
            node = node[part]
        else:
            return []
    if isinstance(node, Mapping):
        return list(node.values())
    return list(node) if isinstance(node, list) else []


def _field(item: Any, path: str) -> Any:
    """The value at dotted ``path`` inside a database item (None when absent)."""
    node: Any = item.model_dump(mode="json") if isinstance(item, BaseModel) else item
    for part in path.split("."):
        if not isinstance(node, Mapping) or part not in node:
            return None
        node = node[part]
    return node


def _has_keys(value: Any, keys: list[str]) -> bool:
    """Whether the mapping ``value`` has every one of ``keys`` (normalised) with a non-empty value."""
    if not isinstance(value, Mapping):
        return False
    present = {normalize(str(k)) for k, v in value.items() if _field_text(v).strip()}
    return all(normalize(k) in present for k in keys)


def _field_text(value: Any) -> str:
    """A field's value as text: strings as they are, lists and mappings as their values joined."""
    if isinstance(value, str):
        return value
    if isinstance(value, Mapping):
        return "\n".join(_field_text(v) for v in value.values())
    if isinstance(value, list):
        return "\n".join(_field_text(v) for v in value)
    return "" if value is None else str(value)


def _item_matches(item: Any, match: Mapping[str, Any]) -> bool:
    """Text fields match when they contain the expected words; other fields by value."""
    if isinstance(item, BaseModel):
        item = item.model_dump(mode="json")
    if not isinstance(item, Mapping):
        return False
    for key, expected in match.items():
        actual = item.get(key)
        if isinstance(expected, str) and isinstance(actual, str):
            if not contains_term(actual, expected):
                return False
        elif not values_match(expected, actual):
            return False
    return True


class LLMAssertionJudge:
    """Grades rule-less assertions with an LLM (deterministic settings: temperature 0, fixed seed)."""

    def __init__(self, client: LLMClient, *, seed: int = 0, max_tokens: int = 8) -> None:
        self.client = client
        self.seed = seed
        self.max_tokens = max_tokens

    def judge(self, assertion: str, record: EpisodeRecord) -> bool:
        """True for PASS, False for FAIL; raises ``LLMError`` for a failed call or an unreadable verdict."""
        reply = self.client.chat([{"role": "system", "content": JUDGE_PROMPT},
                                  {"role": "user", "content": _episode_summary(assertion, record)}],
                                 max_tokens=self.max_tokens, temperature=0.0, seed=self.seed)
        words = reply.strip().upper().split()
        verdict = words[0].strip(".:!*") if words else ""
        if verdict not in ("PASS", "FAIL"):
            raise LLMError(f"judge reply is neither PASS nor FAIL: {reply[:80]!r}")
        return verdict == "PASS"


def _episode_summary(assertion: str, record: EpisodeRecord) -> str:
    calls = "\n".join(f"{c.index + 1}. {c.name}({c.arguments}) -> {'ok' if c.ok else 'error'}: {c.content[:300]}"
                      for c in record.calls) or "(none)"
    answer = record.answer.text if record.answer else "(no answer submitted)"
    return f"Task:\n{record.task.prompt}\n\nTool calls:\n{calls}\n\nFinal answer:\n{answer}\n\nStatement: {assertion}"


_SHARED: dict[tuple[str, bool | None, str], tuple[AssertionVerdict, dict[str, Any]]] = {}
"""The error-free verdicts by (text, passed, method), each with its ``model_dump()`` made once."""


def _verdict(text: str, passed: bool | None, method: Literal["rule", "ungraded"]) -> AssertionVerdict:
    """A verdict without an error; frozen, so one instance serves every episode that grades the same way (and its
    dump is made once: ``verdict_dump``)."""
    known = _SHARED.get((text, passed, method))
    if known is None:
        if len(_SHARED) >= 4096:
            _SHARED.clear()
        verdict = AssertionVerdict(text=text, passed=passed, method=method)
        known = _SHARED[text, passed, method] = (verdict, verdict.model_dump())
    return known[0]


def verdict_dump(verdict: AssertionVerdict) -> dict[str, Any]:
    """``verdict.model_dump()``: for a shared verdict a copy of the dump made with it (its values are immutable)."""
    known = _SHARED.get((verdict.text, verdict.passed, verdict.method))
    if known is not None and known[0] is verdict:
        return dict(known[1])
    return verdict.model_dump()


def grade_assertions(assertions: list[Assertion], record: EpisodeRecord,
                     judge: LLMAssertionJudge | None = None) -> list[AssertionVerdict]:
    """One verdict per assertion, in order."""
    verdicts = []
    for assertion in assertions:
        if assertion.rule is not None:
            verdicts.append(_verdict(assertion.text, check_rule(assertion.rule, record), "rule"))
        elif judge is None:
            verdicts.append(_verdict(assertion.text, None, "ungraded"))
        else:
            try:
                verdicts.append(AssertionVerdict(text=assertion.text, passed=judge.judge(assertion.text, record),
                                                 method="judge"))
            except LLMError as exc:
                verdicts.append(AssertionVerdict(text=assertion.text, passed=None, method="judge", error=str(exc)))
    return verdicts
