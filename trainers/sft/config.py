"""SFT settings (the cold start before RL: supervised fine-tuning on expert conversations, loss on the agent's own
replies only). Named ``SFTRunConfig`` so that it never clashes with ``trl.SFTConfig``, which it is turned into."""

from __future__ import annotations

from dataclasses import dataclass

from clinical_gym.trainers.common.config import TrainerConfig, option


@dataclass
class SFTRunConfig(TrainerConfig):
    """SFT settings; the shared ones are documented on ``TrainerConfig``. Method and layout: trainers/sft/README.md.

    > Data
        dataset: what ``clinical-gym data expert`` wrote (its folder, the ``dataset/`` Hugging Face folder inside
        it, or its ``conversations.jsonl``), or any chat JSONL file of the same rows. env: the environment the
        conversations come from; the dataset must hold that environment's conversations only. Sequences longer
        than max_episode_tokens are cut there (their end is dropped).

    > Schedule
        epochs: passes over the data (DoctorAgent-RL: 3); 0 runs total_steps optimizer steps instead.
        micro_batch_size: conversations per forward/backward pass; gradient_accumulation_steps: passes per
        optimizer step. save_every / keep_checkpoints: LoRA (or full) checkpoints under ``checkpoints/`` for
        resume; the final weights are always written, merged, to ``<output_dir>/model``.
        gradient_checkpointing: on by default (TRL's default too): each layer's activations are recomputed in the
        backward pass instead of kept, the same weights for far less memory (``--no-gradient-checkpointing``).

    The defaults follow DoctorAgent-RL's cold start (LoRA r=8, lr 1e-4, 3 epochs). The rollout settings of
    ``TrainerConfig`` (generation engine, vLLM, temperature, top_p, max_turn_tokens, max_turns, num_envs,
    env_kwargs) are not used by SFT.
    """

    dataset: str = option("expert data folder or chat JSONL file (clinical-gym data expert --out)", default="")
    output_dir: str = option("run folder: metrics.jsonl, checkpoints/ and the merged model/", default="runs/sft")
    lora_r: int = option("LoRA rank; 0 trains all weights", default=8)
    learning_rate: float = option("peak learning rate", default=1e-4)
    epochs: float = option("passes over the data; 0 runs total_steps optimizer steps instead", default=3.0)
    gradient_accumulation_steps: int = option("forward/backward passes per optimizer step", default=1)
    save_every: int = option("optimizer steps between checkpoints", default=100)
    # on by default, as in TRL's own SFTConfig: without it every decoder layer keeps its activations for the backward
    # pass (SmolLM2-135M: ~0.86 MB a token, 6.4 GB for 4 conversations of 1,855 tokens); recomputing them trains the
    # same weights (tests/test_sft_train.py) for one more forward pass per step
    gradient_checkpointing: bool = option("recompute activations in the backward pass to save memory", default=True)

    def __post_init__(self) -> None:
        super().__post_init__()
        if not self.dataset:
            raise ValueError("dataset is required: a folder written by 'clinical-gym data expert' or a chat JSONL file")
        if self.epochs < 0:
            raise ValueError(f"epochs must be >= 0, got {self.epochs}")
        if self.gradient_accumulation_steps < 1:
            raise ValueError(f"gradient_accumulation_steps must be >= 1, got {self.gradient_accumulation_steps}")
