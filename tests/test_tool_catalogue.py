"""The tool catalogue: ``clinical-gym tools list`` agrees with what the environments offer, the product's totals
(issue 7: >= 100 distinct tools, >= 9 tool environments, >= 40 tasks each) hold, and ``docs/domains.md`` is the
page the code generates."""

from __future__ import annotations

from pathlib import Path

import gymnasium as gym
import pytest

import clinical_gym.cli
from clinical_gym.tool_env.catalogue import catalogue, domains_markdown, resolve_domain, tool_envs

DOCS = Path(__file__).resolve().parents[1] / "docs" / "domains.md"


@pytest.fixture(scope="module")
def rows():
    return catalogue()


def offered(env_id: str) -> dict[str, str]:
    """Tool name -> kind as the environment itself announces them in the reset info, over all its tasks (a
    multi-phase environment offers each pathway's tools)."""
    env = gym.make(env_id)
    kinds: dict[str, str] = {}
    for task in env.unwrapped.tasks:
        _, info = env.reset(seed=0, options={"task_id": task.id})
        bound = env.unwrapped.toolkit.tools
        kinds |= {t["function"]["name"]: bound[t["function"]["name"]].spec.kind.value for t in info["tools"]}
    env.close()
    return kinds


def test_the_catalogue_lists_exactly_what_each_environment_offers(rows):
    tools, domains = rows
    union: dict[str, str] = {}
    for d in domains:
        mine = offered(d.env_id)
        union |= mine
        assert d.tools == len(mine) and sum(d.kinds.values()) == len(mine)
        assert {t.name for t in tools if d.env_id in t.envs} == set(mine)
    assert {t.name: t.kind for t in tools} == union


def test_product_totals(rows):
    tools, domains = rows
    assert len(tools) >= 100, f"{len(tools)} distinct tools"
    assert len(domains) >= 9, f"{len(domains)} tool environments"
    for d in domains:
        assert d.tasks >= 40 and d.train_tasks > 0 and d.test_tasks > 0, d
        assert d.own_tools >= 8 and d.tools >= 12, d
        assert {"read", "write", "think"} <= set(d.kinds), d


def test_docs_domains_md_is_generated_from_the_code(rows):
    assert DOCS.read_text(encoding="utf-8") == domains_markdown(*rows), \
        "docs/domains.md is stale: run clinical-gym tools docs --out docs/domains.md"


@pytest.mark.parametrize("env_id", [e.id for e in tool_envs()])
def test_domains_resolve_by_id_name_or_folder(env_id):
    info = next(e for e in tool_envs() if e.id == env_id)
    assert info.domain and f"clinical_gym.domains.{info.domain}." in info.entry_point
    assert resolve_domain(env_id) == resolve_domain(env_id.split("-v")[0].lower()) == resolve_domain(info.domain) \
        == info


def test_unknown_domain_is_a_one_line_error():
    with pytest.raises(ValueError, match="unknown tool domain 'nowhere'; tool environments: "):
        resolve_domain("nowhere")


def test_tools_list_for_one_domain(capsys):
    assert clinical_gym.cli.main(["tools", "list", "--domain", "Triage-v1"]) == 0
    out = capsys.readouterr().out.splitlines()
    listed = {line.split()[0]: line.split()[1] for line in out[:-2]}
    assert listed == offered("Triage-v1")
    assert out[-1].startswith(f"{len(listed)} tools in Triage-v1: ")


@pytest.mark.parametrize("argv, message", [
    (["tools"], "choose a tools command: list, docs"),
    (["tools", "list", "--domain", "cardiology"], "unknown tool domain 'cardiology'"),
    (["tools", "docs", "--out", "/no/such/folder/domains.md"], "folder /no/such/folder does not exist"),
])
def test_errors_are_one_line(argv, message, capsys):
    assert clinical_gym.cli.main(argv) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("clinical-gym: error:") and message in err[0]
