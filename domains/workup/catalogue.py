"""The exam catalogue of DiagnosticWorkup: what an agent can order, under which names, and what normal looks like.

Each :class:`Exam` (lab panel or test, culture, imaging study, ECG, bedside test, physical-exam section, procedure)
has a canonical name, aliases and abbreviations, and either lab :class:`Component` s with units and reference ranges
or a normal-findings text. :class:`Catalogue` turns free-text exam requests into exams (:meth:`Catalogue.resolve`),
judges whether two exam names refer to the same exam (:meth:`Catalogue.match`, DiagGym's exam matching) and
synthesises normal results. The data is ``data/exams.json``; :func:`load_catalogue` reads and validates it once.
"""

from __future__ import annotations

import difflib
import json
import math
import re
import unicodedata
from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator
from functools import cached_property, lru_cache
from importlib import resources
from typing import Literal, NamedTuple

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, model_validator

from clinical_gym.cases.schema import ExamSystem, LabValue, TestCategory

Sex = Literal["male", "female"]
ExamKind = Literal[
    "lab_panel", "lab_test", "microbiology", "pathology", "imaging", "endoscopy", "ecg", "physiology", "bedside",
    "physical_exam",
]
RESULT_CATEGORY: dict[str, TestCategory] = {
    "lab_panel": "lab", "lab_test": "lab", "microbiology": "microbiology", "pathology": "pathology", "imaging": "imaging",
    "endoscopy": "imaging", "ecg": "ecg", "physiology": "other", "bedside": "bedside", "physical_exam": "bedside",
}
"""The case-schema category (``TestResult.category``) of each exam kind."""
LAB_KINDS = frozenset({"lab_panel", "lab_test"})
"""Kinds whose normal result is their component values alone; every other exam has a normal-findings text."""


# ---------------------------------------------------------------------------------------------------------------------
# Exam-name normalisation: the word sequence that names are compared by.

_UNICODE = str.maketrans({"β": " beta ", "α": " alpha ", "γ": " gamma ", "µ": "u", "μ": "u", "–": " ", "—": " ",
                          "’": "'"})
