"""Any clinical-gym environment in TRL's ``GRPOTrainer`` (TRL >= 1.16), two ways:

* ``rollout_func=EnvRolloutFunc(env, dataset)`` with ``reward_funcs=env_reward``: episodes run through the
  ``RolloutCollector`` (multi-turn, token-exact: the environment's replies are appended as template tokens, never
  re-tokenized); TRL trains on the generated tokens only (environment tokens get ``env_mask`` 0) with the episode's
  reward. Works for every environment.
* ``environment_factory=tool_environment(env_id)``: for the tool domains. TRL's own tool loop calls the domain's
  tools, which are the public methods of the class; ``get_reward()`` is the environment's graded reward.

``env_dataset`` turns an environment's cases (or tasks) into the prompt dataset TRL wants. Nothing from trl, torch
or datasets is imported until it is used::

    from trl import GRPOConfig, GRPOTrainer
    from clinical_gym.integrations.trl import EnvRolloutFunc, env_dataset, env_reward

    dataset = env_dataset("ClinicalInquiry-v1")
    trainer = GRPOTrainer(model, reward_funcs=env_reward, args=GRPOConfig(...), train_dataset=dataset,
                          processing_class=tokenizer, rollout_func=EnvRolloutFunc("ClinicalInquiry-v1", dataset))

Both hooks are experimental in TRL (set ``TRL_EXPERIMENTAL_SILENCE=1`` to silence its warnings).
"""

from __future__ import annotations

import inspect
import json
import typing
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, ClassVar

import gymnasium as gym
import numpy as np

from clinical_gym.rollout import EpisodeSpec, Policy, RolloutCollector, RolloutLimits, Trajectory

EnvSource = str | Callable[[], gym.Env]
# Names a tool cannot have: TRL's environment interface and the state a ToolEnvironment keeps.
RESERVED = frozenset({"reset", "get_reward", "env", "done", "started", "case_id", "calls", "reward", "turns",
                      "outcome"})


def make_env(env: EnvSource, env_kwargs: Mapping[str, Any] | None = None) -> gym.Env:
    """A fresh environment: ``gym.make(env, **env_kwargs)`` for an id, else ``env()``."""
    if isinstance(env, str):
        import clinical_gym  # noqa: F401  (registers the ids)

        return gym.make(env, **dict(env_kwargs or {}))
    if env_kwargs:
        raise ValueError("env_kwargs go with an environment id, not with a factory")
    return env()


# -- the prompt dataset ------------------------------------------------------------------------------------------
def env_dataset(env: EnvSource, *, case_ids: Iterable[str] | None = None, env_kwargs: Mapping[str, Any] | None = None,
                seed: int = 0, repeat: int = 1, tool_prompt: bool = False) -> Any:
    """A ``datasets.Dataset`` with one row per case (``repeat`` times): ``prompt`` (the system prompt and the
    opening observation as chat messages, from ``reset(seed=seed, options={"case_id": ...})``), ``case_id`` and
    ``seed``. ``case_ids`` picks cases (default: all the environment's cases or tasks).

    ``tool_prompt=True`` (for ``tool_environment``) replaces a tool domain's system prompt, which asks for JSON
    replies, with its policy and an instruction to use the tools the chat template presents."""
    from datasets import Dataset

    if repeat < 1:
        raise ValueError(f"repeat must be >= 1, got {repeat}")
    environment = make_env(env, env_kwargs)
    try:
        ids = list(case_ids) if case_ids is not None else [c.id for c in environment.unwrapped.cases]
        rows = []
        for case_id in ids:
            obs, info = environment.reset(seed=seed, options={"case_id": case_id})
            system = tool_system_prompt(environment.unwrapped) if tool_prompt else info.get("system_prompt")
            prompt = ([{"role": "system", "content": system}] if system is not None else []) + [
                {"role": "user", "content": obs}]
            rows.append({"prompt": prompt, "case_id": case_id, "seed": seed})
    finally:
        environment.close()
    return Dataset.from_list(rows * repeat)


def tool_system_prompt(env: Any) -> str:
    """A tool domain's policy and how to act when the tools come through the chat template (``tool_environment``)."""
    if not hasattr(type(env), "policy_text"):
        raise TypeError(f"{type(env).__name__} is not a tool domain; tool_prompt needs one")
    policy = type(env).policy_text().strip()
    return (f"{policy}\n\n## How to act\nWork on the task with the tools you are given, one call at a time; each call "
            f"is one turn and you have at most {env.max_turns} turns. When you are done, call submit_answer with "
            "your final answer.")


