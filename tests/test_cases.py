"""The case schema, the bundled library's quality bar, loaders and deterministic splits."""

from __future__ import annotations

import json
import warnings

import pytest

from clinical_gym.cases import Case, available_case_sets, library, load_cases, read_case_file, split_of
from clinical_gym.cases.quality import case_problems


def test_library_size_and_breadth():
    lib = library()
    assert len(lib) >= 60
    assert len({c.specialty for c in lib}) >= 8
    assert len({c.diagnosis.name.lower() for c in lib}) == len(lib), "each library case should have its own diagnosis"


def test_every_library_case_meets_the_bar():
    problems = {c.id: case_problems(c) for c in library()}
    assert not {k: v for k, v in problems.items() if v}


def test_splits_are_deterministic_and_cover_the_library():
    train, test = load_cases("library", split="train"), load_cases("library", split="test")
    assert len(train) + len(test) == len(library())
    assert test and train
    assert all(split_of(c.id) == "test" for c in test)
    assert split_of("any-id") == split_of("any-id")


def test_named_sets():
    sets = available_case_sets()
    assert "library" in sets and "library:digestive" in sets
    assert all(c.specialty == "digestive" for c in load_cases("library:digestive"))
    with pytest.raises(ValueError, match="unknown specialty"):
        load_cases("library:astrology")
    with pytest.raises(ValueError, match="no case set or file"):
        load_cases("no-such-set")
    with pytest.raises(ValueError, match="unknown split"):
        load_cases("library", split="validation")


def test_case_files_load_and_bad_rows_are_reported(tmp_path):
    good = library()[0].model_dump(mode="json")
    path = tmp_path / "cases.jsonl"
    path.write_text(json.dumps(good) + "\n{not json\n" + json.dumps({**good, "id": "x", "specialty": "astrology"}) + "\n")
    cases, problems = read_case_file(path)
    assert [c.id for c in cases] == [good["id"]]
    assert len(problems) == 2 and ":2:" in problems[0] and "specialty" in problems[1]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert len(load_cases(path)) == 1
    assert "skipped 2 bad case rows" in str(caught[0].message)


def test_schema_rejects_unknown_topics_and_bad_codes():
    data = library()[0].model_dump(mode="json")
    data["history"][0]["topics"] = ["not_a_topic"]
    with pytest.raises(ValueError, match="unknown topics"):
        Case.model_validate(data)
    data = library()[0].model_dump(mode="json")
    data["diagnosis"]["icd10"] = "appendix"
    with pytest.raises(ValueError):
        Case.model_validate(data)


def test_round_trip_json():
    case = library()[0]
    assert Case.model_validate_json(case.model_dump_json()) == case