_REASON = re.compile(
    r"\b(?:to rule out|rule out|r/o|to exclude|to assess|to evaluate|to look for|looking for|because|in view of|"
    r"given|due to|in case)\b.*$"
)
_PRE = (
    (re.compile(r"'(?:d|ll|s|m|re|ve)\b"), " "),
    (re.compile(r"\bw/o\b"), " without "),
    (re.compile(r"\bw/"), " with "),
    (re.compile(r"\bu/s\b|\bu\.s\.?(?!\w)"), " ultrasound "),  # "RENAL U.S." (MIMIC-IV study names)
    # MIMIC-IV radiograph names give the views: "CHEST (PA AND LAT)", "KNEE (2 VIEWS)", "CHEST (PORTABLE AP)"
    (re.compile(r"\((?:\s*\d+\s*views?|\s*(?:pa|ap)(?:\s*(?:and|&)\s*lat(?:eral)?)?|\s*portable(?:\s*(?:ap|pa))?|\s*single\s*views?)\s*\)"), " x ray "),
    (re.compile(r"&"), " and "),
)
_WORD = re.compile(r"[a-z0-9]+")
_IRREGULAR = {
    "gases": "gas", "analyses": "analysis", "indices": "index", "feet": "foot", "testes": "testis", "vertebrae": "vertebra",
    "bacilli": "bacillus", "fungi": "fungus",
}
_KEEP_S = ("ss", "us", "is")
_SYNONYMS: dict[str, tuple[str, ...]] = {
    **dict.fromkeys(("xray", "xr", "radiograph", "radiography"), ("x", "ray")),
    **dict.fromkeys(("ekg", "electrocardiogram", "electrocardiograph", "electrocardiography"), ("ecg",)),
    **dict.fromkeys(("us", "usg", "sonography", "sonogram", "ultrasonography", "ultrasonogram"), ("ultrasound",)),
    **dict.fromkeys(("abdominal", "abdo", "abd"), ("abdomen",)),
    **dict.fromkeys(("angiogram", "angio"), ("angiography",)),
    **dict.fromkeys(("echocardiogram", "echocardiography"), ("echo",)),
    **dict.fromkeys(("strep", "streptococcal"), ("streptococcus",)),
    **dict.fromkeys(("noncontrast", "unenhanced"), ("without", "contrast")),
    "pelvic": ("pelvis",), "renal": ("kidney",), "hepatic": ("liver",), "scrotal": ("scrotum",), "mr": ("mri",),
    "unilat": ("unilateral",), "bilat": ("bilateral",), "ext": ("extremity",),  # "UNILAT LOWER EXT VEINS"
    "cta": ("ct", "angiography"),
    "mra": ("mri", "angiography"),
}
_PHRASES: dict[tuple[str, ...], tuple[str, ...]] = {
    ("computed", "tomography"): ("ct",),
    ("cat", "scan"): ("ct",),
    ("magnetic", "resonance", "imaging"): ("mri",),
    ("magnetic", "resonance"): ("mri",),
    ("plain", "x", "ray"): ("x", "ray"),
    ("plain", "film"): ("x", "ray"),
    ("non", "contrast"): ("without", "contrast"),
    ("with", "and", "without", "contrast"): ("contrast",),
    ("contrast", "enhanced"): ("contrast",),
}
_PHRASE_LENGTHS = sorted({len(p) for p in _PHRASES}, reverse=True)
_DROP = frozenset({"s", "the", "of", "and", "with", "for", "to", "on", "in", "at", "by", "from", "via"})
_LEADING = frozenset({
    "please", "pls", "kindly", "order", "ordering", "get", "obtain", "check", "send", "request", "requesting", "perform",
    "do", "run", "draw", "arrange", "book", "schedule", "i", "we", "would", "like", "want", "need", "let", "lets", "a",
    "an", "some", "me", "patient", "him", "her", "them", "this", "stat", "urgent", "urgently", "now",
    "immediately", "repeat", "serial", "new", "another", "also", "then", "next", "recommend", "suggest", "consider",
    "can", "could", "you", "will", "should", "go", "ahead", "start", "proceed", "perhaps", "maybe",
})
_TRAILING = frozenset({"please", "pls", "stat", "now", "asap", "urgently", "urgent", "today", "immediately", "thanks",
                       "thank", "you", "too", "also", "again", "then"})
_TIMES = re.compile(r"^x\d$")
GENERIC_WORDS = frozenset({
    "serum", "plasma", "blood", "level", "test", "study", "assay", "screen", "screening", "analysis", "examination",
    "exam", "evaluation", "measurement", "scan", "imaging", "panel", "profile", "investigation", "routine", "left",
    "right", "bilateral", "both", "lt", "rt", "unilateral", "contrast", "without", "iv", "gadolinium", "plain",
    "quantitative", "qualitative", "total", "random", "formal", "full", "diagnostic",
})
"""Words a request may add or leave out without changing which exam it names (second-pass matching only)."""


def _singular(word: str) -> str:
    if word in _IRREGULAR:
        return _IRREGULAR[word]
    if len(word) > 4 and word.endswith("ies"):
        return word[:-3] + "y"
    if len(word) > 3 and word.endswith("s") and not word.endswith(_KEEP_S):
        return word[:-1]
    return word


def _us_spelling(word: str) -> str:
    word = word.replace("ae", "e").replace("rrhoe", "rrhe").replace("coel", "cel")
    return word[1:] if word.startswith("oe") else word


def _replace_phrases(words: list[str]) -> list[str]:
    out: list[str] = []
    i = 0
    while i < len(words):
        for n in _PHRASE_LENGTHS:
            if tuple(words[i:i + n]) in _PHRASES:
                out.extend(_PHRASES[tuple(words[i:i + n])])
                i += n
                break
        else:
            out.append(words[i])
            i += 1
    return out


