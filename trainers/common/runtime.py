"""What a run needs before training starts: checks that fail fast (before any model loads), the environment
factory, and the accelerate ``Accelerator``. Checks import no torch."""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from dataclasses import asdict
from typing import Any

import gymnasium as gym

import clinical_gym  # noqa: F401  (registers the environment ids)
from clinical_gym.rollout.selection import choose_engine
from clinical_gym.trainers.common.config import TrainerConfig
from clinical_gym.trainers.common.metrics_log import trackers_for

HUB_ID = re.compile(r"^[A-Za-z0-9][\w.-]*/[\w.-]+$")


def check_run(cfg: TrainerConfig, *, custom_env: bool = False, custom_model: bool = False) -> None:
    """Raise ``ValueError`` (one line) for an unknown environment id, environment arguments it rejects, a model
    path that does not exist, an unusable generation engine or missing trackers. ``custom_env`` /
    ``custom_model``: the caller supplies the environment factory / the model, so that part is not checked."""
    if not custom_env:
        check_env(cfg.env, cfg.env_kwargs)
    if not custom_model:
        check_model_path(cfg.model, cfg.gguf_file)
    choose_engine(cfg.generation_engine, mode=cfg.vllm_mode)
    trackers_for(cfg.report_to)


def check_env(env_id: str, env_kwargs: dict[str, Any]) -> None:
    """``env_id`` is registered and builds with ``env_kwargs`` (the environment is made once and closed)."""
    try:
        gym.spec(env_id)
    except (gym.error.Error, ModuleNotFoundError):
        raise ValueError(f"unknown environment {env_id!r}; registered clinical-gym ids: "
                         f"{', '.join(clinical_gym.env_ids())}") from None
    try:
        gym.make(env_id, **env_kwargs).close()
    except (TypeError, ValueError, OSError) as e:
        raise ValueError(f"{env_id} rejects env_kwargs {env_kwargs}: {e}") from None


def check_model_path(model: str, gguf_file: str | None) -> None:
    """``model`` is an existing path or looks like a hub id; ``gguf_file`` is in that folder."""
    if not (os.path.exists(model) or (HUB_ID.match(model) and not model.startswith("."))):
        raise ValueError(f"model not found: {model!r} is neither a folder nor a hub id")
    if gguf_file and os.path.isdir(model) and not os.path.isfile(os.path.join(model, gguf_file)):
        raise ValueError(f"gguf_file {gguf_file!r} is not in {model}")


def env_factory(env_id: str, env_kwargs: dict[str, Any]) -> Callable[[], gym.Env]:
    """A function that makes a fresh environment each call."""
    return lambda: gym.make(env_id, **env_kwargs)


make_env_factory = env_factory  # the name start_run uses (its argument shadows env_factory)


def make_accelerator(cfg: TrainerConfig) -> Any:
    """An ``Accelerator`` for the run: mixed precision, CPU if asked, trackers when installed."""
    from accelerate import Accelerator

    trackers = trackers_for(cfg.report_to)
    accelerator = Accelerator(cpu=cfg.cpu, mixed_precision=cfg.mixed_precision, log_with=trackers or None,
                              project_dir=cfg.output_dir)
    if trackers:
        hparams = {k: v for k, v in asdict(cfg).items() if isinstance(v, (bool, int, float, str))}
        accelerator.init_trackers(os.path.basename(os.path.abspath(cfg.output_dir)) or "run", config=hparams)
    return accelerator


def start_run(cfg: TrainerConfig, env_factory: Callable[[], gym.Env] | None, model: Any | None,
              tokenizer: Any | None) -> tuple[Any, Callable[[], gym.Env], Any]:
    """What every trainer does first: check the settings, set torch's threads, build the accelerator, seed, and
    make the environment factory and this process's case order. Returns ``(accelerator, make_env, sampler)``."""
    check_run(cfg, custom_env=env_factory is not None, custom_model=model is not None)
    if (model is None) != (tokenizer is None):
        raise ValueError("pass model and tokenizer together, or neither")
    import torch
    from accelerate.utils import set_seed

    from clinical_gym.trainers.common.sampler import CaseSampler

    if cfg.torch_threads:
        torch.set_num_threads(cfg.torch_threads)
    accelerator = make_accelerator(cfg)
    set_seed(cfg.seed)
    make_env = env_factory or make_env_factory(cfg.env, cfg.env_kwargs)
    probe = make_env()
    sampler = CaseSampler([c.id for c in probe.unwrapped.cases], cfg.seed, accelerator.process_index,
                          accelerator.num_processes)
    probe.close()
    return accelerator, make_env, sampler
