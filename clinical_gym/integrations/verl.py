"""clinical-gym environments in verl's multi-turn rollout (verl 0.9: the agent-loop API,
``verl.experimental.agent_loop``): ``ClinicalAgentLoop``, registered as ``clinical_gym_agent``.

One loop per episode: the environment's system prompt and opening observation are the prompt (built with
verl's Continuous Token builder, as verl's own loops do); each generation from verl's LLM server is one
``env.step``; the environment's reply is appended as a user message (``ct_merge_context_msg``, mask 0) until the
episode terminates, is truncated, reaches ``max_turns`` or fills ``rollout.response_length``. The episode's
summed reward is ``reward_score`` (verl keeps a loop's own score and does not call a reward function); the
per-turn rewards, reward components, success and the outcome go into ``extra_fields``.

Which episode: each dataset row's ``extra_info`` holds ``env_id``, ``case_id`` and ``seed`` (``write_dataset``
writes such a parquet file); the loop's constructor arguments (``env_kwargs``, ``remote`` for a clinical-gym
server, ``max_turns``) come from the agent-loop config file (examples/verl/). Commands: docs/server.md (verl).

Importing this module imports verl (and through it ray, hydra, omegaconf, tensordict): install with
``make verl-env`` (tests) or ``pip install --no-deps verl`` next to those packages; ``write_dataset`` needs only
pandas/pyarrow (``datasets``).
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Iterable, Mapping
from typing import Any

from verl.experimental.agent_loop.agent_loop import AgentLoopBase, AgentLoopOutput, register

from clinical_gym.server.client import local_or_remote as make_env

AGENT_NAME = "clinical_gym_agent"


def _opening_messages(obs: str, info: Mapping[str, Any]) -> list[dict[str, str]]:
    """The chat an episode opens with: the environment's system prompt (when it has one) and the first observation."""
    return ([{"role": "system", "content": info["system_prompt"]}] if info.get("system_prompt") else []) + [
        {"role": "user", "content": obs}]


@register(AGENT_NAME)
class ClinicalAgentLoop(AgentLoopBase):
    """A clinical-gym episode as a verl agent loop (see the module docstring). ``env_id`` is the default for rows
    whose ``extra_info`` names none."""

    def __init__(self, *args: Any, env_id: str = "ClinicalInquiry-v1", env_kwargs: Mapping[str, Any] | None = None,
                 remote: str | None = None, max_turns: int | None = None, tools: Any = None, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.env_id, self.env_kwargs, self.remote, self.max_turns = env_id, dict(env_kwargs or {}), remote, max_turns
        self.response_length = int(self.rollout_config.response_length)

    async def run(self, sampling_params: dict[str, Any], **kwargs: Any) -> AgentLoopOutput:
        extra = dict(kwargs.get("extra_info") or {})
        env_id = extra.get("env_id", self.env_id)
        options = {"case_id": extra["case_id"]} if extra.get("case_id") else None
        loop = asyncio.get_running_loop()
        env = await loop.run_in_executor(None, make_env, env_id, self.env_kwargs, self.remote)
        try:
            return await self._episode(env, extra.get("seed"), options, sampling_params)
        finally:
            await loop.run_in_executor(None, env.close)

    async def _episode(self, env: Any, seed: int | None, options: dict[str, Any] | None,
                       sampling_params: dict[str, Any]) -> AgentLoopOutput:
        loop = asyncio.get_running_loop()
        obs, info = await loop.run_in_executor(None, lambda: env.reset(seed=seed, options=options))
        messages = _opening_messages(obs, info)
        ids = await self.ct_build_initial_tokens(messages)
        mask: list[int] = []
        logprobs: list[float] = []
        rewards: list[float] = []
        components: dict[str, float] = {}
        outcome, ending = None, "response_length"
        request_id = uuid.uuid4().hex
        while True:
            output = await self.server_manager.generate(request_id=request_id, prompt_ids=ids,
                                                        sampling_params=sampling_params)
            merged, mask, logprobs = await self.ct_merge_assistant_token(
                ids, output.token_ids, mask, logprobs if (logprobs or output.log_probs) else None,
                assistant_logprobs=output.log_probs or None)
            logprobs = logprobs or []
            ids = merged.token_ids
            reply = self.tokenizer.decode(output.token_ids, skip_special_tokens=True)
            obs, reward, terminated, truncated, info = await loop.run_in_executor(None, env.step, reply)
            rewards.append(float(reward))
            for name, value in info.get("reward_components", {}).items():
                components[name] = components.get(name, 0.0) + float(value)
            if terminated or truncated:
                outcome = info.get("outcome") if terminated else None
                ending = "terminated" if terminated else "truncated"
                break
            if self.max_turns is not None and len(rewards) >= self.max_turns:
                ending = "max_turns"
                break
            if len(mask) >= self.response_length:
                break
            before = list(messages) + [{"role": "assistant", "content": reply}]
            messages = before + [{"role": "user", "content": obs}]
            merged, new_mask, new_logprobs = await self.ct_merge_context_msg(before, messages, ids, mask,
                                                                             logprobs or None)
            if len(new_mask) >= self.response_length:
                break
            ids, mask, logprobs = merged.token_ids, new_mask, (new_logprobs or []) if logprobs else []
        prompt_ids, response_ids = ids[:len(ids) - len(mask)], ids[len(ids) - len(mask):]
        cut = self.response_length
        return AgentLoopOutput(
            prompt_ids=prompt_ids, response_ids=response_ids[:cut], response_mask=mask[:cut],
            response_logprobs=logprobs[:cut] if logprobs else None, reward_score=float(sum(rewards)),
            num_turns=2 * len(rewards) + 1, metrics={},
            extra_fields={"turn_scores": rewards, "tool_rewards": [], "reward_components": components,
                          "env_success": float(bool(outcome and outcome.get("success"))), "env_ending": ending})


def dataset_rows(env_id: str, *, env_kwargs: Mapping[str, Any] | None = None, case_ids: Iterable[str] | None = None,
                 seed: int = 0, repeat: int = 1) -> list[dict[str, Any]]:
    """verl dataset rows (RLHFDataset's columns) for an environment's cases: ``prompt`` (system prompt and opening
    observation), ``agent_name`` (``clinical_gym_agent``), ``data_source``, ``reward_model`` and ``extra_info``
    (``env_id``, ``case_id``, ``seed``, ``index``)."""
    env = make_env(env_id, env_kwargs)
    try:
        unwrapped = env.unwrapped
        ids = list(case_ids) if case_ids is not None else [
            c.id for c in (getattr(unwrapped, "cases", None) or getattr(unwrapped, "tasks", []))]
        rows = []
        for case_id in ids:
            obs, info = env.reset(seed=seed, options={"case_id": case_id})
            prompt = _opening_messages(obs, info)
            rows.append({"data_source": f"clinical_gym/{env_id}", "agent_name": AGENT_NAME, "prompt": prompt,
                         "reward_model": {"style": "rule", "ground_truth": ""},
                         "extra_info": {"env_id": env_id, "case_id": case_id, "seed": seed}})
    finally:
        env.close()
    rows = rows * repeat
    for index, row in enumerate(rows):
        row["extra_info"] = {**row["extra_info"], "index": index}
    return rows


def write_dataset(path: str, env_id: str, **kwargs: Any) -> int:
    """Write ``dataset_rows`` as the parquet file verl's ``data.train_files`` reads; the number of rows."""
    from datasets import Dataset

    rows = dataset_rows(env_id, **kwargs)
    Dataset.from_list(rows).to_parquet(path)
    return len(rows)
