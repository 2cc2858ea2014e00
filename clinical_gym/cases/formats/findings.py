"""Exam findings and test results read from imported text: lab values with units, vitals, exam systems, tests."""

from __future__ import annotations

import re
from typing import Any

from clinical_gym.cases.formats.text import as_text, flatten, humanize, is_placeholder
from clinical_gym.cases.schema import ExamSystem, LabValue, TestCategory, TestResult, Vitals

_NUMBER = r"[-+]?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?"
_VALUE = re.compile(rf"^(?P<cmp>[<>]=?|≤|≥)?\s*(?P<num>{_NUMBER})\s*(?P<unit>[^()]*?)\s*(?:\((?P<note>[^()]*)\))?\s*\.?$")
_RANGE = re.compile(rf"(?P<low>{_NUMBER})\s*(?:-|–|—|to)\s*(?P<high>{_NUMBER})")
_UPPER = re.compile(rf"(?:<|≤|below|under|up to)\s*(?P<high>{_NUMBER})")
_LOWER = re.compile(rf"(?:>|≥|above|over)\s*(?P<low>{_NUMBER})")
_UNIT_WORDS = frozenset({
    "g", "mg", "mcg", "µg", "μg", "ng", "pg", "kg", "mmol", "µmol", "μmol", "mol", "meq", "u", "iu", "miu", "bpm", "mmhg", "mm", "cm",
    "fl", "l", "ml", "dl", "sec", "s", "seconds", "min", "cells", "copies", "x", "×", "units", "mosm", "ratio", "beats", "breaths",
})
# "Neutrophils: Value: 83.6; Numeric Value: 83.6; Units: %; Reference Range: 34.0 - 71.0; Flag: abnormal" (MIMIC / DiagGym)
_MIMIC_LINE = re.compile(
    r"^(?P<name>.+?):\s*Value:\s*(?P<value>[^;]*?)\s*(?:;\s*Numeric Value:\s*(?P<num>[^;]*?)\s*)?(?:;\s*Units:\s*(?P<unit>[^;]*?)\s*)?"
    r"(?:;\s*Reference Range:\s*(?P<low>[^;]*?)\s*-\s*(?P<high>[^;]*?)\s*)?(?:;\s*Flag:\s*(?P<flag>\w+)\s*)?$"
)
# "Hemoglobin 12.1 g/dL", "Leukocyte count: 11,500/mm3", "Na+ 140 mEq/L"
_LAB_LINE = re.compile(r"^(?P<name>[A-Za-z][\w ,+\-/()'%]*?)\s*(?::\s*|\s+)(?P<rest>[<>≤≥]?\s*\d.*)$")