def prompt_key(messages: Sequence[Mapping[str, Any]]) -> str:
    """The identity of a prompt (its roles and texts), for finding the case a TRL prompt came from."""
    return json.dumps([[m.get("role"), m.get("content")] for m in messages], ensure_ascii=False)


# -- rollout_func ------------------------------------------------------------------------------------------------
class EnvRolloutFunc:
    """A TRL ``rollout_func``: runs one episode per prompt with the ``RolloutCollector`` and returns TRL's fields.

    Each prompt is matched to its case through ``dataset`` (rows with ``prompt`` and ``case_id``, as
    ``env_dataset`` builds; two cases with the same prompt cannot be told apart and are refused). Per episode:
    ``prompt_ids`` (the templated opening), ``completion_ids`` (every later token: replies and the environment's
    template tokens), ``logprobs`` (0.0 on environment tokens), ``env_mask`` (1 on generated tokens), and for
    reward functions ``env_reward`` (the episode's summed reward), ``env_success`` and ``env_turns``.

    ``policy``: a ``Policy``, a function ``trainer -> Policy``, or None to follow the trainer: its vLLM engine when
    ``use_vllm`` (colocate: the trainer's ``vllm.LLM``; server: the server at the trainer's URL; TRL syncs the
    weights), else the trainer's model through ``TransformersPolicy``; sampling uses the trainer's temperature,
    top_p and top_k. ``limits`` default to ``max_turn_tokens = trainer.max_completion_length``. Episode seeds come
    from ``seed``, the call count and the process index. ``last_trajectories`` holds the latest call's episodes.
    """

    def __init__(self, env: EnvSource, dataset: Iterable[Mapping[str, Any]], *,
                 env_kwargs: Mapping[str, Any] | None = None, limits: RolloutLimits | None = None,
                 num_envs: int = 16, policy: Policy | Callable[[Any], Policy] | None = None, seed: int = 0) -> None:
        self.env_factory: Callable[[], gym.Env] = lambda: make_env(env, env_kwargs)
        self.cases: dict[str, str] = {}
        for row in dataset:
            key, case_id = prompt_key(row["prompt"]), row["case_id"]
            if self.cases.setdefault(key, case_id) != case_id:
                raise ValueError(f"cases {self.cases[key]!r} and {case_id!r} have the same prompt; a rollout_func "
                                 "cannot tell them apart (drop one, or give them different seeds or texts)")
        if not self.cases:
            raise ValueError("the dataset has no rows")
        self.limits = limits
        self.num_envs = num_envs
        self.policy = policy
        self.seed = seed
        self.calls = 0
        self.last_trajectories: list[Trajectory] = []
        self._collector: RolloutCollector | None = None
        self._auto: tuple[Any, Policy] | None = None

    def __call__(self, prompts: Sequence[Sequence[Mapping[str, Any]]], trainer: Any) -> dict[str, list[Any]]:
        specs = [EpisodeSpec(seed=s, options={"case_id": self._case(p)}, group=i)
                 for i, (p, s) in enumerate(zip(prompts, self._seeds(len(prompts), trainer), strict=True))]
        collector = self._collector_for(trainer)
        trajectories = collector.collect(specs, seed=self._seeds(1, trainer, salt=1)[0])
        self.calls += 1
        self.last_trajectories = trajectories
        return trl_fields(trajectories, _tokenizer(trainer).eos_token_id)

    def _case(self, prompt: Sequence[Mapping[str, Any]]) -> str:
        try:
            return self.cases[prompt_key(prompt)]
        except KeyError:
            raise ValueError("a prompt matches no case of the rollout function's dataset (build the trainer's "
                             "train_dataset and the EnvRolloutFunc from the same env_dataset)") from None

    def _seeds(self, count: int, trainer: Any, salt: int = 0) -> list[int]:
        process = getattr(getattr(trainer, "accelerator", None), "process_index", 0)
        sequence = np.random.SeedSequence([self.seed, self.calls, process, salt])
        return [int(s) for s in sequence.generate_state(count, dtype=np.uint32)]

    def _collector_for(self, trainer: Any) -> RolloutCollector:
        policy = self._policy_for(trainer)
        if self._collector is None:
            limits = self.limits or RolloutLimits(max_turn_tokens=trainer.max_completion_length)
            self._collector = RolloutCollector(policy, self.env_factory, _tokenizer(trainer), limits=limits,
                                               num_envs=self.num_envs)
        self._collector.policy = policy
        return self._collector

    def _policy_for(self, trainer: Any) -> Policy:
        if self.policy is not None:
            return self.policy if isinstance(self.policy, Policy) else self.policy(trainer)
        if self._auto is None or self._auto[0] is not trainer:
            self._auto = (trainer, self._trainer_policy(trainer))
        return self._auto[1]

    @staticmethod
    def _trainer_policy(trainer: Any) -> Policy:
        """The policy that follows ``trainer``'s generation settings (see the class docstring)."""
        sampling = {"temperature": trainer.temperature, "top_p": trainer.top_p}
        if getattr(trainer, "use_vllm", False):
            if trainer.vllm_mode == "colocate":
                from clinical_gym.rollout.vllm_policy import VLLMPolicy

                return VLLMPolicy(trainer.vllm_generation.llm, top_k=trainer.top_k or 0, **sampling)
            from clinical_gym.rollout.vllm_server import VLLMServerPolicy

            args = trainer.args
            url = args.vllm_server_base_url or f"http://{args.vllm_server_host}:{args.vllm_server_port}"
            return VLLMServerPolicy(url, **sampling)
        from clinical_gym.rollout.transformers_policy import TransformersPolicy

        model = trainer.accelerator.unwrap_model(trainer.model)
        return TransformersPolicy(model, _tokenizer(trainer), top_k=trainer.top_k or 0, **sampling)


