"""Checks of the verl adapter (clinical_gym.integrations.verl) against verl's own agent-loop classes. They run in
the verl environment (``make verl-env``: verl 0.9 without its dependencies, plus the ray, hydra, omegaconf and
tensordict its base classes import, over the main environment), through tests/test_verl_adapter.py.

verl's LLM server (vLLM or SGLang on GPUs) is replaced by ``ModelServer``: a real tiny model behind the same
``generate(request_id, prompt_ids, sampling_params) -> TokenOutput`` call."""

from __future__ import annotations

import asyncio
import os

import gymnasium as gym
import pytest
import torch
from omegaconf import OmegaConf
from verl.experimental.agent_loop.agent_loop import AgentLoopOutput, DictConfigWrap, _agent_loop_registry
from verl.workers.rollout.replica import TokenOutput

import clinical_gym  # noqa: F401
from clinical_gym.integrations.verl import AGENT_NAME, ClinicalAgentLoop, dataset_rows
from clinical_gym.server import ServerSettings, running_server
from clinical_gym.trainers.common.tiny_models import tiny_llama, tiny_tokenizer

RESPONSE_LENGTH = 160


class ModelServer:
    """verl's server call, answered by a tiny model sampling ``max_tokens`` new tokens (seeded per request)."""

    def __init__(self, model, tokenizer, scripted=None):
        self.model, self.tokenizer, self.scripted = model, tokenizer, list(scripted or [])
        self.calls = []

    async def generate(self, request_id, prompt_ids, sampling_params, **kwargs):
        self.calls.append(list(prompt_ids))
        if self.scripted:  # a scripted reply, tokenized, with the model's logprobs of those tokens
            new = self.tokenizer.encode(self.scripted.pop(0), add_special_tokens=False) + [self.tokenizer.convert_tokens_to_ids("<|im_end|>")]
        else:
            torch.manual_seed(len(self.calls))
            out = self.model.generate(torch.tensor([prompt_ids]), max_new_tokens=sampling_params["max_tokens"],
                                      do_sample=True, pad_token_id=self.tokenizer.pad_token_id)
            new = out[0, len(prompt_ids):].tolist()
        with torch.no_grad():
            logits = self.model(torch.tensor([list(prompt_ids) + new])).logits[0, len(prompt_ids) - 1:-1]
        logprobs = torch.log_softmax(logits, -1).gather(1, torch.tensor(new)[:, None])[:, 0].tolist()
        return TokenOutput(token_ids=new, log_probs=logprobs)


def agent_loop(server, tokenizer, response_length=2048, **kwargs):
    config = OmegaConf.create({"actor_rollout_ref": {"rollout": {"prompt_length": 4096,
                                                                 "response_length": response_length}},
                               "data": {}})
    return ClinicalAgentLoop(trainer_config=DictConfigWrap(config), server_manager=server, tokenizer=tokenizer,
                             processor=None, dataset_cls=None, data_config=DictConfigWrap(config.data), **kwargs)


def run(make_loop, sampling_params, extra):
    """One episode on a fresh event loop; the agent loop is built inside it, as verl's worker builds it."""

    async def episode():
        return await make_loop().run(sampling_params, extra_info=extra)

    return asyncio.run(episode())


@pytest.fixture(scope="module")
def tiny():
    rows = dataset_rows("ClinicalInquiry-v1", env_kwargs={"turn_budget": 3}, case_ids=["cir-nstemi-01"], seed=5)
    tokenizer = tiny_tokenizer(corpus=[m["content"] for row in rows for m in row["prompt"]], vocab_size=700)
    torch.manual_seed(0)
    return tiny_llama(tokenizer), tokenizer


def test_the_loop_is_registered_for_verls_worker():
    assert _agent_loop_registry[AGENT_NAME] == {"_target_": "clinical_gym.integrations.verl.ClinicalAgentLoop"}


def test_dataset_rows_carry_the_episode_and_the_opening():
    rows = dataset_rows("Triage-v1", case_ids=None, seed=2, repeat=2)
    env = gym.make("Triage-v1")
    n = len(rows) // 2
    obs, info = env.reset(seed=2, options={"case_id": rows[1]["extra_info"]["case_id"]})
    assert rows[1]["prompt"] == [{"role": "system", "content": info["system_prompt"]}, {"role": "user", "content": obs}]
    assert rows[1]["agent_name"] == AGENT_NAME and rows[n + 1]["extra_info"]["index"] == n + 1
    assert rows[1]["extra_info"]["case_id"] == rows[n + 1]["extra_info"]["case_id"]


def replay(env_id, env_kwargs, extra, replies):
    env = gym.make(env_id, **env_kwargs)
    obs, info = env.reset(seed=extra["seed"], options={"case_id": extra["case_id"]})
    steps = [env.step(reply) for reply in replies]
    return info, obs, steps


