"""KnowledgeTools: plain methods with Google-style docstrings (their tool schemas), JSON-ready results, and
ValueError messages an agent can act on."""

from __future__ import annotations

import inspect
import json
import re

import pytest

from clinical_gym.knowledge_base import KnowledgeBase, KnowledgeTools, SmallCorpusIndex, build_store
from clinical_gym.knowledge_base.corpus.written import written_passages

TOOLS = ("search_knowledge", "get_passage", "search_by_category")


@pytest.fixture(scope="module")
def tools(tmp_path_factory) -> KnowledgeTools:
    path = tmp_path_factory.mktemp("kb") / "written.sqlite"
    build_store(written_passages(), path)
    return KnowledgeTools(KnowledgeBase(path, backend="fts5"), top_k=3)


@pytest.mark.parametrize("name", TOOLS)
def test_every_tool_documents_each_argument(name):
    method = getattr(KnowledgeTools, name)
    doc = inspect.getdoc(method)
    params = [p for p in inspect.signature(method).parameters if p != "self"]
    args_section = doc.split("Args:")[1].split("Returns:")[0]
    assert [m for m in re.findall(r"^    (\w+):", args_section, re.M)] == params
    assert "Returns:" in doc and "Raises:" in doc and doc.splitlines()[0].endswith(".")


def test_search_knowledge_returns_json_ready_hits(tools):
    hits = tools.search_knowledge("sepsis antibiotics within one hour lactate")
    assert len(hits) == 3 and {"cg:guideline:sepsis-bundle", "cg:condition:sepsis"} <= {h["doc_id"] for h in hits}
    assert set(hits[0]) == {"doc_id", "title", "snippet", "score", "category", "source", "dataset_name"}
    json.dumps(hits)
    assert len(tools.search_knowledge("sepsis", k=8)) == 8 and tools.search_knowledge("???") == []


def test_get_passage(tools):
    assert tools.get_passage("cg:drug:metformin")["title"] == "Metformin"
    with pytest.raises(ValueError, match="not found; use a doc_id from a search result"):
        tools.get_passage("cg:drug:unobtainium")


def test_search_by_category(tools):
    hits = tools.search_by_category("interaction", "warfarin antibiotics", k=2)
    assert [h["category"] for h in hits] == ["interaction", "interaction"] and "warfarin" in hits[0]["title"].lower()
    with pytest.raises(ValueError, match="unknown category 'recipes'; choose one of condition, drug, guideline, interaction"):
        tools.search_by_category("recipes", "pie")


@pytest.mark.parametrize("k", [0, 21, -1])
def test_k_out_of_range(tools, k):
    with pytest.raises(ValueError, match="k must be between 1 and 20"):
        tools.search_knowledge("fever", k=k)


def test_any_index_can_back_the_tools():
    small = KnowledgeTools(SmallCorpusIndex(written_passages()), top_k=1)
    assert small.search_knowledge("gout urate")[0]["doc_id"] == "cg:condition:gout"
    with pytest.raises(ValueError, match="top_k"):
        KnowledgeTools(SmallCorpusIndex([]), top_k=0)