@lru_cache(maxsize=65536)
def exam_words(text: str) -> tuple[str, ...]:
    """The normalised words of an exam request: lower case, US spelling, singular, synonyms unified, filler removed.

    >>> exam_words("Please order a STAT chest X-rays")
    ('chest', 'x', 'ray')
    """
    text = unicodedata.normalize("NFKD", text.lower().translate(_UNICODE))
    text = _REASON.sub(" ", text.encode("ascii", "ignore").decode())
    for pattern, repl in _PRE:
        text = pattern.sub(repl, text)
    words: list[str] = []
    for w in _WORD.findall(text):
        w = _singular(_us_spelling(w))
        words.extend(_SYNONYMS.get(w, (w,)))
    words = [w for w in _replace_phrases(words) if w not in _DROP]
    start, end = 0, len(words)
    while start < end and words[start] in _LEADING:
        start += 1
    while end > start and (words[end - 1] in _TRAILING or _TIMES.match(words[end - 1])):
        end -= 1
    return tuple(words[start:end])


def _generic_stripped(words: tuple[str, ...]) -> tuple[str, ...]:
    return tuple(w for w in words if w not in GENERIC_WORDS)


def _allowed_edits(length: int) -> int:
    return 0 if length < 5 else 1 if length < 9 else 2


def _edit_distance(a: str, b: str, limit: int) -> int:
    """Optimal-string-alignment distance (insert, delete, substitute, swap neighbours); ``limit + 1`` once above it."""
    if abs(len(a) - len(b)) > limit:
        return limit + 1
    prev2: list[int] = []
    prev = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        cur = [i] + [0] * len(b)
        for j, cb in enumerate(b, 1):
            cur[j] = min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (ca != cb))
            if i > 1 and j > 1 and ca == b[j - 2] and a[i - 2] == cb:
                cur[j] = min(cur[j], prev2[j - 2] + 1)
        if min(cur) > limit:
            return limit + 1
        prev2, prev = prev, cur
    return prev[-1]


def _deletions(word: str, depth: int) -> set[str]:
    out, frontier = {word}, {word}
    for _ in range(depth):
        frontier = {w[:i] + w[i + 1:] for w in frontier for i in range(len(w))}
        out |= frontier
    return out


class _Neighbours:
    """Finds the indexed string nearest to a query within a few edits, through shared deletions (SymSpell)."""

    def __init__(self, strings: Iterable[str], depth: Callable[[int], int]):
        self._index: dict[str, list[str]] = defaultdict(list)
        for s in sorted(set(strings)):
            for d in _deletions(s, depth(len(s))):
                self._index[d].append(s)

    def nearest(self, query: str, limit: int, accept: Callable[[str], bool] = lambda s: True) -> str | None:
        """The closest accepted string at most ``limit`` edits away (ties: the most similar by difflib), or None."""
        candidates = {c for d in _deletions(query, limit) for c in self._index.get(d, ())}
        scored = [(dist, -difflib.SequenceMatcher(None, query, c).ratio(), c) for c in candidates
                  if accept(c) and (dist := _edit_distance(query, c, limit)) <= limit]
        return min(scored)[2] if scored else None


# ---------------------------------------------------------------------------------------------------------------------
# Data models.

class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


Bound = float | None


