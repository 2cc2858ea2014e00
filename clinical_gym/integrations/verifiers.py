"""clinical-gym environments as a verifiers environment package (verifiers 0.4, ``verifiers.v1``).

The taskset id is this module's import path, so verifiers' own entry points load it directly::

    vf-eval clinical_gym.integrations.verifiers --env.taskset.env-id ClinicalInquiry-v1 --env.taskset.num-tasks 8 \\
        --model Qwen/Qwen2.5-7B-Instruct --client.base-url http://127.0.0.1:8000/v1 \\
        --env.player.runtime.type subprocess -n 8

* ``ClinicalTaskset``: one task per case (or tool task) of a registered environment, prompt = the opening
  observation, system prompt = the environment's (``--env.taskset.env-id``, ``env-kwargs``, ``split``,
  ``num-tasks``, ``seed``; ``remote``: a ``clinical-gym serve`` URL, the episodes then run on that server).
* ``ClinicalEnv``: the multi-turn episode. The environment plays the user: each reply of the model is one
  ``env.step``, the observation comes back as the next user turn, and the episode's end (termination,
  truncation, or the turn limit) ends the exchange.
* The rubric is the environment's own reward, split into its reward components: each component is recorded as a
  reward of weight 1 (``reward_components`` summed over the episode), so verifiers' weighted total is the
  environment's episode reward; ``success`` and ``turns`` are recorded as metrics (weight 0).
* ``LocalChatHarness``: verifiers' tool-less chat program (the ``null`` harness's) run with this Python
  interpreter instead of a ``uv`` script environment, so an evaluation needs no download (the default for this
  taskset; any verifiers harness can be chosen with ``--env.player.harness.id``).

Import cost: this module imports verifiers (the ``verifiers`` extra); ``clinical_gym.integrations`` does not.
"""

from __future__ import annotations

import json
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import verifiers.v1 as vf
from pydantic import Field

__all__ = ["ClinicalTaskset", "ClinicalEnv", "LocalChatHarness"]


class ClinicalData(vf.TaskData):
    """One episode to play: the environment, its case and the reset seed."""

    env_id: str
    env_kwargs: dict[str, Any] = Field(default_factory=dict)
    remote: str | None = None
    case_id: str
    seed: int


class ClinicalTask(vf.Task[ClinicalData]):
    """A clinical-gym episode; its rewards are recorded by ``ClinicalEnv.run`` from the environment."""


class ClinicalTasksetConfig(vf.TasksetConfig):
    env_id: str = "ClinicalInquiry-v1"
    """Registered clinical-gym environment id."""
    env_kwargs: dict[str, Any] = Field(default_factory=dict)
    """Keyword arguments for gym.make (ignored with remote: the server's apply)."""
    remote: str | None = None
    """A clinical-gym server URL (clinical-gym serve); episodes then run there."""
    split: str | None = None
    """Case split (train, validation, test) when the environment takes one."""
    num_tasks: int | None = None
    """Tasks to load (None: every case or task of the environment)."""
    seed: int = 0
    """Reset seed of every task (each task's episode is reproducible)."""


def make_env(data: ClinicalData) -> Any:
    """The episode's environment: local ``gym.make`` or a ``RemoteEnv`` session."""
    from clinical_gym.server.client import local_or_remote

    return local_or_remote(data.env_id, data.env_kwargs, data.remote)


class ClinicalTaskset(vf.Taskset[ClinicalTask, ClinicalTasksetConfig]):
    def load(self) -> Iterator[ClinicalTask]:
        config = self.config
        kwargs = dict(config.env_kwargs)
        if config.split is not None:
            kwargs["split"] = config.split
        probe = make_env(ClinicalData(env_id=config.env_id, env_kwargs=kwargs, remote=config.remote, case_id="",
                                      seed=config.seed))
        try:
            unwrapped = probe.unwrapped
            cases = [c.id for c in (getattr(unwrapped, "cases", None) or getattr(unwrapped, "tasks", []))]
            for case_id in cases[:config.num_tasks]:
                obs, info = probe.reset(seed=config.seed, options={"case_id": case_id})
                yield ClinicalTask(ClinicalData(name=f"{config.env_id}#{case_id}", id=case_id, prompt=obs,
                                                system_prompt=info.get("system_prompt"), env_id=config.env_id,
                                                env_kwargs=kwargs, remote=config.remote, case_id=case_id,
                                                seed=config.seed), config.task)
        finally:
            probe.close()


