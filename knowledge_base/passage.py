"""The records the knowledge base stores and returns: a ``Passage`` and a ranked ``SearchHit``."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

DOC_ID_MAX = 200


class Passage(BaseModel):
    """One searchable passage. ``source`` says where its text comes from (provenance and version)."""

    model_config = ConfigDict(extra="forbid", frozen=True, str_strip_whitespace=True)

    doc_id: str = Field(min_length=1, max_length=DOC_ID_MAX)
    title: str = ""
    content: str = Field(min_length=1)
    source: str = ""
    category: str = Field(default="general", min_length=1)
    dataset_name: str = ""


class SearchHit(BaseModel):
    """A passage found by a search: higher ``score`` is more relevant (BM25); ``snippet`` marks hits as **term**."""

    model_config = ConfigDict(frozen=True)

    doc_id: str
    title: str
    snippet: str
    score: float
    category: str
    source: str
    dataset_name: str
