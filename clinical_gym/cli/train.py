"""``clinical-gym train ALGORITHM --env ID --model PATH [--lora-r R] [--config FILE.yaml] [--resume] ...``

Flags are generated from each algorithm's config dataclass. Settings, the environment id and arguments, the model
path and the generation engine are checked before any model loads; a problem is a one-line error (exit 2).
Adding an algorithm is one row of ``ALGORITHMS``.
"""

from __future__ import annotations

import argparse
import importlib
from dataclasses import dataclass
from typing import Any

from clinical_gym.cli.errors import CLIError


@dataclass(frozen=True)
class Algorithm:
    """One ``clinical-gym train`` subcommand: its config class and ``main(cfg)`` as ``module:name`` strings, so
    that nothing heavy is imported until the subcommand runs."""

    name: str
    config: str
    main: str
    help: str
    description: str
    check: str = "clinical_gym.trainers.common.runtime:check_run"
    """what runs before any model loads: ``check(cfg)`` raises ValueError with one line"""


ALGORITHMS: tuple[Algorithm, ...] = (
    Algorithm("grpo", "clinical_gym.trainers.grpo.config:GRPOConfig", "clinical_gym.trainers.grpo.train:main",
              "GRPO with clip-higher, k3 KL and dynamic sampling",
              "Train with GRPO (trainers/grpo/README.md). Flags override --config."),
    Algorithm("ppo", "clinical_gym.trainers.ppo.config:PPOConfig", "clinical_gym.trainers.ppo.train:main",
              "PPO with a value head, GAE over generated tokens and clipped value loss",
              "Train with PPO (trainers/ppo/README.md). Flags override --config."),
    Algorithm("ttopd", "clinical_gym.trainers.ttopd.config:TTOPDConfig", "clinical_gym.trainers.ttopd.train:main",
              "TT-OPD: GRPO on a cosine length reward + turn-level KL to an EMA teacher with outcome hints",
              "Train with TT-OPD (trainers/ttopd/README.md). Flags override --config."),
    Algorithm("sft", "clinical_gym.trainers.sft.config:SFTRunConfig", "clinical_gym.trainers.sft.train:main",
              "supervised fine-tuning on expert conversations (the cold start before RL), LoRA, assistant-only loss",
              "Fine-tune on expert data from 'clinical-gym data expert' (trainers/sft/README.md). Flags override "
              "--config.", check="clinical_gym.trainers.sft.train:check_sft_run"),
)


def _load(target: str) -> Any:
    module, _, name = target.partition(":")
    return getattr(importlib.import_module(module), name)


def _run(algorithm: Algorithm, args: argparse.Namespace) -> int:
    from clinical_gym.trainers.common.config_cli import config_from_args

    try:
        cfg = config_from_args(_load(algorithm.config), args)
        _load(algorithm.check)(cfg)
    except (ValueError, TypeError) as e:
        raise CLIError(str(e)) from None
    _load(algorithm.main)(cfg)
    return 0


def cmd_choose(args: argparse.Namespace) -> int:
    raise CLIError(f"choose a training algorithm: {', '.join(a.name for a in ALGORITHMS)}")


def add_commands(sub: argparse._SubParsersAction) -> None:
    from clinical_gym.trainers.common.config_cli import add_config_arguments

    train = sub.add_parser("train", help="train a policy on an environment (reinforcement or supervised learning)")
    train.set_defaults(func=cmd_choose)
    algorithms = train.add_subparsers(dest="algorithm", parser_class=type(train))
    for algorithm in ALGORITHMS:
        parser = algorithms.add_parser(algorithm.name, help=algorithm.help, description=algorithm.description)
        add_config_arguments(parser, _load(algorithm.config))
        parser.set_defaults(func=lambda args, a=algorithm: _run(a, args))