_SYSTEM_WORDS: tuple[tuple[str, ExamSystem], ...] = (
    ("vital", "vitals"), ("heent", "heent"), (r"head\b", "heent"), ("general", "general"), ("appearance", "general"),
    ("cardio", "cardiovascular"), ("heart", "cardiovascular"), ("cardiac", "cardiovascular"), ("murmur", "cardiovascular"),
    ("respir", "respiratory"), ("lung", "respiratory"), ("pulmon", "respiratory"), ("chest", "respiratory"), ("breath", "respiratory"),
    ("abdom", "abdominal"), ("bowel sound", "abdominal"), ("(?:right|left) (?:upper|lower) quadrant", "abdominal"), ("suprapubic", "abdominal"), ("epigastr", "abdominal"),
    ("hepat", "abdominal"), ("splen", "abdominal"), ("mcburney", "abdominal"), ("rectal", "rectal"), ("pelvic", "pelvic"), ("gyn(?!ecomastia)", "pelvic"),
    ("cervi(?:x|cal os|cal motion|cal excitation|cal smear|cal discharge)", "pelvic"), ("tonsil", "heent"), ("uter", "pelvic"), ("genit", "genitourinary"), ("testi", "genitourinary"), ("scrot", "genitourinary"),
    ("neuro", "neurological"), ("cranial", "neurological"), ("reflex", "neurological"), ("motor", "neurological"),
    ("gait", "neurological"), ("sensation", "neurological"), ("musculo", "musculoskeletal"), ("joint", "musculoskeletal"),
    ("spine", "musculoskeletal"), ("skin", "skin"), ("derm", "skin"), ("rash", "skin"), ("extremit", "extremities"),
    ("edema", "extremities"), ("pulses", "extremities"), ("psych", "psychiatric"), ("mental", "psychiatric"), ("mood", "psychiatric"),
    ("breast", "breast"), ("lymph", "lymphatic"), (r"eyes?\b", "eye"), ("ophthal", "eye"), ("pupil", "eye"), (r"fund[iuo]s", "eye"),
    ("visual", "eye"), (r"ears?\b", "ear"), ("otoscop", "ear"), ("tympan", "ear"), ("neck", "neck"), ("thyroid", "neck"),
    ("throat", "heent"), ("pharyn", "heent"), ("nose", "heent"), ("nasal", "heent"), (r"oral\b", "heent"), ("mouth", "heent"),
)
_CATEGORY_WORDS: tuple[tuple[str, TestCategory], ...] = (
    ("ecg", "ecg"), ("ekg", "ecg"), ("electrocardiogra", "ecg"), ("culture", "microbiology"), ("gram stain", "microbiology"),
    ("pcr", "microbiology"), ("smear", "microbiology"), ("swab", "microbiology"), ("antigen", "microbiology"), ("biopsy", "pathology"),
    ("histolog", "pathology"), ("patholog", "pathology"), ("cytolog", "pathology"), ("x-ray", "imaging"), ("xray", "imaging"),
    ("radiograph", "imaging"), (r"ct\b", "imaging"), ("mri", "imaging"), ("imaging", "imaging"), ("ultraso", "imaging"),
    ("sonogra", "imaging"), ("echocardiogra", "imaging"), ("doppler", "imaging"), ("angiogra", "imaging"), ("scan", "imaging"),
    ("mammogra", "imaging"), ("spirometr", "bedside"), ("pulmonary function", "bedside"), ("peak flow", "bedside"),
    ("bedside", "bedside"), ("dipstick", "bedside"), ("glucose meter", "bedside"), ("blood", "lab"), ("serum", "lab"), ("urin", "lab"),
    (r"lab\b", "lab"), ("laborator", "lab"), ("panel", "lab"), ("count", "lab"), ("level", "lab"), ("cbc", "lab"), ("bmp", "lab"), ("cmp", "lab"),
    ("profile", "lab"), ("function test", "lab"), ("antibod", "lab"), ("marker", "lab"), ("csf", "lab"), ("lumbar puncture", "lab"),
    # MIMIC-IV / DiagGym study names: "CHEST (PA AND LAT)", "CTA CHEST", "RENAL U.S.", "UNILAT LOWER EXT VEINS", "KNEE (2 VIEWS)"
    (r"cta\b", "imaging"), (r"mr[acv]?\b", "imaging"), ("mrcp", "imaging"), (r"u\.?s\b", "imaging"), ("portable", "imaging"),
    (r"pa and lat", "imaging"), (r"views?\b", "imaging"), ("duplex", "imaging"), (r"lower ext", "imaging"), (r"upper ext", "imaging"),
    (r"echo\b", "imaging"), ("transthoracic", "imaging"), ("transesophageal", "imaging"), (r"tte\b", "imaging"),
    (r"egd\b", "imaging"), ("endoscop", "imaging"), ("colonoscop", "imaging"), ("fluoro", "imaging"), ("ascit", "lab"),
    ("joint fluid", "lab"), ("pleural fluid", "lab"),
)
SHORT_RESULT_WORDS = 4  # a non-numeric result this short ("Positive", "Not detected") is a lab value, not a report

_VITAL_PATTERNS = {
    "temperature": re.compile(rf"(?:temperature|temp)\D{{0,25}}?(?P<v>{_NUMBER})\s*°?\s*(?P<u>[CF])?\b", re.IGNORECASE),
    "bp": re.compile(r"(?:blood pressure|\bbp)\D{0,25}?(?P<s>\d{2,3})\s*/\s*(?P<d>\d{2,3})", re.IGNORECASE),
    "hr": re.compile(r"(?:heart rate|pulse(?!\s*ox)|\bhr\b)\D{0,25}?(?P<v>\d{2,3})", re.IGNORECASE),
    "rr": re.compile(r"(?:respiratory rate|respirations|\brr\b)\D{0,25}?(?P<v>\d{1,2})", re.IGNORECASE),
    "spo2": re.compile(r"(?:oxygen saturation|o2 sat\w*|spo2|sao2|pulse oximetry|saturation)\D{0,40}?(?P<v>\d{2,3})\s*%", re.IGNORECASE),
}