def trl_fields(trajectories: Sequence[Trajectory], filler_id: int) -> dict[str, list[Any]]:
    """TRL's rollout fields for finished trajectories (an episode cut before its first reply gets one masked
    ``filler_id`` token, as TRL needs a non-empty completion)."""
    out: dict[str, list[Any]] = {k: [] for k in ("prompt_ids", "completion_ids", "logprobs", "env_mask",
                                                 "env_reward", "env_success", "env_turns")}
    for t in trajectories:
        start = len(t.opening_ids)
        completion = t.token_ids()[start:]
        out["prompt_ids"].append(list(t.opening_ids))
        out["completion_ids"].append(completion or [filler_id])
        out["logprobs"].append(t.token_logprobs()[start:] or [0.0])
        out["env_mask"].append(t.loss_mask()[start:] or [0])
        out["env_reward"].append(float(t.reward))
        out["env_success"].append(float(bool(t.success)))
        out["env_turns"].append(len(t.turns))
    return out


def env_reward(completions: Sequence[Any], env_reward: Sequence[float] | None = None,
               env_success: Sequence[float] | None = None, env_turns: Sequence[int] | None = None,
               log_metric: Callable[[str, float], None] | None = None, **kwargs: Any) -> list[float]:
    """TRL reward function: the environment's episode reward, passed on by ``EnvRolloutFunc`` (it also logs
    ``env/success_rate`` and ``env/turns``)."""
    if env_reward is None:
        raise ValueError("env_reward reads the episode rewards of EnvRolloutFunc: pass "
                         "rollout_func=EnvRolloutFunc(...)")
    if log_metric is not None and env_success:
        log_metric("env/success_rate", float(np.mean(env_success)))
        log_metric("env/turns", float(np.mean(env_turns or [0])))
    return [float(r) for r in env_reward]


def _tokenizer(trainer: Any) -> Any:
    processing = trainer.processing_class
    return getattr(processing, "tokenizer", processing)


