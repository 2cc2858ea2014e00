"""The experience repository (Doctor-R1): high-reward turns stored in SQLite, retrieved by similarity and reward,
and injected into the agent's prompt.

* ``ExperienceStore``: (state, action, reward, case id, turn, timestamp) rows; threshold 0.7, batch insertion,
  deduplication, cached embeddings; WAL, so rollout workers in several processes can share one file.
* ``Retriever``: candidates by ``sim + 0.5 * reward`` (top 30), a pluggable reranker (``CrossEncoderReranker``:
  a cross-encoder from a local folder, as the paper's bge-reranker-base), then the reward
  (mean + std) and novelty (0.9) filters; top 2. MiniLM embeddings, or BM25 without the embedding extra.
* ``inject`` / ``ExperienceInjector`` / ``ExperienceWrapper`` / ``with_experience``: the "Experience References"
  block within half the prompt budget, once per episode or every turn, for an environment or a rollout collector.
* ``ExperienceRecorder``: stores a batch of trajectories' good turns after each training step.

Importing this package imports no torch: the encoder loads on first use.
"""

from clinical_gym.experience.embedding import Encoder, MiniLMEncoder, embedding_available
from clinical_gym.experience.index import BM25Index, DenseIndex, ExperienceIndex, default_index
from clinical_gym.experience.injection import approx_tokens, fitting, format_injection, inject, strip_injection
from clinical_gym.experience.injector import ExperienceInjector, InjectionConfig, shared_retriever
from clinical_gym.experience.rerank import CrossEncoderReranker
from clinical_gym.experience.recording import ExperienceRecorder, trajectory_experiences, turn_experience
from clinical_gym.experience.retrieval import (Candidate, RetrievalConfig, Retriever, apply_filters, reward_threshold,
                                               similarity_reranker)
from clinical_gym.experience.state import dialogue_state, visible_reply
from clinical_gym.experience.store import DEFAULT_THRESHOLD, Experience, ExperienceStore
from clinical_gym.experience.wrapper import ExperienceWrapper, with_experience

__all__ = ["BM25Index", "Candidate", "CrossEncoderReranker", "DEFAULT_THRESHOLD", "DenseIndex", "Encoder", "Experience", "ExperienceIndex",
           "ExperienceInjector", "ExperienceRecorder", "ExperienceStore", "ExperienceWrapper", "InjectionConfig",
           "MiniLMEncoder", "RetrievalConfig", "Retriever", "apply_filters", "approx_tokens", "default_index",
           "dialogue_state", "embedding_available", "fitting", "format_injection", "inject", "reward_threshold",
           "shared_retriever", "similarity_reranker", "strip_injection", "trajectory_experiences", "turn_experience",
           "visible_reply", "with_experience"]
