"""``clinical-gym kb build`` (JSONL and saved Hugging Face datasets, with a skip report) and ``kb search``."""

from __future__ import annotations

import json

import pytest

from clinical_gym import cli


@pytest.fixture(autouse=True)
def kb_commands(monkeypatch):
    """Mount the kb commands on the CLI (until they are listed in clinical_gym.cli.COMMAND_MODULES)."""
    if "kb" not in cli.COMMAND_MODULES:
        monkeypatch.setattr(cli, "COMMAND_MODULES", (*cli.COMMAND_MODULES, "kb"))


@pytest.fixture
def passages_file(tmp_path):
    path = tmp_path / "notes.jsonl"
    rows = [{"doc_id": "n1", "title": "Chest pain", "content": "Crushing central chest pain with sweating.", "category": "note"},
            {"doc_id": "n2", "title": "Fever", "content": "Fever and productive cough for three days.", "category": "note"},
            {"doc_id": "n1", "content": "duplicate"}, {"doc_id": "n3"}]
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n{broken\n")
    return path


def test_build_from_jsonl_then_search(passages_file, tmp_path, capsys):
    db = tmp_path / "notes.sqlite"
    assert cli.main(["kb", "build", "--from", str(passages_file), "--out", str(db)]) == 0
    out = capsys.readouterr()
    assert "wrote 2 passages" in out.out and "skipped 3 rows" in out.out
    assert "1 duplicate doc_id (first at line 3)" in out.out and "1 invalid JSON (first at line 5)" in out.out
    assert "building" in out.err  # the progress bar
    assert cli.main(["kb", "search", "chest pain", "--db", str(db), "-k", "1", "--backend", "fts5"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("1. [note] Chest pain  (n1, score ") and "**chest** **pain**" in out.lower()
    assert cli.main(["kb", "search", "the of", "--db", str(db)]) == 0
    assert "no passages match" in capsys.readouterr().out


def test_build_from_a_saved_hugging_face_dataset(tmp_path, capsys):
    datasets = pytest.importorskip("datasets", reason="datasets is part of the [train] extra")
    ds = datasets.Dataset.from_list([{"id": 7, "title": "Gout", "text": "Urate crystal arthritis of the big toe."},
                                     {"id": 8, "title": "Empty", "text": ""}])
    ds.save_to_disk(str(tmp_path / "hf"))
    db = tmp_path / "hf.sqlite"
    assert cli.main(["kb", "build", "--from", str(tmp_path / "hf"), "--out", str(db)]) == 0
    out = capsys.readouterr().out
    assert "wrote 1 passages" in out and "1 missing or empty content (first at row 1)" in out
    assert cli.main(["kb", "search", "toe", "--db", str(db)]) == 0
    assert "(7, score" in capsys.readouterr().out


@pytest.mark.parametrize("args,message", [
    (["kb"], "required"),
    (["kb", "build", "--from", "x.jsonl"], "--out is required"),
    (["kb", "build", "--from", "/no/such.jsonl", "--out", "o.sqlite"], "expected a .jsonl file"),
    (["kb", "search", "fever", "--db", "/no/such.sqlite"], "clinical-gym kb build --out /no/such.sqlite"),
    (["kb", "search", "fever", "-k", "0", "--db", "x"], "-k must be at least 1"),
])
def test_errors_are_one_line(args, message, capsys):
    assert cli.main(args) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("clinical-gym: error:") and message in err[0]


def test_unknown_category_lists_the_known_ones(passages_file, tmp_path, capsys):
    db = tmp_path / "notes.sqlite"
    cli.main(["kb", "build", "--from", str(passages_file), "--out", str(db)])
    assert cli.main(["kb", "search", "fever", "--db", str(db), "--category", "drug"]) == 2
    assert "unknown category 'drug'; choose one of note" in capsys.readouterr().err
