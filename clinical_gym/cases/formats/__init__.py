"""Readers for public case formats, and the Hugging Face export.

Formats (``format=`` names): ``native`` (clinical-gym's Case JSON), ``osce`` (AgentClinic OSCE JSONL),
``mtmeddialog`` (MTMedDialog JSON), ``diaggym`` (DiagGym/DiagBench-style JSONL), ``medqa`` (MedQA-style
multiple-choice JSONL) and ``hf`` (a dataset written by ``to_hf_dataset``). ``clinical_gym.cases.read_case_file``
and ``load_cases`` detect the format from a file's first row. Imported cases pass the Case schema; they are not
held to the curated library's quality bar.
"""

from clinical_gym.cases.formats.huggingface import cases_from_hf, read_hf_rows, to_hf_dataset
from clinical_gym.cases.formats.imported import CaseFormat, Origin
from clinical_gym.cases.formats.registry import FORMAT_NAMES, FORMATS, convert_rows, detect_format, read_public_file

__all__ = ["FORMATS", "FORMAT_NAMES", "CaseFormat", "Origin", "cases_from_hf", "convert_rows", "detect_format", "read_hf_rows",
           "read_public_file", "to_hf_dataset"]
