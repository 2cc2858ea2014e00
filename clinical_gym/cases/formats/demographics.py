"""Age and sex read from free text ("35-year-old female", "(male, 37 years old)", "A 6-month-old boy")."""

from __future__ import annotations

import re
from typing import Any

from clinical_gym.cases.schema import Demographics

_AGE = re.compile(r"\b(\d{1,3})\s*[- ]?\s*(years?|yrs?|months?|mos?|weeks?|wks?|days?)[- ]?old\b|\b(\d{1,3})\s*(?:y/?o|years? of age)\b",
                  re.IGNORECASE)
_AGED = re.compile(r"\b(?:aged?|age:?)\s*(\d{1,3})\b", re.IGNORECASE)
_BARE_NUMBER = re.compile(r"\b\d{1,3}\b")
SHORT_FIELD = 30  # a text this short with one number in it is a demographics field ("45, male")
_NEWBORN = re.compile(r"\b(?:newborn|neonate|infant)\b", re.IGNORECASE)
_SEX_WORDS = {
    "male": re.compile(r"\b(?:male|man|boy|gentleman|husband|father)\b", re.IGNORECASE),
    "female": re.compile(r"\b(?:female|woman|girl|lady|wife|mother|pregnant)\b", re.IGNORECASE),
}
_PRONOUNS = {"male": re.compile(r"\b(?:he|his|him)\b", re.IGNORECASE), "female": re.compile(r"\b(?:she|her|hers)\b", re.IGNORECASE)}
_AGE_SEX_CODE = re.compile(r"(?:\b\d{1,3}|_+)\s*(?:y/?o|yo|y)\s*(?P<sex>[MF])\b")  # "67 y/o F", "___ y/o M" (MIMIC notes)
_MASKED_AGE = re.compile(r"(?:_{2,}|\[\*\*[^\]]*\*\*\])\s*(?:y/?o|yo|-?years?[- ]old)|\bage\s*:?\s*(?:_{2,}|\[\*\*)",
                         re.IGNORECASE)  # a de-identified age: "___ y/o", "___-year-old", "Age: ___", "[** **] y/o"
_SEX_CODES = {"m": "male", "male": "male", "man": "male", "f": "female", "female": "female", "woman": "female"}


_DAYS_PER = {"y": 365.25, "m": 30.44, "w": 7, "d": 1}


def age_days_from_text(text: str) -> int | None:
    """The age in days of a patient under one year named in ``text`` ("3-week-old", "6 months old", "a 10-day-old"),
    or None (no such age, or one of a year or more: "18-month-old")."""
    m = _AGE.search(text)
    if not m or m.group(3) or m.group(2).lower().startswith("y"):
        return None
    days = round(int(m.group(1)) * _DAYS_PER[m.group(2).lower()[0]])
    return days if days <= 365 else None


def age_from_text(text: str) -> int | None:
    """Age in whole years named in ``text`` ("37-year-old", "aged 37"; "18-month-old" is 1; weeks, days and months
    under a year count as 0), or None."""
    m = _AGE.search(text)
    if m:
        if m.group(3):
            return int(m.group(3))
        unit = m.group(2).lower()[0]
        return int(m.group(1)) if unit == "y" else int(int(m.group(1)) * _DAYS_PER[unit] // 365.25)
    m = _AGED.search(text)
    if m:
        return int(m.group(1))
    numbers = _BARE_NUMBER.findall(text)
    if len(text) <= SHORT_FIELD and len(numbers) == 1:
        return int(numbers[0])
    return 0 if _NEWBORN.search(text) else None


def sex_from_text(text: str) -> str | None:
    """'male' or 'female' from the first sex word in ``text`` (pronouns only when no word settles it), or None."""
    coded = _AGE_SEX_CODE.search(text)
    if coded:
        return "male" if coded.group("sex") == "M" else "female"
    for patterns in (_SEX_WORDS, _PRONOUNS):
        hits = {sex: m.start() for sex, p in patterns.items() if (m := p.search(text))}
        if hits:
            return min(hits, key=hits.get)
    return None


def sex_from_code(value: Any) -> str | None:
    """'male' / 'female' from a coded sex field ("M", "F", "Male", "woman"), or None."""
    return _SEX_CODES.get(str(value).strip().lower()) if value is not None else None


def coded_age(value: Any) -> int | None:
    """A coded age field as whole years ("58", 58, 58.0), or None (absent, empty, de-identified "___" or not a
    number)."""
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        return int(value)
    try:
        return int(float(str(value).strip())) if value is not None and str(value).strip() else None
    except ValueError:
        return None


def age_is_masked(*texts: str, age: Any = None) -> bool:
    """Whether the record's own age is de-identified: an age field that is there but no number ("___", "[**Age**]"),
    or a text stating it masked ("___ y/o F", "Age: ___")."""
    field = age is not None and str(age).strip() != "" and coded_age(age) is None
    return field or any(_MASKED_AGE.search(t) for t in texts if t)


def demographics_from(*texts: str, age: Any = None, sex: Any = None) -> Demographics:
    """Demographics from coded fields where given, else from the first text that names them. Where the record's age
    is de-identified (``age_is_masked``), only a coded age counts: a number in the free text is then someone else's
    ("her 45-year-old son") or a duration ("fall x2"), never the patient's age, and no newborn word makes it 0.

    Raises ValueError when age or sex cannot be found (the schema needs both, and guessing would invent a patient).
    """
    found_age = coded_age(age)
    masked = found_age is None and age_is_masked(*texts, age=age)
    found_sex = sex_from_code(sex)
    days = None
    for text in texts:
        if found_age is None and not masked:
            found_age = age_from_text(text)
            days = age_days_from_text(text) if found_age == 0 else None
        if found_sex is None:
            found_sex = sex_from_text(text)
    if found_age is None or found_sex is None:
        missing = " and ".join(n for n, v in (("age", found_age), ("sex", found_sex)) if v is None)
        if masked:
            raise ValueError(f"no patient {missing} found: the age is de-identified ('___ y/o'); give an 'age' field")
        raise ValueError(f"no patient {missing} found (write e.g. '45-year-old woman' or '(male, 37 years old)')")
    return Demographics(age=found_age, sex=found_sex, age_days=days)
