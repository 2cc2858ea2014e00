"""Train with TRL's GRPOTrainer on a served clinical environment (OpenEnv's protocol: ``clinical-gym serve``).

    clinical-gym serve --env ClinicalInquiry-v1 --env-kwargs '{"split": "train", "turn_budget": 2}' --port 8000 &
    python examples/trl_openenv.py --url http://127.0.0.1:8000                 # SmolLM2-135M + LoRA
    python examples/trl_openenv.py --tiny                                      # its own server, a tiny model (CPU)
    python examples/trl_openenv.py --url http://gpu-box-envs:8000 --model Qwen/Qwen2.5-0.5B-Instruct --steps 100

The environments run in the server's process (or on another machine); the trainer holds one ``RemoteEnv``
session per episode, a ``gymnasium.Env`` that speaks OpenEnv's WebSocket protocol. Episodes run through
``EnvRolloutFunc`` (clinical_gym.integrations.trl): multi-turn and token-exact, the server's replies appended as
template tokens; TRL trains on the generated tokens with the episode's reward (``env_reward``). Any OpenEnv client
reaches the same server (``openenv.core.GenericEnvClient(base_url=URL)``: ``step({"text": reply})``).
Several servers behind one trainer: docs/server.md.
"""

from __future__ import annotations

import argparse
import contextlib
import os
from collections.abc import Iterator
from typing import Any

os.environ.setdefault("TRL_EXPERIMENTAL_SILENCE", "1")  # rollout_func is experimental in TRL


@contextlib.contextmanager
def server_url(url: str | None, env_id: str, env_kwargs: dict[str, Any]) -> Iterator[str]:
    """``url``, or a server for ``env_id`` started in this process for the run."""
    if url:
        yield url
        return
    from clinical_gym.server import ServerSettings, running_server

    with running_server(ServerSettings(env_id, env_kwargs, max_sessions=64)) as started:
        yield started


def train(url: str, model: Any, tokenizer: Any, *, steps: int, out: str, cases: int = 8, lora: Any = None,
          max_completion_length: int = 64, **config: Any) -> Any:
    """A GRPOTrainer on the server at ``url`` for ``steps`` steps; the trained trainer (``.rollout`` holds the
    rollout function, whose ``last_trajectories`` are the latest episodes)."""
    import torch
    from trl import GRPOConfig, GRPOTrainer

    from clinical_gym.integrations.trl import EnvRolloutFunc, env_dataset, env_reward
    from clinical_gym.rollout import RolloutLimits
    from clinical_gym.server import RemoteEnv

    def remote() -> RemoteEnv:  # one session per episode, closed when the episode ends
        return RemoteEnv(url)

    probe = remote()
    case_ids = [case.id for case in probe.cases[:cases]]  # the server's case (or task) ids
    probe.close()
    dataset = env_dataset(remote, case_ids=case_ids)  # the prompts: one row per case, opened on the server
    settings = {"per_device_train_batch_size": 4, "num_generations": 4, "learning_rate": 1e-5, "beta": 0.0,
                "logging_steps": 1, "report_to": "none", "save_strategy": "no", **config}
    args = GRPOConfig(output_dir=out, max_steps=steps, max_completion_length=max_completion_length,
                      use_cpu=not torch.cuda.is_available(), **settings)
    rollout = EnvRolloutFunc(remote, dataset, num_envs=16,
                             limits=RolloutLimits(max_turn_tokens=max_completion_length, max_episode_tokens=1024))
    trainer = GRPOTrainer(model=model, reward_funcs=env_reward, args=args, train_dataset=dataset,
                          processing_class=tokenizer, peft_config=lora, rollout_func=rollout)
    trainer.rollout = rollout
    trainer.train()
    return trainer


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--url", default=None, help="a clinical-gym server (default: start one in this process)")
    parser.add_argument("--env", default="ClinicalInquiry-v1", help="environment of the in-process server")
    parser.add_argument("--model", default=None, help="causal LM folder or hub id (default: SmolLM2-135M-Instruct)")
    parser.add_argument("--tiny", action="store_true", help="a tiny random model instead (smoke run)")
    parser.add_argument("--cases", type=int, default=8, help="cases in the training set")
    parser.add_argument("--steps", type=int, default=2, help="training steps")
    parser.add_argument("--out", default="runs/trl_openenv", help="output folder")
    args = parser.parse_args()

    from peft import LoraConfig
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from clinical_gym.trainers.common.tiny_models import load_smollm2, tiny_llama, tiny_tokenizer

    if args.tiny:
        tokenizer = tiny_tokenizer()
        model = tiny_llama(tokenizer)
    elif args.model is None:
        tokenizer, model = load_smollm2(plain=True)
    else:
        model = AutoModelForCausalLM.from_pretrained(args.model, dtype="float32")
        tokenizer = AutoTokenizer.from_pretrained(args.model)
    lora = None if args.tiny else LoraConfig(r=8, lora_alpha=16, target_modules="all-linear", task_type="CAUSAL_LM")
    with server_url(args.url, args.env, {"split": "train", "turn_budget": 2}) as url:
        trainer = train(url, model, tokenizer, steps=args.steps, out=args.out, cases=args.cases, lora=lora)
    for entry in trainer.state.log_history:
        rewards = {k: round(v, 3) for k, v in entry.items() if k.startswith(("reward", "env/"))}
        if rewards:
            print(f"step {entry.get('step')}: {rewards}")


if __name__ == "__main__":
    main()
