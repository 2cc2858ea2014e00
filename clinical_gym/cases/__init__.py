"""Patient cases: the schema, the bundled library, loaders and splits."""

from clinical_gym.cases.loading import available_case_sets, library, load_cases, read_case_file, split_of
from clinical_gym.cases.schema import Case, Demographics, Diagnosis, Fact, LabValue, Persona, Rubric, TestResult, Vitals

__all__ = [
    "Case", "Demographics", "Diagnosis", "Fact", "LabValue", "Persona", "Rubric", "TestResult", "Vitals",
    "available_case_sets", "library", "load_cases", "read_case_file", "split_of",
]