class ClinicalEnvConfig(vf.EnvConfig):
    player: vf.AgentConfig = vf.AgentConfig()
    """The agent under evaluation or training."""


class ClinicalEnv(vf.Env[ClinicalEnvConfig]):
    async def run(self, task: ClinicalTask, agents: Any) -> None:
        data = task.data
        env = make_env(data)
        components: dict[str, float] = {}
        total, turns, outcome = 0.0, 0, None
        try:
            env.reset(seed=data.seed, options={"case_id": data.case_id})
            async with agents.player.interaction(task) as interaction:
                segment = await interaction.turn()  # the opening observation is the task's prompt
                while not segment.terminated:
                    obs, reward, terminated, truncated, info = env.step(segment.last_reply)
                    total += float(reward)
                    turns += 1
                    for name, value in info.get("reward_components", {}).items():
                        components[name] = components.get(name, 0.0) + float(value)
                    if terminated or truncated:
                        outcome = info.get("outcome") if terminated else None
                        interaction.trace.stop("terminated" if terminated else "truncated")
                        break
                    segment = await interaction.turn(obs)
        finally:
            env.close()
        trace = interaction.trace
        for name, value in components.items():  # the rubric: the environment's components, summed over the episode
            trace.record_reward(name, value, 1.0)
        if not components:
            trace.record_reward("env_reward", total, 1.0)
        trace.record_metric("env_reward", total)
        trace.record_metric("turns", float(turns))
        trace.record_metric("success", float(bool(outcome and outcome.get("success"))))
        if outcome is not None:
            trace.info["outcome"] = json.loads(json.dumps(outcome, default=str))


class LocalChatHarnessConfig(vf.HarnessConfig):
    pass


class LocalChatHarness(vf.Harness[LocalChatHarnessConfig]):
    """verifiers' tool-less chat program, run by this interpreter (its packages are verifiers' own dependencies)."""

    APPENDS_SYSTEM_PROMPT = True
    SUPPORTS_MCP = False
    SUPPORTS_RESUME = True
    EXECUTES_CODE = False
    NEEDS_CONTAINER = False

    async def launch(self, ctx: Any, trace: Any, runtime: Any, endpoint: str, secret: str,
                     mcp_urls: dict[str, str], data: Any, tool_interception_url: str | None = None) -> Any:
        from verifiers.v1.harnesses.utils.launch import CHAT_PROGRAM_SOURCE
        from verifiers.v1.dialects.chat import message_to_wire

        system_prompt, prompt = self.resolve_prompt(data)
        args = [f"--base-url={endpoint}", f"--api-key={secret}", f"--model={ctx.model}"]
        if system_prompt:
            args.append(f"--system-prompt={system_prompt}")
        if isinstance(prompt, str):
            args.append(f"--prompt={prompt}")
        elif prompt is not None:
            path = f".vf-initial-messages-{trace.id}.json"
            await runtime.write(path, json.dumps([message_to_wire(m) for m in prompt]).encode())
            args.append(f"--initial-messages-file={path}")
        script = Path(tempfile.gettempdir()) / "clinical-gym-vf-chat.py"
        if not script.exists() or script.read_text(encoding="utf-8") != CHAT_PROGRAM_SOURCE:
            script.write_text(CHAT_PROGRAM_SOURCE, encoding="utf-8")
        return await runtime.run_program([sys.executable, str(script), *args], {**self.config.resolved_env})
