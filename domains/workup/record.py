"""A case's own results, found by every name an order may use: the record-backed world model looks here first.

An order finds, in this order of preference:

1. a recorded test by its own name, a nested part of it ("Chest CT" for "Imaging - Chest CT"), or these names
   with generic words left out ("TORCH" for "TORCH Screen");
2. a recorded group: the tests under a nested name's parent ("Imaging" gives "Imaging - Chest CT" and
   "Imaging - Abdominal X-ray"), or, for a group word a doctor uses ("blood tests", "bloods", "labs",
   "imaging", "cultures", "biopsy"), the recorded tests of that kind;
3. a recorded lab value by its name ("Rubella IgM" in "TORCH Screen");
4. through the exam catalogue: a recorded test whose name the catalogue reads as the same exam (its aliases:
   "Echo" finds a recorded "Echocardiogram"), the physical-exam section or vitals of that exam, a recorded value
   of the component ordered ("Hb" finds a recorded "Hemoglobin"), or the recorded values of an ordered panel's
   components (then only the rest is synthesised);
5. a recorded name one typo away ("Barium enama").

A catalogue reading of a recorded name counts only where its kind agrees with the recorded category (a "Biopsy -
Cervical Lymph Node" is not the lymph-node examination).
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass, field
from functools import cached_property

from clinical_gym.cases import Case, LabValue, TestResult
from clinical_gym.cases.formatting import format_lab_value, format_test_result, format_vitals
from clinical_gym.domains.workup.catalogue import GENERIC_WORDS, Catalogue, Component, Exam, exam_words

NEST = " - "  # how imported names join a group and its parts ("Imaging - Chest CT")
NEAR_RATIO = 0.9  # a recorded name this similar to the order (and 6+ letters long) is read as a typo of it
SUGGEST_RATIO = 0.6
# Words of a test on a specimen other than blood: such a test is no "blood test" and its values no blood component.
_NON_BLOOD_WORDS = frozenset({"urine", "urinalysis", "urinary", "csf", "cerebrospinal", "lumbar", "stool", "fecal",
                              "faecal", "fluid", "ascitic", "pleural", "peritoneal", "sputum", "synovial", "aspirate"})
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


def _specimen(*names: str) -> frozenset[str]:
    """The words naming a specimen other than blood in any of ``names``."""
    return frozenset(w for name in names for w in exam_words(name)) & _NON_BLOOD_WORDS


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
    return "\n\n".join(f"{t.name}:\n{format_test_result(t)}" for t in tests)


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
    def _values(self) -> dict[str, list[str]]:
        """Result lines by the name they start with: lab values, and a report's 'Name: text' lines."""
        out: dict[str, list[str]] = {}
        for t in self.case.tests:
            for v in t.values:
                for key in _keys(_leaf(v.name)):
                    out.setdefault(key, []).append(format_lab_value(v))
            for line in t.text.splitlines():
                name, sep, rest = line.partition(": ")
                if sep and rest.strip() and len(name.split()) <= 8:
                    for key in _keys(_leaf(name)):
                        out.setdefault(key, []).append(line)
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
                hit = self.catalogue.lookup(_leaf(v.name))
                if hit is None:
                    continue
                component = hit.component or (hit.exam.components[0] if hit.exam.kind == "lab_test"
                                              and len(hit.exam.components) == 1 else None)
                same_specimen = _specimen(f"{t.name} {v.name}") <= _specimen(hit.exam.name, *hit.exam.aliases)
                if component is not None and same_specimen:
                    out.setdefault(component.name, []).append(v)
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
                return RecordHit(parent, _group_text(members) if len(members) > 1 else format_test_result(members[0]), exam)
            if key in self._by_name:
                return self._test_hit(self._by_name[key], exam)
        for key in keys:
            if key in self._values:
                return RecordHit(order.strip(), "\n".join(dict.fromkeys(self._values[key])), exam)
        found = self._through_catalogue(hit.exam, hit.component) if hit is not None else None
        return found or self._group_word(keys[0], order.strip()) or self._near(keys[0], exam)

    def _test_hit(self, test: TestResult, exam: Exam | None) -> RecordHit:
        label = exam.name if exam is not None and exam.name in dict(self._exams_of_tests).get(test, ()) else test.name
        return RecordHit(label, format_test_result(test), exam)

    def _through_catalogue(self, exam: Exam, component: Component | None) -> RecordHit | None:
        if component is not None:
            values = self._component_values.get(component.name)
            return RecordHit(component.name, "\n".join(format_lab_value(v) for v in values), exam) if values else None
        test = next((t for t, exams in self._exams_of_tests if exam.name in exams), None)
        if test is not None:
            return RecordHit(exam.name, format_test_result(test), exam)
        if exam.exam_system == "vitals" and self.case.vitals is not None:
            return RecordHit(exam.name, format_vitals(self.case.vitals), exam)
        if exam.exam_system is not None and exam.exam_system in self.case.physical_exam:
            return RecordHit(exam.name, self.case.physical_exam[exam.exam_system], exam)
        recorded = {c.name: self._component_values[c.name][0] for c in exam.components if c.name in self._component_values}
        if recorded:
            return RecordHit(exam.name, "\n".join(format_lab_value(v) for v in recorded.values()), exam, recorded)
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
                                 _group_text(members) if len(members) > 1 else format_test_result(members[0]))
        return None

    def _near(self, key: str, exam: Exam | None) -> RecordHit | None:
        if len(key.replace(" ", "")) < 6 or exam is not None:
            return None
        close = difflib.get_close_matches(key, list(self._by_name), n=1, cutoff=NEAR_RATIO)
        return self._test_hit(self._by_name[close[0]], None) if close else None

    def suggest(self, order: str, k: int = 2) -> list[str]:
        """Recorded names close to an order that found nothing (for the "Did you mean" hint)."""
        key = " ".join(exam_words(order))
        names = {_key(exam_words(n)): n for n in self.names()}
        return [names[m] for m in difflib.get_close_matches(key, list(names), n=k, cutoff=SUGGEST_RATIO)]