def _number(text: str) -> float:
    return float(text.replace(",", ""))


def _unit_ok(unit: str) -> bool:
    words = unit.split()
    if not unit:
        return True
    if len(unit) > 20 or len(words) > 3 or re.match(r"[-–/]\s*\d", unit):  # "125/80 mmHg", "25-30/hpf" are not one value
        return False
    return any(c in unit for c in "/%°^") or words[0].lower().strip(".") in _UNIT_WORDS


def _flag(value: float, low: float | None, high: float | None, note: str = "") -> str:
    if high is not None and value > high:
        return "high"
    if low is not None and value < low:
        return "low"
    note = note.lower()
    if re.search(r"\b(?:high|elevated|raised|increased)\b", note):
        return "high"
    if re.search(r"\b(?:low|decreased|reduced)\b", note):
        return "low"
    return "abnormal" if "abnormal" in note else "normal"


def parse_value(name: str, text: str) -> LabValue | None:
    """A lab value from 'value unit (reference)' text ("12,000 /μL", "5.8 mmol/L (3.5-5.0)", "<0.01 ng/mL"), or None."""
    m = _VALUE.match(text.strip())
    if not m or not _unit_ok(m.group("unit")):
        return None
    unit, note = m.group("unit").strip(), m.group("note") or ""
    value = _number(m.group("num"))
    low = high = None
    if r := _RANGE.search(note):
        low, high = _number(r.group("low")), _number(r.group("high"))
    elif r := _UPPER.search(note):
        high = _number(r.group("high"))
    elif r := _LOWER.search(note):
        low = _number(r.group("low"))
    flag = _flag(value, low, high, note)
    if m.group("cmp"):  # "<0.01": a bound, not a measured number
        return LabValue(name=name, text=f"{m.group('cmp')}{m.group('num')}", unit=unit, ref_low=low, ref_high=high, flag=flag)
    return LabValue(name=name, value=value, unit=unit, ref_low=low, ref_high=high, flag=flag)


def parse_mimic_line(line: str) -> LabValue | None:
    """A lab value from a MIMIC-style line (the format ``clinical_gym.cases.formatting.format_lab_value`` writes), or None."""
    m = _MIMIC_LINE.match(line.strip())
    if not m:
        return None
    name, number = m.group("name").strip(), m.group("num") or m.group("value")
    low = _number(m.group("low")) if m.group("low") and re.fullmatch(_NUMBER, m.group("low")) else None
    high = _number(m.group("high")) if m.group("high") and re.fullmatch(_NUMBER, m.group("high")) else None
    unit = (m.group("unit") or "").strip()
    flag = (m.group("flag") or "").lower()
    if not re.fullmatch(_NUMBER, number.strip()):
        return LabValue(name=name, text=m.group("value"), unit=unit, ref_low=low, ref_high=high,
                        flag="critical" if flag == "critical" else "abnormal" if flag else "normal")
    value = _number(number.strip())
    computed = _flag(value, low, high)
    final = "critical" if flag == "critical" else computed if computed != "normal" or not flag else "abnormal"
    return LabValue(name=name, value=value, unit=unit, ref_low=low, ref_high=high, flag=final)


def parse_lab_line(line: str) -> LabValue | None:
    """A lab value from one result line: MIMIC style, or 'Name value unit' / 'Name: value unit'; None otherwise."""
    found = parse_mimic_line(line)
    if found is not None:
        return found
    m = _LAB_LINE.match(line.strip())
    return parse_value(m.group("name").strip(), m.group("rest")) if m else None


# "an alkaline phosphatase activity of 680 U/L", "hemoglobin concentration is 7.6 g/dL", "platelet count is 64,000/mm3"
_INLINE_VALUE = re.compile(
    rf"(?i)(?:^|,\s*|\band\s+|\bshows?\s+|\bwith\s+)(?:an?\s+|the\s+|his\s+|her\s+|their\s+)?(?P<name>[a-z][a-z0-9 -]{{1,40}}?)"
    rf"(?:\s+(?:activity|concentrations?|levels?|titer|value))?\s+(?:of|is|was|are|were)\s+(?P<value>(?:[<>]\s*)?{_NUMBER}\s*[^\s,;]*)"
)