class Component(_Model):
    """One reported item of a lab result: numeric with a unit and reference range, or qualitative with a normal text.

    ``low``/``high`` is the reference range (``None`` for an open end); ``female`` overrides it for female patients
    where the range differs by sex. ``typical`` narrows where synthetic normal values are drawn when the reference
    range is open-ended or starts at zero (a total cholesterol of 12 mg/dL is "below 200" but not a normal value),
    and alone marks a numeric result that labs report without a reference range (a spot urine sodium).
    """

    name: str = Field(min_length=1)
    aliases: tuple[str, ...] = ()
    unit: str = ""
    low: Bound = None
    high: Bound = None
    female: tuple[Bound, Bound] | None = None
    typical: tuple[float, float] | None = None
    decimals: int = Field(default=0, ge=0, le=4)
    normal_text: str | None = None

    @model_validator(mode="after")
    def _consistent(self) -> "Component":
        numeric = self.low is not None or self.high is not None or self.typical is not None
        if numeric == bool(self.normal_text):
            raise ValueError(f"component {self.name!r} needs either a numeric range or a normal_text, not both")
        if self.female is not None and self.low is None and self.high is None:
            raise ValueError(f"component {self.name!r} has a female reference range but no general one")
        for sex in ("male", "female") if numeric else ():
            low, high = self.reference(sex)
            if low is not None and high is not None and low >= high:
                raise ValueError(f"component {self.name!r}: reference low {low} is not below high {high} ({sex})")
            lo, hi = self.sampling_range(sex)
            if not math.isfinite(lo) or not math.isfinite(hi):
                raise ValueError(f"component {self.name!r} has an open-ended range: give 'typical'")
            if math.ceil(lo * 10 ** self.decimals - 1e-9) > math.floor(hi * 10 ** self.decimals + 1e-9):
                raise ValueError(f"component {self.name!r}: no value with {self.decimals} decimals in {lo}-{hi} ({sex})")
        return self

    @property
    def numeric(self) -> bool:
        """Whether results are numbers (else a text such as "negative")."""
        return self.normal_text is None

    def reference(self, sex: Sex) -> tuple[Bound, Bound]:
        """The reference range (low, high) for a patient of this sex; ``None`` marks an open end."""
        if sex == "female" and self.female is not None:
            return self.female
        return self.low, self.high

    def sampling_range(self, sex: Sex) -> tuple[float, float]:
        """Where normal values for this sex are drawn: the reference range, narrowed to ``typical`` if given."""
        low, high = self.reference(sex)
        lo, hi = (-math.inf if low is None else low), (math.inf if high is None else high)
        if self.typical is not None:
            lo, hi = max(lo, self.typical[0]), min(hi, self.typical[1])
        return lo, hi

    def normal_value(self, sex: Sex, rng: np.random.Generator, reference: tuple[float, float] | None = None) -> LabValue:
        """A normal result: a value drawn within the range with this component's decimals, or the normal text.
        ``reference`` replaces the range (a child's: ``paediatric_ranges``) for the draw and the report."""
        if not self.numeric:
            return LabValue(name=self.name, text=self.normal_text, unit=self.unit)
        scale = 10 ** self.decimals
        lo, hi = reference or self.sampling_range(sex)
        steps = int(rng.integers(math.ceil(lo * scale - 1e-9), math.floor(hi * scale + 1e-9) + 1))
        low, high = reference or self.reference(sex)
        return LabValue(name=self.name, value=round(steps / scale, self.decimals), unit=self.unit, ref_low=low,
                        ref_high=high)