@pytest.mark.parametrize("served", [False, True])
def test_multi_turn_episode_is_token_exact_and_scored_by_the_environment(tiny, served):
    model, tokenizer = tiny
    env_kwargs = {"turn_budget": 3}
    replies = ["<think>x</think><answer>Question: Where exactly is the pain?</answer>",
               "<think>x</think><answer>Question: Any shortness of breath?</answer>",
               "<think>x</think><answer>Diagnosis: NSTEMI\nRecommendation: aspirin and ticagrelor</answer>"]
    server = ModelServer(model, tokenizer, scripted=replies)
    extra = {"env_id": "ClinicalInquiry-v1", "case_id": "cir-nstemi-01", "seed": 5}

    def play(url):
        return run(lambda: agent_loop(server, tokenizer, env_kwargs=env_kwargs, remote=url),
                   {"max_tokens": 24, "temperature": 1.0}, extra)

    if served:
        with running_server(ServerSettings("ClinicalInquiry-v1", env_kwargs, max_sessions=2)) as url:
            out = play(url)
    else:
        out = play(None)
    assert isinstance(out, AgentLoopOutput)
    info, opening, steps = replay("ClinicalInquiry-v1", env_kwargs, extra, replies)
    # the prompt is the system prompt and the opening, templated; the environment's reward is the score
    assert out.prompt_ids == tokenizer.apply_chat_template(
        [{"role": "system", "content": info["system_prompt"]}, {"role": "user", "content": opening}],
        add_generation_prompt=True, tokenize=True, return_dict=False)
    assert out.reward_score == pytest.approx(sum(s[1] for s in steps)) and steps[-1][2]
    assert out.extra_fields["turn_scores"] == [s[1] for s in steps] and out.extra_fields["env_ending"] == "terminated"
    # token-exact: masked-in tokens are exactly the generations, in order; masked-out ones are the patient's replies
    generated = [t for t, m in zip(out.response_ids, out.response_mask, strict=True) if m == 1]
    assert generated == [t for call in replies for t in tokenizer.encode(call, add_special_tokens=False)
                         + [tokenizer.convert_tokens_to_ids("<|im_end|>")]]
    environment = tokenizer.decode([t for t, m in zip(out.response_ids, out.response_mask, strict=True) if m == 0])
    assert steps[0][0] in environment and steps[1][0] in environment
    assert len(out.response_logprobs) == len(out.response_ids)
    # each later request is the whole conversation so far (verl's server sees the exact tokens trained on)
    assert server.calls[1] == out.prompt_ids + out.response_ids[:len(server.calls[1]) - len(out.prompt_ids)]


def test_sampled_replies_and_the_response_length_cap(tiny):
    model, tokenizer = tiny
    server = ModelServer(model, tokenizer)
    out = run(lambda: agent_loop(server, tokenizer, RESPONSE_LENGTH, env_kwargs={"turn_budget": 6}),
              {"max_tokens": 40}, {"env_id": "ClinicalInquiry-v1", "case_id": "cir-nstemi-01", "seed": 1})
    assert len(out.response_ids) == len(out.response_mask) <= RESPONSE_LENGTH and 1 in out.response_mask
    assert out.extra_fields["env_ending"] in ("response_length", "terminated", "truncated")
    assert len(out.extra_fields["turn_scores"]) == len(server.calls)


@pytest.mark.parametrize("config, env_id", [("agent_loops_inquiry.yaml", "ClinicalInquiry-v1"),
                                            ("agent_loops_triage.yaml", "Triage-v1")])
def test_example_configs_build_the_loop_the_way_verls_worker_does(tiny, config, env_id):
    """Load examples/verl/<config> into verl's registry, as AgentLoopWorker does with agent_loop_config_path, and
    build the loop with hydra.utils.instantiate; one sampled episode on the configured environment."""
    import hydra
    from verl.experimental.agent_loop.agent_loop import ToolListWrap

    model, tokenizer = tiny
    path = os.path.join(os.path.dirname(__file__), "..", "examples", "verl", config)
    for entry in OmegaConf.load(path):
        _agent_loop_registry[entry.name] = entry
    try:
        [row] = dataset_rows(env_id, env_kwargs={"split": "train"}, case_ids=None, seed=3)[:1]
        server = ModelServer(model, tokenizer)
        settings = OmegaConf.create({"actor_rollout_ref": {"rollout": {"prompt_length": 8192,
                                                                       "response_length": 96}}, "data": {}})

        def make_loop():
            return hydra.utils.instantiate(config=_agent_loop_registry[AGENT_NAME],
                                           trainer_config=DictConfigWrap(settings), server_manager=server,
                                           tokenizer=tokenizer, processor=None, hf_model_type=None, dataset_cls=None,
                                           data_config=DictConfigWrap(settings.data), tools=ToolListWrap([]))

        loop = asyncio.run(_built(make_loop))
        assert isinstance(loop, ClinicalAgentLoop) and loop.env_id == env_id and loop.env_kwargs["split"] == "train"
        out = run(make_loop, {"max_tokens": 16}, row["extra_info"])
        assert out.response_mask and isinstance(out.reward_score, float) and server.calls
    finally:
        _agent_loop_registry[AGENT_NAME] = {"_target_": "clinical_gym.integrations.verl.ClinicalAgentLoop"}


async def _built(make_loop):
    return make_loop()