def inline_values(sentence: str) -> list[LabValue]:
    """Lab values written into a sentence ("Serum studies show an alkaline phosphatase activity of 680 U/L and a
    total bilirubin of 2.8 mg/dL"): each named number with a unit."""
    out = []
    for m in _INLINE_VALUE.finditer(sentence):
        name = re.sub(r"(?i)^(?:serum|plasma|blood|urine)\s+(?=\w)", "", m.group("name").strip())
        name = re.sub(r"(?i)^(?:studies|laboratory studies|results?)\s+(?:shows?|showed)\s+(?:an?\s+|the\s+)?", "", name)
        value = parse_value(name[:1].upper() + name[1:], m.group("value").rstrip("."))
        if value is not None and value.unit:
            out.append(value)
    return out


def vitals_from_text(text: str) -> Vitals | None:
    """Vitals when ``text`` names all six (temperature, BP, heart rate, respiratory rate, SpO2), else None."""
    found = {key: p.search(text) for key, p in _VITAL_PATTERNS.items()}
    if not all(found.values()):
        return None
    temp = _number(found["temperature"].group("v"))
    if (found["temperature"].group("u") or "").upper() == "F" or temp > 50:
        temp = round((temp - 32) * 5 / 9, 1)
    try:
        return Vitals(temperature_c=temp, heart_rate=int(found["hr"].group("v")), respiratory_rate=int(found["rr"].group("v")),
                      systolic_bp=int(found["bp"].group("s")), diastolic_bp=int(found["bp"].group("d")),
                      spo2=int(found["spo2"].group("v")))
    except ValueError:  # out of the schema's physiological ranges: keep it as exam text
        return None


def names_vitals(text: str) -> bool:
    """Whether ``text`` reports a vital sign with its value."""
    return any(p.search(text) for p in _VITAL_PATTERNS.values())


def _compile_table(table: tuple[tuple[str, Any], ...]) -> tuple[re.Pattern[str], tuple[Any, ...]]:
    """One alternation of the table's word-start regexes, a named group per entry, and the entries' values."""
    return re.compile("|".join(rf"(?P<w{i}>\b(?:{word}))" for i, (word, _) in enumerate(table))), tuple(v for _, v in table)


_SYSTEMS = _compile_table(_SYSTEM_WORDS)
_CATEGORIES = _compile_table(_CATEGORY_WORDS)


def _word_hits(text: str, table: tuple[re.Pattern[str], tuple[Any, ...]]) -> list[tuple[int, int, Any]]:
    """(position in text, table rank, value) for each table entry (a regex starting a word) found in ``text``."""
    pattern, values = table
    hits = []
    for m in pattern.finditer(humanize(text).lower()):
        rank = int(m.lastgroup[1:])
        hits.append((m.start(), rank, values[rank]))
    return hits


def exam_system_for(text: str) -> ExamSystem:
    """The exam system a heading or finding is about (the first one named: "Neurological_Examination" -> neurological;
    "Lungs clear, heart regular" -> respiratory); 'general' if unclear."""
    hits = _word_hits(text, _SYSTEMS)
    return min(hits)[2] if hits else "general"


def category_for_test(name: str) -> TestCategory | None:
    """The category a test name suggests, most specific word first ("Blood culture" -> microbiology), or None."""
    hits = _word_hits(name, _CATEGORIES)
    return min(hits, key=lambda h: h[1])[2] if hits else None


def add_exam_text(exam: dict[ExamSystem, str], system: ExamSystem, text: str) -> None:
    """Append a finding to the exam dict under ``system``."""
    text = text.strip()
    if text:
        exam[system] = f"{exam[system]} {text}" if system in exam else text


def _result_value(name: str, text: str, category: TestCategory) -> LabValue | None:
    """A leaf result as a lab value: numeric results always, short text results for lab and microbiology tests."""
    value = parse_value(name, text)
    if value is None and category in ("lab", "microbiology") and len(text.split()) <= SHORT_RESULT_WORDS:
        value = LabValue(name=name, text=text)
    return value