class Exam(_Model):
    """An orderable exam: its canonical name, kind, aliases, and its components and/or normal-findings text.

    ``exam_system`` links a physical-exam section to the case's ``physical_exam`` key; ``part_of`` names the exam
    this one is a sub-item of (a cranial nerve exam is part of the neurological exam); ``includes`` names narrower
    studies whose findings this exam's report also covers (an abdominal ultrasound covers the right upper quadrant
    and the kidneys): a recorded one answers an order of this exam, with no effect on exam matching.
    """

    name: str = Field(min_length=1)
    kind: ExamKind
    aliases: tuple[str, ...] = ()
    includes: tuple[str, ...] = ()
    components: tuple[Component, ...] = ()
    normal_text: str | None = None
    exam_system: ExamSystem | None = None
    part_of: str | None = None

    @model_validator(mode="after")
    def _consistent(self) -> "Exam":
        if not self.components and not self.normal_text:
            raise ValueError(f"exam {self.name!r} needs components or a normal_text")
        if self.kind not in LAB_KINDS and not self.normal_text:
            raise ValueError(f"exam {self.name!r} of kind {self.kind} needs a normal_text")
        if self.kind == "lab_panel" and len(self.components) < 2:
            raise ValueError(f"lab panel {self.name!r} needs at least two components")
        if (self.kind == "physical_exam") != (self.exam_system is not None):
            raise ValueError(f"exam {self.name!r}: exam_system is required for, and only for, physical-exam sections")
        names = [exam_words(c.name) for c in self.components]
        if len(set(names)) != len(names):
            raise ValueError(f"exam {self.name!r} lists a component twice")
        return self

    def test_category(self) -> TestCategory:
        """The ``TestResult.category`` a result of this exam has in a case."""
        return RESULT_CATEGORY[self.kind]

    def component(self, name: str) -> Component:
        """The component called ``name`` or one of its aliases (compared as normalised words, see ``exam_words``)."""
        key = exam_words(name)
        for c in self.components:
            if key in {exam_words(n) for n in (c.name, *c.aliases)}:
                return c
        raise KeyError(f"{self.name} has no component {name!r}")

    def reference(self, component: str, sex: Sex) -> tuple[Bound, Bound]:
        """Reference range (low, high) of a numeric component for a patient of this sex."""
        c = self.component(component)
        if not c.numeric:
            raise ValueError(f"{c.name} is qualitative (normal: {c.normal_text}); it has no numeric range")
        return c.reference(sex)


class Resolution(NamedTuple):
    """What an exam request names: an exam, and the component when the request named one (``"potassium"``)."""

    exam: Exam
    component: Component | None = None


# ---------------------------------------------------------------------------------------------------------------------
# The catalogue and its name index.

_MAX_FUZZY_WORDS = 16  # longer requests are matched exactly only: they are sentences, not exam names
_NEAR_MIN_LENGTH, _NEAR_EDITS = 6, 1  # whole-request typos: one edit, in requests of six letters or more


