"""A case's own results, found by every name an order may use: the record-backed world model looks here first.

An order finds, in this order of preference:

1. a recorded test by its own name, a nested part of it ("Chest CT" for "Imaging - Chest CT"), or these names
   with generic words left out ("TORCH" for "TORCH Screen");
2. a recorded group: the tests under a nested name's parent ("Imaging" gives "Imaging - Chest CT" and
   "Imaging - Abdominal X-ray"), or, for a group word a doctor uses ("blood tests", "bloods", "labs",
   "imaging", "cultures", "biopsy"), the recorded tests of that kind;
3. a recorded lab value by its name ("Rubella IgM" in "TORCH Screen") on the specimen the order names or the
   catalogue gives it ("plasma glucose" or "glucose" is never a CSF or urine glucose; "CSF glucose" is);
4. through the exam catalogue: a recorded test whose name the catalogue reads as the same exam (its aliases:
   "Echo" finds a recorded "Echocardiogram"; several such tests come back together), the physical-exam section or
   vitals of that exam, a recorded value of the component ordered ("Hb" finds a recorded "Hemoglobin"; a value of
   a CSF, urine or body-fluid test is read as that specimen's component: a lumbar puncture's "Glucose" is the CSF
   glucose), or the recorded values of an ordered panel's components (then only the rest is synthesised); where
   none of the ordered components is recorded, the recorded value of another assay of the same analyte family
   (``TEST_FAMILIES``: a "BNP" order on a record holding NT-proBNP), under its own name and reference range;
5. the one recorded test whose name holds every word of a short order the catalogue does not know ("MRI" finds
   the recorded "MRI Brain and Orbits", "CT angiogram" the "CTA HEAD AND NECK"; two such tests: none);
6. a recorded name one typo away ("Barium enama").

A catalogue reading of a recorded name counts only where its kind agrees with the recorded category (a "Biopsy -
Cervical Lymph Node" is not the lymph-node examination).
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import cached_property

from clinical_gym.cases import Case, LabValue, TestResult
from clinical_gym.cases.formatting import format_lab_value, format_test_result, format_vitals
from clinical_gym.domains.workup.catalogue import GENERIC_WORDS, Catalogue, Component, Exam, exam_words

NEST = " - "  # how imported names join a group and its parts ("Imaging - Chest CT")
NEAR_RATIO = 0.9  # a recorded name this similar to the order (and 6+ letters long) is read as a typo of it
SUGGEST_RATIO = 0.6
CONTAINED_MAX_WORDS = 3  # an order this short may find the one recorded test whose name holds all its words
# The specimens other than blood, by the words that name them (as ``exam_words`` writes them), and the word the
# catalogue puts before a component of that specimen ("CSF glucose", "Urine glucose", "Ascitic fluid neutrophils").
_SPECIMEN_WORDS: dict[str, frozenset[str]] = {
    "csf": frozenset({"csf", "cerebrospinal", "lumbar"}), "urine": frozenset({"urine", "urinalysis", "urinary"}),
    "stool": frozenset({"stool", "fecal", "faecal"}), "pleural": frozenset({"pleural"}),
    "peritoneal": frozenset({"ascitic", "ascite", "ascites", "peritoneal", "paracentesis"}), "synovial": frozenset({"synovial", "joint"}),
    "sputum": frozenset({"sputum"}), "fluid": frozenset({"fluid", "aspirate"}),
}
_SPECIMEN_PREFIX = {"csf": "CSF", "urine": "Urine", "stool": "Stool", "pleural": "Pleural fluid", "peritoneal": "Ascitic fluid",
                    "synovial": "Synovial fluid", "sputum": "Sputum"}
_BLOOD_WORDS = frozenset({"blood", "serum", "plasma", "venous", "arterial", "capillary"})
# Words of a test on a specimen other than blood: such a test is no "blood test" and its values no blood component.
_NON_BLOOD_WORDS = frozenset().union(*_SPECIMEN_WORDS.values())
BLOOD = "blood"
# Group words a doctor orders by, and the recorded tests each stands for (by category and, optionally, name words).
_GROUP_WORDS: tuple[tuple[frozenset[tuple[str, ...]], frozenset[str], frozenset[str]], ...] = (
    (frozenset({("blood", "test"), ("blood", "work"), ("blood",), ("bloods",), ("lab",), ("lab", "test"), ("lab", "work"), ("laboratory",),
                ("laboratory", "test"), ("laboratory", "study"), ("laboratory", "result"), ("lab", "result"), ("blood", "panel"),
                ("routine", "blood"), ("basic", "lab"), ("serum", "test")}),
     frozenset({"lab"}), _NON_BLOOD_WORDS),
    (frozenset({("imaging",), ("radiology",), ("scan",), ("imaging", "study"), ("radiological", "study"), ("x", "ray", "scan")}),
     frozenset({"imaging"}), frozenset()),
    (frozenset({("microbiology",), ("culture",), ("culture", "test"), ("microbiology", "test"), ("swab",)}),
     frozenset({"microbiology"}), frozenset()),
    (frozenset({("pathology",), ("histology",), ("histopathology",), ("biopsy",), ("biopsy", "result")}),
     frozenset({"pathology"}), frozenset()),
    (frozenset({("urine", "test"), ("urine",), ("urine", "study")}), frozenset({"lab", "microbiology"}), frozenset()),
)
_URINE_WORDS = frozenset({"urine", "urinalysis", "urinary"})
# Assays of one analyte family that answer for each other when only one is recorded (catalogue component names).
# B-type natriuretic peptide and NT-proBNP are cleaved from one prohormone and used interchangeably to rule heart
# failure in or out, each at its own cut-off (ESC 2021 heart failure guideline, diagnosis of chronic heart failure:
# BNP < 35 pg/mL or NT-proBNP < 125 pg/mL makes it unlikely); a laboratory runs one of them, so a doctor's "BNP"
# is answered with the NT-proBNP the record holds, shown as NT-proBNP with its own range, never converted. Nothing
# else is read across: ANP, procalcitonin or a basic metabolic panel ("BMP") are no natriuretic peptide test.
TEST_FAMILIES: tuple[frozenset[str], ...] = (frozenset({"BNP", "NT-proBNP"}),)


def specimen_of(*names: str) -> str:
    """The specimen names speak of: the first non-blood one they name (a body fluid named only as "fluid" counts
    after the specific ones), else blood."""
    words = {w for name in names for w in exam_words(name)}
    return next((spec for spec, named in _SPECIMEN_WORDS.items() if words & named), BLOOD)


def _order_specimen(order: str, exam: Exam | None) -> str | None:
    """The specimen an order asks for: named in it ("CSF glucose", "plasma glucose"), else its catalogue lab's
    ("glucose" is plasma glucose: blood); None when neither says (any specimen, blood first)."""
    words = set(exam_words(order))
    if words & _NON_BLOOD_WORDS:
        return specimen_of(order)
    if words & _BLOOD_WORDS:
        return BLOOD
    if exam is not None and exam.kind in ("lab_panel", "lab_test"):
        return specimen_of(exam.name, *exam.aliases)
    return None


@dataclass(frozen=True)
class RecordHit:
    """What the record holds for an order: the label to show, the result text, the catalogue exam when the order
    is one, and (for a panel the record holds only part of) the recorded values by component name."""

    label: str
    text: str
    exam: Exam | None = None
    components: dict[str, LabValue] = field(default_factory=dict)

    @property
    def complete(self) -> bool:
        """Whether the record answers the whole order (False: some of an ordered panel's components are missing)."""
        if not self.components or self.exam is None:
            return True
        return {c.name for c in self.exam.components} <= set(self.components)


def _key(words: tuple[str, ...]) -> str:
    return " ".join(words)


def _keys(name: str) -> list[str]:
    """The lookup keys of a name: its normalised words, without generic words, and sorted."""
    words = exam_words(name)
    stripped = tuple(w for w in words if w not in GENERIC_WORDS) or words
    return list(dict.fromkeys(k for k in (_key(words), _key(stripped), _key(tuple(sorted(words))), _key(tuple(sorted(stripped)))) if k))


def _parts(name: str) -> list[str]:
    """A nested name and each of its tails: "A - B - C" -> ["A - B - C", "B - C", "C"]."""
    pieces = name.split(NEST)
    return [NEST.join(pieces[i:]) for i in range(len(pieces))]


def _compatible(exam: Exam, test: TestResult) -> bool:
    return test.category == "other" or exam.test_category() == test.category or (
        exam.test_category() in ("lab", "microbiology") and test.category in ("lab", "microbiology"))


def _leaf(name: str) -> str:
    return name.rsplit(NEST, 1)[-1]


_ALIAS_SETS: dict[int, list[tuple[frozenset[str], Exam]]] = {}


def _alias_word_sets(catalogue: Catalogue) -> list[tuple[frozenset[str], Exam]]:
    """The word sets (generic words left out, two words or more) of every exam name and alias."""
    key = id(catalogue)
    if key not in _ALIAS_SETS:
        sets = []
        for exam in catalogue:
            for alias in (exam.name, *exam.aliases):
                words = frozenset(exam_words(alias)) - GENERIC_WORDS
                if len(words) >= 2:
                    sets.append((words, exam))
        _ALIAS_SETS[key] = sets
    return _ALIAS_SETS[key]


def _group_text(tests: list[TestResult]) -> str:
    """One test's result, or several under their names."""
    if len(tests) == 1:
        return format_test_result(tests[0])
    return "\n\n".join(f"{t.name}:\n{format_test_result(t)}" for t in tests)


def _values_text(values: Iterable[LabValue]) -> str:
    return "\n".join(map(format_lab_value, values))


@dataclass
class RecordIndex:
    """The recorded results of one case, indexed by the names an order may use (see the module docstring)."""

    case: Case
    catalogue: Catalogue

    @cached_property
    def _by_name(self) -> dict[str, TestResult]:
        out: dict[str, TestResult] = {}
        for depth in range(max((t.name.count(NEST) for t in self.case.tests), default=0) + 1):
            for t in self.case.tests:  # full names first, then ever shorter tails
                parts = _parts(t.name)
                if depth < len(parts):
                    for key in _keys(parts[depth]):
                        out.setdefault(key, t)
        return out

    @cached_property
    def _groups(self) -> dict[str, tuple[str, list[TestResult]]]:
        groups: dict[str, tuple[str, list[TestResult]]] = {}
        for t in self.case.tests:
            pieces = t.name.split(NEST)
            for n in range(1, len(pieces)):
                parent = NEST.join(pieces[:n])
                for key in _keys(parent):
                    groups.setdefault(key, (parent, []))
        for key, (parent, members) in groups.items():
            members.extend(t for t in self.case.tests if t.name == parent or t.name.startswith(parent + NEST))
        return groups

    @cached_property
    def _values(self) -> dict[str, list[tuple[str, str]]]:
        """Result lines by the name they start with, with the specimen of the test they are in: lab values, and a
        report's 'Name: text' lines."""
        out: dict[str, list[tuple[str, str]]] = {}
        for t in self.case.tests:
            for v in t.values:
                for key in _keys(_leaf(v.name)):
                    out.setdefault(key, []).append((format_lab_value(v), specimen_of(t.name, v.name)))
            for line in t.text.splitlines():
                name, sep, rest = line.partition(": ")
                if sep and rest.strip() and len(name.split()) <= 8:
                    for key in _keys(_leaf(name)):
                        out.setdefault(key, []).append((line, specimen_of(t.name, name)))
        return out

    @cached_property
    def _exams_of_tests(self) -> list[tuple[TestResult, frozenset[str]]]:
        """Each recorded test with the catalogue exams its name names: read whole, by each nested part, with the leaf
        before its parents ("Biopsy - Cervical Lymph Node" as "Cervical Lymph Node Biopsy"), or as containing all the
        words of an exam's name or alias ("CT Scan Thorax and Abdomen" holds "CT abdomen")."""
        out = []
        for t in self.case.tests:
            pieces = t.name.split(NEST)
            readings = [*_parts(t.name), " ".join([pieces[-1], *pieces[:-1]])]
            found = {hit.exam.name for reading in readings if (hit := self.catalogue.lookup(reading)) is not None
                     and hit.component is None and _compatible(hit.exam, t)}
            words = set(exam_words(t.name)) - GENERIC_WORDS
            found |= {exam.name for alias, exam in _alias_word_sets(self.catalogue) if alias <= words and _compatible(exam, t)}
            out.append((t, frozenset(found)))
        return out

    @cached_property
    def _component_values(self) -> dict[str, list[LabValue]]:
        """Recorded lab values by the catalogue component their name is (the first recorded one first). A name the
        catalogue reads as a one-component test ("TSH", "Troponin") is that test's component, so a recorded "Blood
        Tests - TSH" answers "Thyroid stimulating hormone" and the TSH of "Thyroid function tests". A value of a
        test on another specimen (urine, CSF, stool, a body fluid) is no blood test's component: a CSF "WBC" or a
        urinalysis "Glucose" is not the blood count's white cells or the plasma glucose."""
        out: dict[str, list[LabValue]] = {}
        for t in self.case.tests:
            for v in t.values:
                specimen = specimen_of(t.name, v.name)
                leaf = _leaf(v.name)
                readings = [leaf]
                if specimen in _SPECIMEN_PREFIX:  # a lumbar puncture's "Glucose, CSF" or "Glucose" is the CSF glucose
                    bare = " ".join(w for w in re.split(r"[\s,]+", leaf) if w and not set(exam_words(w)) & _NON_BLOOD_WORDS)
                    readings.insert(0, f"{_SPECIMEN_PREFIX[specimen]} {bare}")
                for reading in readings:
                    hit = self.catalogue.lookup(reading)
                    if hit is None or specimen_of(hit.exam.name, *hit.exam.aliases) != specimen:
                        continue
                    component = hit.component or (hit.exam.components[0] if hit.exam.kind == "lab_test"
                                                  and len(hit.exam.components) == 1 else None)
                    if component is not None:
                        out.setdefault(component.name, []).append(v)
                        break
        return out

    def names(self) -> list[str]:
        """Every recorded test name and group name."""
        return list(dict.fromkeys([*(t.name for t in self.case.tests), *(parent for parent, _ in self._groups.values())]))

    # -- lookup ------------------------------------------------------------------------------------------------------

    def find(self, order: str) -> RecordHit | None:
        """What the record holds for an order, or None (then the world model synthesises)."""
        keys = _keys(order)
        if not keys:
            return None
        hit = self.catalogue.lookup(order)
        exam = hit.exam if hit is not None else None
        for key in keys:
            if key in self._groups:
                parent, members = self._groups[key]
                return RecordHit(parent, _group_text(members), exam)
            if key in self._by_name:
                return self._test_hit(self._by_name[key], exam)
        specimen = _order_specimen(order, exam)
        for key in keys:
            lines = self._values.get(key, [])
            if specimen is None and any(spec == BLOOD for _, spec in lines):
                specimen = BLOOD  # "protein": the blood value first
            lines = [line for line, spec in lines if specimen is None or spec == specimen]
            if lines:
                return RecordHit(order.strip(), "\n".join(dict.fromkeys(lines)), exam)
        found = self._through_catalogue(hit.exam, hit.component) if hit is not None else None
        return (found or self._group_word(keys[0], order.strip()) or (self._contained(order) if exam is None else None)
                or self._near(keys[0], exam))

    def _test_hit(self, test: TestResult, exam: Exam | None) -> RecordHit:
        label = exam.name if exam is not None and exam.name in dict(self._exams_of_tests).get(test, ()) else test.name
        return RecordHit(label, format_test_result(test), exam)

    def _family_values(self, name: str) -> tuple[str, list[LabValue]] | None:
        """The recorded values of another assay of the analyte family of component ``name`` (``TEST_FAMILIES``), by
        the name they were recorded under, or None."""
        for family in TEST_FAMILIES:
            if name in family:
                for member in sorted(family - {name}):
                    if member in self._component_values:
                        return member, self._component_values[member]
        return None

    def _through_catalogue(self, exam: Exam, component: Component | None) -> RecordHit | None:
        if component is not None:
            values = self._component_values.get(component.name)
            if values:
                return RecordHit(component.name, _values_text(values), exam)
            family = self._family_values(component.name)
            return RecordHit(family[0], _values_text(family[1]), exam) if family else None
        tests = [t for t, exams in self._exams_of_tests if exam.name in exams]
        # a recorded study, or a panel recorded whole; a lone lab item read as the panel ("Polys, CSF") waits for the
        # panel's recorded components below
        whole = [t for t in tests if len(t.values) != 1 or t.text]
        if whole:
            return RecordHit(exam.name, _group_text(whole), exam)
        covered = [t for t, exams in self._exams_of_tests if exams & set(exam.includes)]
        if covered:  # an abdominal ultrasound order on a record holding the right upper quadrant ultrasound
            return RecordHit(exam.name, _group_text(covered), exam)
        if exam.exam_system == "vitals" and self.case.vitals is not None:
            return RecordHit(exam.name, format_vitals(self.case.vitals), exam)
        if exam.exam_system is not None and exam.exam_system in self.case.physical_exam:
            return RecordHit(exam.name, self.case.physical_exam[exam.exam_system], exam)
        recorded = {c.name: self._component_values[c.name][0] for c in exam.components if c.name in self._component_values}
        if recorded:
            return RecordHit(exam.name, _values_text(recorded.values()), exam, recorded)
        family = next((found for c in exam.components if (found := self._family_values(c.name))), None)
        if family:  # answered whole by the other assay: nothing of the ordered one is synthesised beside it
            return RecordHit(family[0], _values_text(family[1]), exam)
        if tests:
            return RecordHit(exam.name, _group_text(tests), exam)
        return None

    def _group_word(self, key: str, label: str) -> RecordHit | None:
        words = tuple(key.split())
        for names, categories, excluded in _GROUP_WORDS:
            if words not in names:
                continue
            urine = categories == frozenset({"lab", "microbiology"})
            members = [t for t in self.case.tests if t.category in categories
                       and not (set(exam_words(t.name)) & excluded)
                       and (not urine or set(exam_words(t.name)) & _URINE_WORDS)]
            if members:
                return RecordHit(label if len(members) > 1 else members[0].name,
                                 _group_text(members))
        return None

    def _contained(self, order: str) -> RecordHit | None:
        """The one recorded test whose name holds every word of a short order ("MRI" -> "MRI Brain and Orbits")."""
        words = set(exam_words(order)) - GENERIC_WORDS
        if not words or len(words) > CONTAINED_MAX_WORDS:
            return None
        holders = [t for t in self.case.tests if words <= set(exam_words(t.name))]
        return self._test_hit(holders[0], None) if len(holders) == 1 else None

    def _near(self, key: str, exam: Exam | None) -> RecordHit | None:
        if len(key.replace(" ", "")) < 6 or exam is not None:
            return None
        close = difflib.get_close_matches(key, list(self._by_name), n=1, cutoff=NEAR_RATIO)
        return self._test_hit(self._by_name[close[0]], None) if close else None

    def suggest(self, order: str, k: int = 2) -> list[str]:
        """Recorded names close to an order that found nothing (for the "Did you mean" hint): those holding all its
        words first ("MRI" on a record with two MRIs), then the similar ones."""
        words = set(exam_words(order)) - GENERIC_WORDS
        holding = [t.name for t in self.case.tests if words and words <= set(exam_words(t.name))]
        key = " ".join(exam_words(order))
        names = {_key(exam_words(n)): n for n in self.names()}
        close = [names[m] for m in difflib.get_close_matches(key, list(names), n=k, cutoff=SUGGEST_RATIO)]
        return list(dict.fromkeys([*holding, *close]))[:k]