# -- environment_factory -----------------------------------------------------------------------------------------
class ToolEnvironment:
    """Base of the classes ``tool_environment`` builds: one tool-domain episode that TRL drives through its tools.

    ``reset(**row)`` starts the row's case (``case_id``, ``seed``) and returns the opening ticket only when the row
    has no prompt text of its own; each tool method runs one call as one environment step and returns the
    observation; ``get_reward()`` is the episode's reward (an episode that never submitted is graded as it stands,
    as the environment grades one that runs out of turns). ``case_id``, ``calls`` (tool name and arguments, in
    order), ``turns``, ``done``, ``reward`` and ``outcome`` describe the current episode.
    """

    env_id: ClassVar[str] = ""
    env_kwargs: ClassVar[dict[str, Any]] = {}

    def __init__(self) -> None:
        self.env = make_env(self.env_id, self.env_kwargs)
        self.done = True
        self.started = False
        self.case_id: str | None = None
        self.calls: list[tuple[str, dict[str, Any]]] = []
        self.reward = 0.0
        self.turns = 0
        self.outcome: dict[str, Any] | None = None

    def reset(self, **row: Any) -> str | None:
        case_id = row.get("case_id")
        obs, _ = self.env.reset(seed=row.get("seed"), options={"case_id": case_id} if case_id is not None else None)
        self.done, self.started, self.reward, self.turns, self.outcome = False, True, 0.0, 0, None
        self.case_id, self.calls = self.env.unwrapped.task.id, []
        return None if _has_text(row.get("prompt")) else obs

    def get_reward(self) -> float:
        if not self.started:
            return 0.0
        if self.done:
            return self.reward
        env = self.env.unwrapped
        return self.reward + float(env.reward_fn.evaluate(env.episode_record()).total)

    def _call(self, name: str, arguments: dict[str, Any]) -> str:
        if self.done:
            return "Error: the task is over; no more tool calls are run."
        self.calls.append((name, dict(arguments)))
        action = json.dumps({"name": name, "arguments": arguments}, ensure_ascii=False, default=str)
        obs, reward, terminated, truncated, info = self.env.step(action)
        self.reward += float(reward)
        self.turns += 1
        if terminated or truncated:
            self.done = True
            self.outcome = info.get("outcome")
        return obs


def tool_environment(env_id: str, *, tools: Iterable[str] | None = None, **env_kwargs: Any) -> type[ToolEnvironment]:
    """A ``ToolEnvironment`` class for TRL's ``environment_factory``: its public methods are the tool domain's tools
    (signature and docstring of each tool, which TRL turns into the tool schema), all of them or the ``tools``
    named (which must include a submit tool). ``env_kwargs`` go to ``gym.make``."""
    from clinical_gym.tool_env.env import ToolDomainEnv
    from clinical_gym.tools import ToolKind

    probe = make_env(env_id, env_kwargs)
    try:
        env = probe.unwrapped
        if not isinstance(env, ToolDomainEnv):
            raise TypeError(f"{env_id} has no tools; train it with rollout_func=EnvRolloutFunc(...)")
        probe.reset(seed=0)
        available = dict(env.toolkit.tools)
    finally:
        probe.close()
    chosen = list(available) if tools is None else list(tools)
    unknown = [name for name in chosen if name not in available]
    if unknown:
        raise ValueError(f"{env_id} has no tool(s) {unknown}; its tools: {', '.join(available)}")
    if not any(available[name].spec.kind is ToolKind.SUBMIT for name in chosen):
        raise ValueError("tools must include a submit tool (submit_answer), or no episode can finish")
    clashes = [name for name in chosen if name in RESERVED or hasattr(ToolEnvironment, name)]
    if clashes:
        raise ValueError(f"tool names {clashes} clash with the ToolEnvironment interface")
    methods = {name: _tool_method(name, available[name]) for name in chosen}
    attributes = {"env_id": env_id, "env_kwargs": dict(env_kwargs), "__module__": __name__,
                  "__doc__": f"{env_id} for TRL's environment_factory.", **methods}
    return type(env_id.split("-")[0] + "Tools", (ToolEnvironment,), attributes)


def _tool_method(name: str, bound: Any) -> Callable[..., str]:
    """A method named ``name`` with the tool's signature, resolved type hints and docstring, that runs the tool."""
    signature = inspect.signature(bound.function)
    hints = typing.get_type_hints(bound.spec.function, include_extras=True)

    def method(self: ToolEnvironment, **arguments: Any) -> str:
        return self._call(name, arguments)

    method.__name__ = method.__qualname__ = name
    method.__doc__ = inspect.getdoc(bound.spec.function)
    self_parameter = inspect.Parameter("self", inspect.Parameter.POSITIONAL_OR_KEYWORD)
    method.__signature__ = signature.replace(  # type: ignore[attr-defined]
        parameters=[self_parameter, *signature.parameters.values()], return_annotation=str)
    method.__annotations__ = {**{p: hints[p] for p in signature.parameters if p in hints}, "return": str}
    return method


def _has_text(prompt: Any) -> bool:
    """Whether a dataset prompt carries text (TRL's placeholder prompt for env-owned data is one empty message)."""
    if isinstance(prompt, str):
        return bool(prompt.strip())
    return bool(prompt) and any(str(m.get("content") or "").strip() for m in prompt)