class Catalogue:
    """Every exam, indexed by normalised names, with name resolution, exam matching and normal results.

    Construction validates the exams: unique names, no alias (after normalisation) owned by two exams, one definition
    per component name, no component alias shared by two components, ``part_of`` naming a catalogue exam, and one
    smallest panel for every component.
    """

    def __init__(self, exams: Iterable[Exam]):
        self.exams: tuple[Exam, ...] = tuple(exams)
        self._by_name = {e.name: e for e in self.exams}
        self._panels: dict[str, list[Exam]] = defaultdict(list)  # component name -> exams reporting it, smallest first
        for e in sorted(self.exams, key=lambda e: len(e.components)):
            for c in e.components:
                self._panels[c.name].append(e)
        problems = self._problems()
        if problems:
            raise ValueError("invalid exam catalogue:\n" + "\n".join(problems))
        self._exact: dict[str, Resolution] = {}
        self._components: dict[str, Resolution] = {}
        self._index()
        self._cached_lookup = lru_cache(maxsize=65536)(self._lookup)
        self._cached_suggestions = lru_cache(maxsize=4096)(self._rank)

    def __reduce__(self) -> tuple[type[Catalogue], tuple[tuple[Exam, ...]]]:
        return Catalogue, (self.exams,)  # pickled and copied as its exams; the indexes and caches are rebuilt

    def __len__(self) -> int:
        return len(self.exams)

    def __iter__(self) -> Iterator[Exam]:
        return iter(self.exams)

    # -- validation ---------------------------------------------------------------------------------------------------

    def _problems(self) -> list[str]:
        problems: list[str] = []
        if len(self._by_name) != len(self.exams):
            problems.append("duplicate exam names")
        owner: dict[tuple[str, ...], str] = {}
        for e in self.exams:
            for alias in (e.name, *e.aliases):
                key = exam_words(alias)
                if not key:
                    problems.append(f"{e.name}: alias {alias!r} is only filler words")
                elif owner.setdefault(key, e.name) != e.name:
                    problems.append(f"alias {alias!r} belongs to both {owner[key]!r} and {e.name!r}")
            if e.part_of is not None and e.part_of not in self._by_name:
                problems.append(f"{e.name}: part_of names unknown exam {e.part_of!r}")
            problems.extend(f"{e.name}: includes unknown exam {name!r}" for name in e.includes if name not in self._by_name)
        definitions: dict[str, Component] = {}
        component_owner: dict[tuple[str, ...], str] = {}
        for c in (c for e in self.exams for c in e.components):
            if definitions.setdefault(c.name, c) != c:
                problems.append(f"component {c.name!r} is defined twice with different data")
            for alias in (c.name, *c.aliases):
                key = exam_words(alias)
                if component_owner.setdefault(key, c.name) != c.name:
                    problems.append(f"component alias {alias!r} belongs to both {component_owner[key]!r} and {c.name!r}")
        for name, panels in self._panels.items():
            if len(panels) > 1 and len(panels[0].components) == len(panels[1].components):
                problems.append(f"component {name!r} has two smallest panels: {panels[0].name!r} and {panels[1].name!r}")
        return problems

    # -- index ---------------------------------------------------------------------------------------------------------

    def _index(self) -> None:
        loose: dict[str, list[Resolution]] = defaultdict(list)

        def add(table: dict[str, Resolution], alias: str, hit: Resolution) -> None:
            words = exam_words(alias)
            table.setdefault(" ".join(words), hit)
            keys = {" ".join(sorted(words)), "".join(words)}
            stripped = _generic_stripped(words)
            if len(stripped) > 1:  # one bare word left ("kidney" from "renal panel") is too vague to stand for an exam
                keys |= {" ".join(stripped), " ".join(sorted(stripped))}
            for key in keys:
                loose[key].append(hit)

        for e in self.exams:
            for alias in (e.name, *e.aliases):
                add(self._exact, alias, Resolution(e))
        for name, panels in self._panels.items():
            c = next(c for c in panels[0].components if c.name == name)
            for alias in (c.name, *c.aliases):
                add(self._components, alias, Resolution(panels[0], c))
        self._loose = {key: hit for key, hits in loose.items() if (hit := _unambiguous(hits)) is not None}
        self._vocabulary = ({w for key in (*self._exact, *self._components) for w in key.split()} | GENERIC_WORDS
                            | set(_SYNONYMS) | {w for phrase in _PHRASES for w in phrase})
        self._despaced: dict[str, tuple[str, Resolution]] = {}
        for key, hit in (*self._components.items(), *self._exact.items()):  # exam names win over component names
            self._despaced[key.replace(" ", "")] = (key, hit)

    @cached_property
    def _word_neighbours(self) -> _Neighbours:
        # a word of n letters is found by queries up to _allowed_edits(n + 2) edits away
        return _Neighbours(self._vocabulary, lambda n: _allowed_edits(n + 2))

    @cached_property
    def _key_neighbours(self) -> _Neighbours:
        return _Neighbours(self._despaced, lambda n: _NEAR_EDITS if n >= _NEAR_MIN_LENGTH - _NEAR_EDITS else 0)

    # -- resolution ----------------------------------------------------------------------------------------------------

    def resolve(self, name: str) -> Exam | None:
        """The exam a free-text request names (exact, alias, abbreviation, component, or a close typo), else None."""
        hit = self.lookup(name)
        return hit.exam if hit is not None else None

    def lookup(self, name: str) -> Resolution | None:
        """The exam a request names and, when it names a lab component ("potassium"), that component."""
        return self._cached_lookup(name)

    def _lookup(self, name: str) -> Resolution | None:
        words = exam_words(name)
        hit = self._exact.get(" ".join(words)) if words else None
        if hit is not None:
            return hit
        variants = [v for v in dict.fromkeys([words, *(exam_words(v) for v in _variants(name))]) if v]
        for find in (self._find, self._find_within, self._find_corrected, self._find_near):
            for words in variants:
                if find is not self._find and len(words) > _MAX_FUZZY_WORDS:
                    continue
                hit = find(words)
                if hit is not None:
                    return hit
        return None

    def _find(self, words: tuple[str, ...]) -> Resolution | None:
        stripped = _generic_stripped(words)
        for key in (" ".join(words), " ".join(stripped)):
            hit = self._exact.get(key) or self._components.get(key)
            if hit is not None:
                return hit
        for key in (" ".join(sorted(words)), " ".join(stripped), " ".join(sorted(stripped)), "".join(words)):
            if key in self._loose:
                return self._loose[key]
        return None

    def _find_within(self, words: tuple[str, ...]) -> Resolution | None:
        """The longest known name of two words or more inside a longer request: anywhere if it is at least half the
        request, else at its start ("KOH preparation of toe web scraping")."""
        n = len(words)
        for size in range(n - 1, 1, -1):
            for start in range(n - size + 1) if 2 * size >= n else (0,):
                key = " ".join(words[start:start + size])
                hit = self._exact.get(key) or self._components.get(key)
                if hit is not None:
                    return hit
        return None

    def _correct_word(self, word: str) -> str:
        limit = _allowed_edits(len(word))
        if word in self._vocabulary or word.isdigit() or limit == 0:
            return word
        return self._word_neighbours.nearest(word, limit) or word

    def _find_corrected(self, words: tuple[str, ...]) -> Resolution | None:
        corrected = tuple(self._correct_word(w) for w in words)
        if corrected == words:
            return None
        corrected = exam_words(" ".join(corrected))  # a corrected word may be one that synonyms replace
        return self._find(corrected) or self._find_within(corrected)

    def _find_near(self, words: tuple[str, ...]) -> Resolution | None:
        """A known name one edit from the whole request, spaces ignored ("chestxary"); a name that only adds or drops
        a whole word ("hepatitis" / "hepatitis c") is a different name, not a typo."""
        query = "".join(words)
        if len(query) < _NEAR_MIN_LENGTH:
            return None

        def not_a_word_apart(key: str) -> bool:
            key_words = set(self._despaced[key][0].split())
            return not (key_words < set(words) or set(words) < key_words)

        found = self._key_neighbours.nearest(query, _NEAR_EDITS, not_a_word_apart)
        return self._despaced[found][1] if found is not None else None

    def names_in(self, phrase: str) -> tuple[list[Exam], tuple[str, ...]]:
        """The exams a phrase names by an exact name, alias or component name (its normalised words, longest names
        first, not overlapping), in order, and the phrase's words that name none ("measures tsh and free t4" ->
        TSH, Free T4 and ("measures",)). No typo correction: a phrase is not a request."""
        words = exam_words(phrase)
        found: list[Exam] = []
        rest: list[str] = []
        i = 0
        while i < len(words):
            for size in range(min(_MAX_FUZZY_WORDS, len(words) - i), 0, -1):
                key = " ".join(words[i:i + size])
                hit = self._exact.get(key) or self._components.get(key)
                if hit is not None:
                    found.append(hit.exam)
                    i += size
                    break
            else:
                rest.append(words[i])
                i += 1
        return found, tuple(rest)

    def suggest(self, name: str, k: int = 3) -> list[str]:
        """The canonical names of the ``k`` exams whose names are closest to ``name`` (for "unknown exam" replies)."""
        query = " ".join(exam_words(name)) or name.strip().lower()
        return list(self._cached_suggestions(query, k)) if query else []

    def _rank(self, query: str, k: int) -> tuple[str, ...]:
        matcher = difflib.SequenceMatcher(autojunk=False)
        matcher.set_seq2(query)
        best: dict[str, float] = {}
        for key, hit in (*self._exact.items(), *self._components.items()):
            matcher.set_seq1(key)
            score = matcher.ratio()
            if score > best.get(hit.exam.name, -1.0):
                best[hit.exam.name] = score
        return tuple(sorted(best, key=lambda n: (-best[n], n))[:k])

    # -- matching and results -----------------------------------------------------------------------------------------

    def match(self, a: str, b: str) -> bool:
        """Whether two exam names refer to the same exam, or one names a component or sub-item of the other.

        Unresolvable names match only a name with the same normalised words.
        """
        ha, hb = self.lookup(a), self.lookup(b)
        if ha is None or hb is None:
            wa, wb = exam_words(a), exam_words(b)
            return bool(wa) and wa == wb
        ma, mb = _members(ha), _members(hb)
        return ma <= mb or mb <= ma or self._part_of(ha.exam, hb.exam) or self._part_of(hb.exam, ha.exam)

    def _part_of(self, child: Exam, parent: Exam) -> bool:
        seen: set[str] = set()
        while child.part_of is not None and child.part_of not in seen:
            if child.part_of == parent.name:
                return True
            seen.add(child.part_of)
            child = self._by_name[child.part_of]
        return False

    def normal_result(self, exam: Exam | str, sex: Sex, rng: np.random.Generator) -> list[LabValue]:
        """Normal values for every component of an exam (empty for report-only exams: see ``Exam.normal_text``)."""
        if isinstance(exam, str):
            found = self.resolve(exam)
            if found is None:
                raise KeyError(f"unknown exam {exam!r}")
            exam = found
        return [c.normal_value(sex, rng) for c in exam.components]


