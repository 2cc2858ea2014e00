"""SFT cold start on expert conversations, with TRL's ``SFTTrainer`` and a peft LoRA adapter: ``main(cfg)`` reads
the data, tokenizes each conversation with its assistant mask (the loss falls on the agent's replies only), trains,
and writes the merged weights to ``<output_dir>/model``, a plain model folder that GRPO, PPO and TT-OPD take as
``--model`` and the benchmark takes as ``checkpoint:<output_dir>``.

Method, layout and deviations: trainers/sft/README.md.

    clinical-gym train sft --dataset data/expert --model PATH [--gguf-file F] [--epochs 3] [--resume] ...
    python -m clinical_gym.trainers.sft.train --dataset data/expert --model PATH ...
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import os
import shutil
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from clinical_gym.llm.gguf_cache import drop_gguf_quantizer
from clinical_gym.trainers.common import runtime
from clinical_gym.trainers.common.config_cli import add_config_arguments, config_from_args
from clinical_gym.trainers.common.metrics_log import MetricsLog, trackers_for
from clinical_gym.trainers.sft.config import SFTRunConfig
from clinical_gym.trainers.sft.data import ExpertExample, load_examples

CHECKPOINTS_DIR = "checkpoints"
MODEL_DIR = "model"
# TRL / transformers log names -> the names every clinical-gym trainer logs under
METRIC_NAMES = {"loss": "losses/sft_loss", "grad_norm": "losses/grad_norm", "learning_rate": "charts/learning_rate",
                "epoch": "charts/epoch", "mean_token_accuracy": "sft/token_accuracy", "entropy": "sft/entropy",
                "num_tokens": "sft/tokens_seen"}


def check_data(cfg: SFTRunConfig) -> list[ExpertExample]:
    """The training conversations; ``ValueError`` (one line) when the dataset is missing, empty or holds another
    environment's conversations, or mixed precision is asked for without a GPU."""
    examples = load_examples(cfg.dataset)
    if not examples:
        raise ValueError(f"{cfg.dataset} holds no conversation")
    envs = sorted({e.env for e in examples})
    if envs != [cfg.env]:
        raise ValueError(f"{cfg.dataset} holds conversations of {', '.join(envs)}, not only {cfg.env}; "
                         f"pass --env {envs[0]} or build the data for {cfg.env}")
    if cfg.mixed_precision != "no":
        import torch

        if cfg.cpu or not torch.cuda.is_available():
            raise ValueError(f"mixed_precision={cfg.mixed_precision!r} needs a GPU; use 'no' on the CPU")
    return examples


def check_sft_run(cfg: SFTRunConfig) -> None:
    """Everything ``main`` checks before a model loads: the shared run checks and the data."""
    runtime.check_run(cfg)
    check_data(cfg)


# the GGUF quantizer markers dropped from a model loaded from a GGUF file (its weights are plain floats already)
plain_weights = drop_gguf_quantizer


def latest_trainer_checkpoint(output_dir: str | Path) -> str | None:
    """The newest ``checkpoint-N`` folder transformers' Trainer wrote under ``<output_dir>/checkpoints``."""
    from transformers.trainer_utils import get_last_checkpoint

    folder = Path(output_dir) / CHECKPOINTS_DIR
    return get_last_checkpoint(str(folder)) if folder.is_dir() else None


def trl_config(cfg: SFTRunConfig) -> Any:
    """The ``trl.SFTConfig`` of a run."""
    from trl import SFTConfig

    from clinical_gym.trainers.common.optim import SCHEDULE_NAMES

    return SFTConfig(
        output_dir=str(Path(cfg.output_dir) / CHECKPOINTS_DIR),
        num_train_epochs=cfg.epochs if cfg.epochs > 0 else 1.0, max_steps=-1 if cfg.epochs > 0 else cfg.total_steps,
        per_device_train_batch_size=cfg.micro_batch_size, gradient_accumulation_steps=cfg.gradient_accumulation_steps,
        learning_rate=cfg.learning_rate, lr_scheduler_type=SCHEDULE_NAMES[cfg.lr_scheduler],
        warmup_steps=cfg.warmup_steps, weight_decay=cfg.weight_decay, adam_beta1=cfg.adam_beta1,
        adam_beta2=cfg.adam_beta2, adam_epsilon=cfg.adam_epsilon, max_grad_norm=cfg.max_grad_norm, optim="adamw_torch",
        bf16=cfg.mixed_precision == "bf16", fp16=cfg.mixed_precision == "fp16", use_cpu=cfg.cpu,
        activation_checkpointing=cfg.gradient_checkpointing, save_strategy="steps", save_steps=cfg.save_every,
        save_total_limit=cfg.keep_checkpoints, logging_strategy="steps", logging_steps=1,
        report_to=trackers_for(cfg.report_to) or "none", seed=cfg.seed, data_seed=cfg.seed,
        max_length=cfg.max_episode_tokens, disable_tqdm=not cfg.progress, dataloader_num_workers=0)


