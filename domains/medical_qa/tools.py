"""The MedicalQA tools: reading the question bank, reference ranges and guideline summaries (READ), ruling options
out or back in and flagging questions (WRITE), and comparing options or recording a line of reasoning (THINK).

Tools refuse with ``KeyError`` / ``ValueError`` messages meant for the agent (unknown question, option, analyte or
topic). WRITE tools change only the database they were built with: the environment gives each episode its own copy.
"""

from __future__ import annotations

import math
from typing import Annotated, Any

from annotated_types import Interval, MaxLen, MinLen

from clinical_gym.cases.schema import normalize
from clinical_gym.rewards.coherence import chosen_option
from clinical_gym.domains.lookups import did_you_mean
from clinical_gym.domains.medical_qa.data_model import (
    Elimination,
    Guideline,
    Letter,
    MedicalQADB,
    Question,
    ReferenceRange,
    ReviewFlag,
    Sex,
    Specialty,
)
from clinical_gym.tools import ToolKind, Toolkit, tool

QuestionId = Annotated[str, MinLen(1)]
Text = Annotated[str, MinLen(1)]
SEE_ALSO = 2
SUMMARY_WEIGHT = 0.3  # a query word found only in a guideline's summary counts this much of a title/keyword hit
_STOP = frozenset("a an and the of with in on to or at for by from is are be as what which how when who do does "
                  "should patient patients".split())


def search_words(text: str) -> list[str]:
    """The words of ``text`` used for guideline search: normalised, without stop words, with British and American
    spellings folded together ("haemorrhage" = "hemorrhage") and a plural "s" dropped."""
    words = []
    for word in normalize(text).split():
        if word in _STOP:
            continue
        word = word.replace("ae", "e").replace("oe", "e")
        if len(word) > 4 and word.endswith("s") and not word.endswith("ss"):
            word = word[:-1]
        words.append(word)
    return words


def range_text(low: float | None, high: float | None) -> str:
    """A range as the agent reads it: "3.5-5.3", "<21" or ">90"."""
    if low is not None and high is not None:
        return f"{low:g}-{high:g}"
    return f"<{high:g}" if high is not None else f">{low:g}"


class GuidelineIndex:
    """Guideline search over titles and keywords (full weight) and summaries (``SUMMARY_WEIGHT``), each word
    weighted by its inverse document frequency."""

    def __init__(self, guidelines: list[Guideline]) -> None:
        self.guidelines = guidelines
        self.heads = [set(search_words(" ".join([g.title, *g.keywords]))) for g in guidelines]
        self.bodies = [set(search_words(g.summary)) for g in guidelines]
        self.keyword_phrases = [[" ".join(search_words(k)) for k in g.keywords] for g in guidelines]
        counts: dict[str, int] = {}
        for head, body in zip(self.heads, self.bodies):
            for word in head | body:
                counts[word] = counts.get(word, 0) + 1
        self.idf = {w: math.log(1 + len(guidelines) / c) for w, c in counts.items()}

    def rank(self, query: str) -> list[Guideline]:
        """Guidelines sharing a word with ``query``, best first (an exact title match always first)."""
        words = set(search_words(query))
        phrase = " ".join(search_words(query))
        scored = []
        for i, guideline in enumerate(self.guidelines):
            score = sum(self.idf[w] for w in words & self.heads[i])
            score += SUMMARY_WEIGHT * sum(self.idf[w] for w in (words & self.bodies[i]) - self.heads[i])
            if phrase and phrase == " ".join(search_words(guideline.title)):
                score += 1000.0
            if score > 0:
                scored.append((-score, i))
        return [self.guidelines[i] for _, i in sorted(scored)]

    def related(self, text: str, most: int = 3) -> list[str]:
        """Titles of the guidelines one of whose keywords appears in ``text`` (e.g. an option naming a drug)."""
        padded = f" {' '.join(search_words(text))} "
        return [g.title for g, phrases in zip(self.guidelines, self.keyword_phrases)
                if any(p and f" {p} " in padded for p in phrases)][:most]


