"""``clinical-gym train grpo --env ID --model PATH [--lora-r R] [--config FILE.yaml] [--resume] ...``

Flags are generated from the trainer's config dataclass. Settings, the environment id and arguments, the model path
and the generation engine are checked before any model loads; a problem is a one-line error (exit 2).
"""

from __future__ import annotations

import argparse

from clinical_gym.cli.errors import CLIError


def cmd_grpo(args: argparse.Namespace) -> int:
    from trainers.common.config_cli import config_from_args
    from trainers.common.runtime import check_run
    from trainers.grpo.config import GRPOConfig

    try:
        cfg = config_from_args(GRPOConfig, args)
        check_run(cfg)
    except (ValueError, TypeError) as e:
        raise CLIError(str(e)) from None
    from trainers.grpo.train import main

    main(cfg)
    return 0


def cmd_choose(args: argparse.Namespace) -> int:
    raise CLIError("choose a training algorithm: grpo")


def add_commands(sub: argparse._SubParsersAction) -> None:
    from trainers.common.config_cli import add_config_arguments
    from trainers.grpo.config import GRPOConfig

    train = sub.add_parser("train", help="train a policy on an environment with reinforcement learning")
    train.set_defaults(func=cmd_choose)
    algorithms = train.add_subparsers(dest="algorithm", parser_class=type(train))
    grpo = algorithms.add_parser("grpo", help="GRPO with clip-higher, k3 KL and dynamic sampling",
                                 description="Train with GRPO (trainers/grpo/README.md). Flags override --config.")
    add_config_arguments(grpo, GRPOConfig)
    grpo.set_defaults(func=cmd_grpo)