# Keys that name a field of one report rather than a separate study ("MRI_Brain": {"Findings": ..., "Comments": ...}).
_REPORT_FIELDS = re.compile(r"(?i)^(?:findings?|results?|impressions?|interpretation|report|comments?|conclusions?|description|"
                            r"details|summary|notes?|observations?|outcome|status|values?|optional|assessment)$")


def _is_panel(tree: dict[str, Any], category: TestCategory | None) -> bool:
    """A dict of results read as one test with components (a blood panel), not a folder of separate tests: some
    leaf is a number with a unit, or (for a lab-like or unknown category) every entry is a value and most are short
    ("Positive", "Trace"), and they are not the fields of one report ("Findings", "Impression")."""
    scalars = {k: as_text(v) for k, v in tree.items() if not isinstance(v, dict)}
    if any(parse_value(humanize(k), t) for k, t in scalars.items()):
        return True
    if len(scalars) != len(tree) or category not in ("lab", "microbiology", None) or all(_REPORT_FIELDS.match(humanize(k)) for k in scalars):
        return False
    short = [t for t in scalars.values() if len(t.split()) <= SHORT_RESULT_WORDS]
    return 2 * len(short) >= len(scalars) > 0


def _panel(name: str, tree: dict[str, Any], category: TestCategory) -> list[TestResult]:
    values, lines = [], []
    for leaf, text in flatten(tree):
        found = _result_value(leaf, text, category)
        if found:
            values.append(found)
        else:
            lines.append(f"{leaf}: {text}")
    return [TestResult(name=name, category=category, values=tuple(values), text="\n".join(lines))] if values or lines else []


def _report(name: str, fields: dict[str, str], category: TestCategory) -> list[TestResult]:
    """One study's report from its fields: a lone field is the text, several are 'Field: text' lines."""
    kept = {humanize(k): t for k, t in fields.items() if not is_placeholder(t)}
    if not kept:
        return []
    text = next(iter(kept.values())) if len(kept) == 1 else "\n".join(f"{k}: {t}" for k, t in kept.items())
    return [TestResult(name=name, category=category, text=text)]


def results_from_tree(name: str, value: Any, category: TestCategory | None = None) -> list[TestResult]:
    """Test results from a (nested) JSON results entry, nested names kept as 'Parent - Child': a panel becomes one
    test with lab values, a study's report fields ("Findings", "Impression") one test named by the study, and a
    folder of studies ("Imaging": {"Chest_CT": ...}) one test per study ("Imaging - Chest CT"); the folder's own
    loose values stay a test under the folder's name. Placeholders ("Not provided") are no result."""
    category = category_for_test(name) or category
    if not isinstance(value, dict):
        text = as_text(value)
        if is_placeholder(text):
            return []
        leaf = name.rsplit(" - ", 1)[-1]
        cat = category or ("lab" if parse_value(leaf, text) else "other")
        found = _result_value(leaf, text, cat)
        return [TestResult(name=name, category=cat, values=(found,)) if found else TestResult(name=name, category=cat, text=text)]
    if _is_panel(value, category):
        return _panel(name, value, category or "lab")
    scalars = {k: as_text(v) for k, v in value.items() if not isinstance(v, dict)}
    if scalars and all(_REPORT_FIELDS.match(humanize(k)) for k in scalars):
        own = _report(name, scalars, category or "other")
    else:
        own = [t for k, text in scalars.items() for t in results_from_tree(f"{name} - {humanize(k)}", text, category)]
    return own + [t for key, sub in value.items() if isinstance(sub, dict)
                  for t in results_from_tree(f"{name} - {humanize(key)}", sub, category)]


def result_from_report(name: str, report: str) -> TestResult | None:
    """One test from a result report: lines that read as lab values become values, the rest stays text."""
    values, lines = [], []
    for line in report.splitlines():
        if re.match(r"\s*Value:", line):  # a one-item MIMIC result: "Value: 16; Numeric Value: 16.0; Units: mEq/L; ..."
            line = f"{name}: {line.strip()}"
        found = parse_lab_line(line) if line.strip() else None
        if found:
            values.append(found)
        elif line.strip():
            lines.append(line.strip())
    if not values and not lines:
        return None
    cat = category_for_test(name) or ("lab" if values else "other")
    return TestResult(name=name, category=cat, values=tuple(values), text="\n".join(lines))