def metrics_callback(output_dir: str | Path) -> Any:
    """A ``TrainerCallback`` that writes each logged step to ``<output_dir>/metrics.jsonl`` (``MetricsLog``: on
    resume, rows after the resumed step are dropped first)."""
    from transformers import TrainerCallback

    class JsonlMetrics(TrainerCallback):
        def __init__(self) -> None:
            self.log: MetricsLog | None = None
            self.last: dict[str, float] = {}

        def on_train_begin(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
            writer = SimpleNamespace(is_main_process=state.is_world_process_zero, trackers=[])
            self.log = MetricsLog(output_dir, writer, state.max_steps, state.global_step, progress=False)

        def on_log(self, args: Any, state: Any, control: Any, logs: dict[str, Any] | None = None,
                   **kwargs: Any) -> None:
            if self.log is None or not logs or "loss" not in logs:
                return  # the end-of-training summary (train_runtime, ...) is not a step
            self.last = {METRIC_NAMES.get(k, f"sft/{k}"): number for k, v in logs.items()
                         if (number := _number(v)) is not None}
            self.log.log(state.global_step, self.last)

    return JsonlMetrics()


def _number(value: Any) -> float | None:
    try:
        return float(value)
    except (TypeError, ValueError):
        return None


def save_model_folder(model: Any, tokenizer: Any, folder: Path) -> Path:
    """The trained weights as a plain model folder (a LoRA adapter merged in), with the tokenizer; written in a
    temporary folder renamed into place, so an interrupted save never leaves a half-written model."""
    merged = model.merge_and_unload() if hasattr(model, "peft_config") else model
    tmp = folder.with_name(f".tmp-{folder.name}")
    shutil.rmtree(tmp, ignore_errors=True)
    merged.save_pretrained(str(tmp))
    tokenizer.save_pretrained(str(tmp))
    if folder.exists():
        shutil.rmtree(folder)
    os.replace(tmp, folder)
    return folder


# TRL's fused log-probability kernel (trl.kernels.chunked_logprob) projects TOKEN_CHUNK_SIZE = 4,096 positions at a
# time onto a 32,768-entry slice of the vocabulary in float32, 512 MB a tile with several alive at once, for every
# position (it skips unlabelled ones only with Triton). Each position's row is computed on its own, so a smaller tile
# gives the same log-probabilities; on the CPU SFT uses 512: SmolLM2 LoRA SFT on MedicalQA expert conversations at
# 1,024 tokens (micro-batch 4, activations recomputed) peaked at 3.55 GB with it and passed 6 GB without (issue 21's
# efficacy worker was OOM-killed at 12 GB before activations were recomputed; measured with an ad hoc script).
CPU_TOKEN_TILE = 512


@contextlib.contextmanager
def token_tile(size: int | None) -> Iterator[None]:
    """TRL's fused kernel works ``size`` positions at a time inside the block (None, or no such kernel in the
    installed TRL: unchanged); the setting is TRL's module-wide, so it is put back on the way out."""
    try:
        from trl.kernels import chunked_logprob
    except ImportError:  # pragma: no cover - TRL releases without the fused kernel
        chunked_logprob = None
    if size is None or chunked_logprob is None or not hasattr(chunked_logprob, "TOKEN_CHUNK_SIZE"):
        yield
        return
    before = chunked_logprob.TOKEN_CHUNK_SIZE
    chunked_logprob.TOKEN_CHUNK_SIZE = min(before, size)
    try:
        yield
    finally:
        chunked_logprob.TOKEN_CHUNK_SIZE = before


def main(cfg: SFTRunConfig, *, model: Any | None = None, tokenizer: Any | None = None) -> dict[str, float]:
    """Fine-tune on ``cfg.dataset`` and return the last step's metrics; the merged model is written to
    ``<output_dir>/model``. ``model`` and ``tokenizer`` replace loading ``cfg.model`` (a model without a LoRA
    adapter gets one when ``cfg.lora_r > 0``). Settings and data are checked before anything loads."""
    runtime.check_run(cfg, custom_model=model is not None)
    examples = check_data(cfg)
    if (model is None) != (tokenizer is None):
        raise ValueError("pass model and tokenizer together, or neither")
    import torch
    from datasets import Dataset
    from transformers import set_seed
    from trl import SFTTrainer

    from clinical_gym.trainers.common.model import load_model, prepare_model
    from clinical_gym.trainers.sft.masks import tokenized_rows

    if cfg.torch_threads:
        torch.set_num_threads(cfg.torch_threads)
    set_seed(cfg.seed)

    # -- policy: the base model (GGUF weights made plain) with a LoRA adapter ----------------------------------------
    if model is None:
        model, tokenizer = load_model(cfg)
    model = prepare_model(plain_weights(model), dataclasses.replace(cfg, gradient_checkpointing=False))

    # -- data: token ids with the assistant mask (TRL turns mask 0 into label -100) -----------------------------------
    rows = tokenized_rows((([m.model_dump() for m in e.messages], e.tools) for e in examples), tokenizer)
    dataset = Dataset.from_list(rows)

    # -- train (resuming from the newest checkpoint when asked) ------------------------------------------------------
    metrics = metrics_callback(cfg.output_dir)
    trainer = SFTTrainer(model=model, args=trl_config(cfg), train_dataset=dataset, processing_class=tokenizer,
                         callbacks=[metrics])
    resume_from = latest_trainer_checkpoint(cfg.output_dir) if cfg.resume else None
    if resume_from is not None:
        print(f"resuming from {resume_from}", flush=True)
    on_cpu = next(trainer.model.parameters()).device.type == "cpu"
    with token_tile(CPU_TOKEN_TILE if on_cpu else None):
        trainer.train(resume_from_checkpoint=resume_from)
    if trainer.is_world_process_zero():
        save_model_folder(trainer.model, tokenizer, Path(cfg.output_dir) / MODEL_DIR)
    return metrics.last


def cli(argv: Sequence[str] | None = None) -> int:
    """``python -m clinical_gym.trainers.sft.train``: flags from ``SFTRunConfig``; bad settings exit 2 with one line."""
    parser = argparse.ArgumentParser(prog="python -m clinical_gym.trainers.sft.train", description=__doc__.splitlines()[0])
    add_config_arguments(parser, SFTRunConfig)
    try:
        cfg = config_from_args(SFTRunConfig, parser.parse_args(argv))
        check_sft_run(cfg)
    except (ValueError, TypeError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    main(cfg)
    return 0


if __name__ == "__main__":
    raise SystemExit(cli())