def _variants(name: str) -> list[str]:
    """Other readings of a request: outside and inside parentheses, and each part of a list ("X and Y", "X/Y")."""
    out: list[str] = []
    if "(" in name:
        out.append(re.sub(r"\([^)]*\)", " ", name))
        out.extend(re.findall(r"\(([^)]*)\)", name))
    parts = re.split(r"\s+and\s+|\s*[,;/]\s*|\s+&\s+|\s+\+\s+", name)
    if len(parts) > 1:
        out.extend(parts)
    return out


def _unambiguous(hits: list[Resolution]) -> Resolution | None:
    """The one thing several names sharing a loose key point to: None when they name different exams."""
    if len({h.exam.name for h in hits}) != 1:
        return None
    if len({h.component.name if h.component else None for h in hits}) == 1:
        return hits[0]
    return Resolution(hits[0].exam)


def _members(hit: Resolution) -> set[str]:
    """What a resolved name covers: its component, else all of its exam's components, else the exam itself."""
    if hit.component is not None:
        return {hit.component.name}
    return {c.name for c in hit.exam.components} or {"exam:" + hit.exam.name}


def _resolved_components(raw: dict, components: dict[str, Component]) -> dict:
    missing = [n for n in raw.get("components", ()) if n not in components]
    if missing:
        raise ValueError(f"exam {raw.get('name')!r} lists undefined components {missing}")
    return {**raw, "components": [components[n] for n in raw.get("components", ())]}


def catalogue_from_json(text: str) -> Catalogue:
    """A catalogue from the ``exams.json`` format: component definitions, and exams that list components by name."""
    raw = json.loads(text)
    components = {c["name"]: Component.model_validate(c) for c in raw["components"]}
    if len(components) != len(raw["components"]):
        raise ValueError("a component name is defined twice")
    exams = [Exam.model_validate(_resolved_components(e, components)) for e in raw["exams"]]
    unused = set(components) - {c.name for e in exams for c in e.components}
    if unused:
        raise ValueError(f"components defined but used by no exam: {sorted(unused)}")
    return Catalogue(exams)


@lru_cache(maxsize=1)
def load_catalogue() -> Catalogue:
    """The bundled exam catalogue (validated once, then cached)."""
    return catalogue_from_json((resources.files("clinical_gym.domains.workup") / "data" / "exams.json").read_text(encoding="utf-8"))