class MedicalQATools(Toolkit):
    """The domain's tools over one database (an episode's copy)."""

    def __init__(self, db: MedicalQADB) -> None:
        self.db = db

    # -- helpers ---------------------------------------------------------------------------------------------------
    def question(self, question_id: str) -> Question:
        """The question ``question_id`` names (case and surrounding spaces ignored); KeyError otherwise."""
        question = self.db.questions.get(question_id.strip().upper())
        if question is None:
            raise KeyError(f"question {question_id!r} not found; question ids look like 'Q001' (list_questions "
                           f"shows the bank)")
        return question

    def _option(self, question: Question, letter: str) -> str:
        if letter not in question.options:
            raise ValueError(f"{question.question_id} has options {', '.join(question.options)}; there is no "
                             f"option {letter}")
        return letter

    def find_analyte(self, name: str) -> ReferenceRange:
        """The analyte ``name`` (or an alias) refers to; ValueError with close names otherwise."""
        index = self.db.shared("analytes", lambda: {normalize(n): r for r in self.db.reference_ranges.values()
                                                    for n in (r.analyte, *r.aliases)})
        found = index.get(normalize(name))
        if found is None:
            hint = did_you_mean(name, index, lambda c: index[c].analyte, unique=False)
            raise ValueError(f"no reference range for {name!r}.{hint} Analytes: "
                             f"{', '.join(sorted(self.db.reference_ranges))}.")
        return found

    def guideline_index(self) -> GuidelineIndex:
        return self.db.shared("guidelines", lambda: GuidelineIndex(list(self.db.guidelines.values())))

    def find_guidelines(self, topic: str) -> list[Guideline]:
        """The guidelines matching ``topic``, best first; ValueError when none does."""
        ranked = self.guideline_index().rank(topic)
        if not ranked:
            raise ValueError(f"no guideline matches {topic!r}; list_guideline_topics shows the library")
        return ranked

    def _eliminated(self, question_id: str) -> dict[str, str]:
        return {e.letter: e.reason for e in self.db.eliminations if e.question_id == question_id}

    def _in_play(self, question: Question) -> list[str]:
        out = self._eliminated(question.question_id)
        return [letter for letter in question.options if letter not in out]

    # -- READ ------------------------------------------------------------------------------------------------------
    @tool(kind=ToolKind.READ)
    def list_questions(self, specialty: Specialty | None = None) -> list[dict[str, str]]:
        """The questions in the bank: id, specialty and topic.

        Args:
            specialty: Only this specialty, e.g. "cardiology" (all when omitted).
        """
        return [{"question_id": q.question_id, "specialty": q.specialty, "topic": q.topic}
                for q in self.db.questions.values() if specialty is None or q.specialty == specialty]

    @tool(kind=ToolKind.READ)
    def get_question(self, question_id: QuestionId) -> dict[str, Any]:
        """A question in full: the clinical vignette, the question asked, and the options.

        Args:
            question_id: The question's id, e.g. "Q001".
        """
        q = self.question(question_id)
        return {"question_id": q.question_id, "specialty": q.specialty, "vignette": q.vignette,
                "question": q.lead_in, "options": dict(q.options)}

    @tool(kind=ToolKind.READ)
    def list_options(self, question_id: QuestionId) -> dict[str, Any]:
        """A question's options with their status: still in play, or eliminated (with your reason).

        Args:
            question_id: The question's id, e.g. "Q001".
        """
        q = self.question(question_id)
        eliminated = self._eliminated(q.question_id)
        options = []
        for letter, text in q.options.items():
            entry = {"letter": letter, "text": text, "status": "eliminated" if letter in eliminated else "in play"}
            if letter in eliminated:
                entry["reason"] = eliminated[letter]
            options.append(entry)
        return {"question_id": q.question_id, "options": options, "in_play": self._in_play(q)}

    @tool(kind=ToolKind.READ)
    def get_reference_range(self, analyte: Text, sex: Sex | None = None) -> dict[str, Any]:
        """The adult reference range of a laboratory analyte, with its unit.

        Args:
            analyte: The analyte, e.g. "Potassium", "Free T4" or "PaCO2".
            sex: "female" or "male", for analytes with sex-specific ranges such as haemoglobin (both ranges are
                shown when omitted).
        """
        r = self.find_analyte(analyte)
        view: dict[str, Any] = {"analyte": r.analyte, "unit": r.unit}
        if r.by_sex and sex is None:
            view["reference_range"] = {s: range_text(b.low, b.high) for s, b in r.by_sex.items()}
        else:
            bounds = r.bounds(sex)
            view["reference_range"] = range_text(bounds.low, bounds.high)
        if r.note:
            view["note"] = r.note
        return view

    @tool(kind=ToolKind.READ)
    def interpret_lab_value(self, analyte: Text, value: Annotated[float, Interval(ge=0, le=1_000_000)],
                            sex: Sex | None = None) -> dict[str, Any]:
        """Place a result against its adult reference range: low, normal or high, and how far outside it lies.

        Args:
            analyte: The analyte, e.g. "Sodium".
            value: The result in the analyte's reference unit (see get_reference_range), e.g. 124.
            sex: "female" or "male"; needed for analytes with sex-specific ranges such as haemoglobin.
        """
        r = self.find_analyte(analyte)
        bounds = r.bounds(sex)
        view: dict[str, Any] = {"analyte": r.analyte, "value": value, "unit": r.unit,
                                "reference_range": range_text(bounds.low, bounds.high)}
        if bounds.high is not None and value > bounds.high:
            view["flag"] = "high"
            if bounds.high > 0:
                view["times_upper_limit"] = round(value / bounds.high, 1)
        elif bounds.low is not None and value < bounds.low:
            view["flag"] = "low"
        else:
            view["flag"] = "normal"
        if r.note:
            view["note"] = r.note
        return view

    @tool(kind=ToolKind.READ)
    def lookup_guideline(self, topic: Text) -> dict[str, Any]:
        """The guideline summary that best matches a topic, with the titles of other close matches.

        Args:
            topic: A condition, drug, test or decision, e.g. "atrial fibrillation anticoagulation" or "hyperkalaemia".
        """
        best, *others = self.find_guidelines(topic)
        return {"title": best.title, "specialty": best.specialty, "summary": best.summary,
                "see_also": [g.title for g in others[:SEE_ALSO]]}

    @tool(kind=ToolKind.READ)
    def list_guideline_topics(self, specialty: Specialty | None = None) -> dict[str, list[str]]:
        """The titles of the guideline library, by specialty.

        Args:
            specialty: Only this specialty, e.g. "neurology" (all when omitted).
        """
        listed: dict[str, list[str]] = {}
        for g in self.db.guidelines.values():
            if specialty is None or g.specialty == specialty:
                listed.setdefault(g.specialty, []).append(g.title)
        return listed

    # -- WRITE -----------------------------------------------------------------------------------------------------
    @tool(kind=ToolKind.WRITE)
    def eliminate_option(self, question_id: QuestionId, letter: Letter, reason: Text) -> dict[str, Any]:
        """Rule an option out, with the reason; it stays eliminated until restored. At least one option must stay in
        play.

        Args:
            question_id: The question's id, e.g. "Q001".
            letter: The option to rule out, e.g. "B".
            reason: Why it is wrong, in a sentence, e.g. "Aspirin does not prevent stroke in atrial fibrillation".
        """
        q = self.question(question_id)
        self._option(q, letter)
        in_play = self._in_play(q)
        if letter not in in_play:
            raise ValueError(f"option {letter} of {q.question_id} is already eliminated; restore_option brings it back")
        if in_play == [letter]:
            raise ValueError(f"option {letter} is the last option in play for {q.question_id}; it cannot be eliminated")
        self.db.eliminations.append(Elimination(question_id=q.question_id, letter=letter, reason=reason))
        return {"eliminated": letter, "in_play": self._in_play(q)}

    @tool(kind=ToolKind.WRITE)
    def restore_option(self, question_id: QuestionId, letter: Letter) -> dict[str, Any]:
        """Bring an eliminated option back into play.

        Args:
            question_id: The question's id, e.g. "Q001".
            letter: The eliminated option, e.g. "B".
        """
        q = self.question(question_id)
        self._option(q, letter)
        kept = [e for e in self.db.eliminations if not (e.question_id == q.question_id and e.letter == letter)]
        if len(kept) == len(self.db.eliminations):
            raise ValueError(f"option {letter} of {q.question_id} is not eliminated")
        self.db.eliminations[:] = kept
        return {"restored": letter, "in_play": self._in_play(q)}

    @tool(kind=ToolKind.WRITE)
    def flag_for_review(self, question_id: QuestionId, reason: Text) -> dict[str, str]:
        """Flag a question for review by the question writers: ambiguous, no single best answer, clinically wrong
        or outdated. Flagging does not answer the question.

        Args:
            question_id: The question's id, e.g. "Q001".
            reason: What is wrong with it, e.g. "Options B and D are both correct under current guidance".
        """
        q = self.question(question_id)
        flag = ReviewFlag(flag_id=f"FLAG-{len(self.db.flags) + 1:03d}", question_id=q.question_id, reason=reason)
        self.db.flags.append(flag)
        return {"flag_id": flag.flag_id, "status": f"{q.question_id} flagged for review"}

    # -- THINK -----------------------------------------------------------------------------------------------------
    @tool(kind=ToolKind.THINK)
    def compare_options(self, question_id: QuestionId,
                        letters: Annotated[list[Letter], MinLen(2), MaxLen(5)], criterion: Text) -> dict[str, Any]:
        """Set options side by side against one criterion, with their status and the guidelines that concern each.
        It changes nothing.

        Args:
            question_id: The question's id, e.g. "Q002".
            letters: The options to compare, e.g. ["A", "B"].
            criterion: What decides between them, e.g. "stroke prevention benefit in atrial fibrillation".
        """
        q = self.question(question_id)
        if len(set(letters)) < 2:
            raise ValueError("compare at least two different options")
        eliminated = self._eliminated(q.question_id)
        index = self.guideline_index()
        rows = [{"letter": letter, "text": q.options[self._option(q, letter)],
                 "status": "eliminated" if letter in eliminated else "in play",
                 "related_guidelines": index.related(q.options[letter])}
                for letter in dict.fromkeys(letters)]
        return {"question_id": q.question_id, "criterion": criterion, "options": rows}

    @tool(kind=ToolKind.THINK)
    def record_reasoning(self, question_id: QuestionId, key_findings: Annotated[list[Text], MinLen(1)],
                         conclusion: Text) -> dict[str, Any]:
        """Lay out the key findings and where they point before answering. It changes nothing; it echoes the options
        still in play and warns when the conclusion names an option you eliminated.

        Args:
            question_id: The question's id, e.g. "Q002".
            key_findings: The findings that decide the question, e.g. ["CHA2DS2-VASc 4", "no bleeding history"].
            conclusion: The option they point to and why, e.g. "B: anticoagulation is indicated".
        """
        q = self.question(question_id)
        view: dict[str, Any] = {"question_id": q.question_id, "findings_noted": len(key_findings),
                                "conclusion": conclusion, "options_in_play": self._in_play(q)}
        named = chosen_option(conclusion.split(":")[0], dict(q.options))
        if named is not None and named not in view["options_in_play"]:
            view["warning"] = f"the conclusion names option {named}, which you eliminated"
        return view
