"""Doctor-R1's cross-encoder reranker (stage 2) and per-turn retrieval in ClinicalInquiry: a real cross-encoder
architecture (a small random BERT sequence classifier saved to a folder, loaded the way bge-reranker-base would be)
scores (query, state) pairs, the retriever orders candidates by those scores, and an environment configured as the
paper (retrieval every turn, the reranker) shows references at every turn."""

from __future__ import annotations

import gymnasium as gym
import pytest

torch = pytest.importorskip("torch", reason="the cross-encoder needs the [train] extra")
transformers = pytest.importorskip("transformers", reason="the cross-encoder needs the [train] extra")

import clinical_gym  # noqa: E402,F401
from clinical_gym.experience import (BM25Index, CrossEncoderReranker, Experience, ExperienceStore,  # noqa: E402
                                     RetrievalConfig, Retriever, shared_retriever)

STATES = ["Patient: I have chest pain when I climb stairs.", "Patient: my chest hurts and my left arm is numb.",
          "Patient: I cough up green phlegm and have a fever.", "Patient: my chest feels tight after running.",
          "Patient: sharp pain in my chest when I breathe in."]
QUERY = "Patient: I get chest pain on the stairs."


@pytest.fixture(scope="module")
def cross_encoder(tmp_path_factory):
    folder = tmp_path_factory.mktemp("cross-encoder")
    words = sorted({w.strip(".:,").lower() for text in [*STATES, QUERY] for w in text.split()})
    vocab = {w: i for i, w in enumerate(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", *words])}
    transformers.BertTokenizerFast(vocab=vocab).save_pretrained(folder)
    torch.manual_seed(0)
    config = transformers.BertConfig(vocab_size=5 + len(words), hidden_size=32, num_hidden_layers=1,
                                     num_attention_heads=2, intermediate_size=48, num_labels=1,
                                     initializer_range=0.3)  # wider than the default: clearly distinct scores
    transformers.BertForSequenceClassification(config).save_pretrained(folder)
    return folder


def direct_scores(folder, query, texts):
    tokenizer = transformers.AutoTokenizer.from_pretrained(folder)
    model = transformers.AutoModelForSequenceClassification.from_pretrained(folder).eval()
    with torch.no_grad():
        return [float(model(**tokenizer(query, t, return_tensors="pt")).logits[0, 0]) for t in texts]


def store_with(path, states):
    store = ExperienceStore(path)
    store.add([Experience(state=s, action=f"Question: about {i}?", reward=0.9, case_id=f"c{i}")
               for i, s in enumerate(states)])
    return store


def test_scores_are_the_cross_encoders_logits_for_each_pair(cross_encoder):
    reranker = CrossEncoderReranker(cross_encoder, batch_size=2)
    assert reranker.scores(QUERY, STATES) == pytest.approx(direct_scores(cross_encoder, QUERY, STATES), abs=1e-5)
    with pytest.raises(ValueError, match="cross-encoder folder"):
        CrossEncoderReranker("/no/such/folder")


def test_the_retriever_orders_candidates_by_the_cross_encoder(cross_encoder, tmp_path):
    store = store_with(tmp_path / "exp.sqlite", STATES)
    config = RetrievalConfig(k=5, novelty=1.01, beta=-10.0, reranker=str(cross_encoder))
    retriever = Retriever(store, BM25Index(store), config=config)
    assert isinstance(retriever.reranker, CrossEncoderReranker)
    found = retriever.retrieve(QUERY)
    scores = dict(zip(STATES, direct_scores(cross_encoder, QUERY, STATES)))
    assert len(set(scores.values())) == len(STATES)
    assert [c.experience.state for c in found] == sorted(STATES, key=lambda s: -scores[s])
    assert [c.rerank_score for c in found] == pytest.approx(sorted(scores.values(), reverse=True), abs=1e-5)
    plain = Retriever(store, BM25Index(store), config=RetrievalConfig(k=5, novelty=1.01, beta=-10.0))
    assert [c.rerank_score for c in plain.retrieve(QUERY)] == [c.similarity for c in plain.retrieve(QUERY)]


def test_doctor_r1_retrieval_every_turn_with_the_reranker(cross_encoder, tmp_path):
    path = tmp_path / "exp.sqlite"
    store_with(path, [s.replace("Patient:", "Patient's description:") for s in STATES])
    config = {"mode": "turn", "retrieval": {"reranker": str(cross_encoder), "novelty": 1.01}}
    env = gym.make("ClinicalInquiry-v1", reward="doctor_r1", experience=str(path), experience_config=config)
    obs, info = env.reset(seed=0)
    shown = [info["experience_ids"]]
    for question in ("Where is the pain?", "Does it spread anywhere?"):
        obs, _, _, _, info = env.step(f"<answer>Question: {question}</answer>")
        assert obs.startswith("Experience References:\n1. State:") and "Original Question:" in obs
        shown.append(info["experience_ids"])
    assert all(shown) and len(shown) == 3  # retrieved at the opening and after every turn
    retriever = shared_retriever(path.resolve(), env.unwrapped.experience.config.retrieval)
    assert isinstance(retriever.reranker, CrossEncoderReranker) and retriever.reranker._model is not None
