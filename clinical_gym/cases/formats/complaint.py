"""The presenting complaint in a vignette's opening sentence: what the patient came with, and for how long.

Case vignettes (MedQA, NEJM image challenges) open with one of a few phrasings: "presents with", "comes to the
physician/emergency department because of", "is brought ... with / because of / for", "complains of", "after
the onset of", each optionally with a duration ("for 2 days", "a 3-week history of", "since yesterday",
"2 hours after the onset of"). ``presenting_complaint`` finds the complaint and its duration; ``complaint_items``
splits a list of symptoms ("fever, dysuria and right flank pain") into one item per symptom.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from clinical_gym.cases.topic_match import find_topics

_COUNT = r"(?:\d+(?:\.\d+)?|an?|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|several|a few|few|many)"
_UNIT = r"(?:minutes?|hours?|days?|weeks?|months?|years?)"
_DURATION = rf"{_COUNT}[- ]{_UNIT}"
# "a 2-day history of X", "3 weeks of X"
_HISTORY_OF = re.compile(rf"(?i)^(?:an?\s+)?(?P<count>{_COUNT})[- ](?P<unit>{_UNIT})(?:[- ]long)?\s+(?:history\s+)?of\s+")
# "X for 2 days", "X over the past month", "X since yesterday", "X that began 3 hours ago"
_TRAILING = re.compile(
    rf"(?i)[\s,]+(?P<when>(?:for|over|during|in)\s+(?:the\s+)?(?:past|last|previous|preceding)?\s*(?:{_DURATION}|{_UNIT}|"
    rf"{_COUNT}\s+{_UNIT})|since\s+(?:yesterday|last\s+night|this\s+morning|the\s+morning|\w+day|{_DURATION}\s+ago)|"
    r"(?:that|which)\s+(?:(?:he|she|they|the\s+patient)\s+)?(?:had\s+)?(?:began|begun|started|has\s+been|have\s+been|was\s+first\s+noticed|"
    r"(?:first\s+)?noticed|developed|appeared|progressed|worsened)\b.*|beginning\s+.*)$"
)
_AFTER = re.compile(rf"(?i)\b(?P<count>{_COUNT})[- ](?P<unit>{_UNIT})\s+after\s+(?P<onset>(?:the\s+)?(?:onset|start|development)\s+of\s+)?"
                    r"(?P<complaint>.+)$")
# Cues in order of preference; what follows the first one found is the complaint.
_CUES: tuple[re.Pattern[str], ...] = tuple(re.compile(rf"(?i)\b{cue}\s+(?P<complaint>.+)$") for cue in (
    r"because\s+of", r"complain(?:ing|s|ed)\s+of", r"for\s+(?:an?\s+)?(?:evaluation|assessment|investigation|management)\s+of",
    r"(?:presents?|presented|presenting)(?:\s+(?:to|at)\s+[\w\s']+?)?\s+with", r"(?:is|was)\s+brought\s+[\w\s']*?\s+(?:with|for)",
    r"(?:comes?|came|is\s+seen|was\s+seen|is\s+admitted|was\s+admitted)\s+[\w\s']*?\s+with",
    r"(?:has|have)\s+(?:had|been\s+having|developed|noticed|been\s+experiencing)", r"(?:reports?|reporting|describes?|notes?|develops?|developed)",
    r"with\s+(?!(?:an?\s+)?(?:past\s+|long\s+|known\s+|remote\s+|prior\s+)?(?:medical\s+)?history\b)",
    r"after\s+(?:the\s+)?(?:onset|start|development)\s+of", r"after", r"for",
))
_ARTICLE = re.compile(r"(?i)^(?:a|an|the|some|new|recent)\s+")
_THIRD_PERSON = re.compile(r"(?i)\b(?:his|their)\b|\bher\b(?=\s+(?!from|to|up|out|in|at|with|for|and|or|so|that)[a-z])")
_THIRD_OBJECT = re.compile(r"(?i)\b(?:him|her|them)\b")
_SENTENCE_TAIL = re.compile(r"[\s.;:]+$")
_ITEM_SPLIT = re.compile(r"\s*,\s*(?:and\s+|or\s+)?|\s+and\s+")


@dataclass(frozen=True)
class Complaint:
    """What the patient came with (``what``, as a patient would say it) and for how long (``when``, e.g. "for 2 days";
    empty when the sentence does not say)."""

    what: str
    when: str = ""

    @property
    def sentence(self) -> str:
        """The complaint as one first-person-ready statement: "Fever and cough for 3 days."."""
        text = f"{self.what} {self.when}".strip()
        return text[:1].upper() + text[1:] + ("" if text.endswith((".", "!", "?")) else ".")


def _duration(count: str, unit: str, ago: bool = False) -> str:
    count, unit = count.lower(), unit.lower()
    if count in ("a", "an", "one", "1") and unit.endswith("s"):
        unit = unit[:-1]
    elif count not in ("a", "an", "one", "1") and not unit.endswith("s"):
        unit += "s"
    if count in ("a", "an"):
        count = "an" if unit[0] in "aeiouh" and unit.startswith(("hour", "a", "e", "i", "o", "u")) else "a"
    return f"{count} {unit} ago" if ago else f"for {count} {unit}"


def _clean(what: str) -> str:
    what = _SENTENCE_TAIL.sub("", what.strip())
    while (stripped := _ARTICLE.sub("", what)) != what:
        what = stripped
    return _THIRD_OBJECT.sub("me", _THIRD_PERSON.sub("my", what))


def presenting_complaint(sentence: str) -> Complaint | None:
    """The complaint (and its duration) in an opening sentence, or None when no cue names one.

    >>> presenting_complaint("A 23-year-old woman presents with fever, dysuria and right flank pain for 2 days.")
    Complaint(what='fever, dysuria and right flank pain', when='for 2 days')
    """
    text = _SENTENCE_TAIL.sub("", sentence.strip())
    after = _AFTER.search(text)
    if after:
        return Complaint(_clean(after.group("complaint")), _duration(after.group("count"), after.group("unit"), ago=not after.group("onset")))
    for cue in _CUES:
        m = cue.search(text)
        if m is None:
            continue
        what, when = m.group("complaint").strip(), ""
        history = _HISTORY_OF.match(what)
        if history:
            what, when = what[history.end():], _duration(history.group("count"), history.group("unit"))
        trailing = _TRAILING.search(what)
        if trailing and trailing.start() > 0:
            when = when or _SENTENCE_TAIL.sub("", trailing.group("when"))
            what = what[: trailing.start()]
        what = _clean(what)
        if what:
            return Complaint(what, _THIRD_PERSON.sub("my", when))
    return None


def complaint_items(what: str) -> list[str]:
    """A list complaint split into one item per symptom ("fever, dysuria and right flank pain" -> three), or the whole
    complaint when some item names no symptom ("pain and swelling of the left knee" stays one)."""
    items = [i.strip() for i in _ITEM_SPLIT.split(what) if i.strip()]
    if len(items) < 2 or not all(find_topics(i).explicit_symptoms for i in items):
        return [what]
    return items
