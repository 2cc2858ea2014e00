"""``clinical-gym train ALGORITHM --env ID --model PATH [--lora-r R] [--config FILE.yaml] [--resume] ...``
``clinical-gym train ALGORITHM --recipe NAME|PATH [--role ROLE=SPEC] [--print-config] --model PATH``

Flags are generated from each algorithm's config dataclass. ``--recipe`` starts from a paper's settings
(``clinical_gym.recipes``: defaults < recipe < ``--config`` < flags), ``--role`` gives an LLM actor or judge of the
recipe its endpoint, and ``--print-config`` prints the resolved settings as YAML (a ``--config`` file) and exits.
Settings, the environment id and arguments, the model path and the generation engine are checked before any model
loads; a problem is a one-line error (exit 2).
Adding an algorithm is one row of ``ALGORITHMS``.
"""

from __future__ import annotations

import argparse
import importlib
from dataclasses import dataclass
from typing import Any

from clinical_gym.cli.errors import CLIError
from clinical_gym.cli.recipe_flags import add_recipe_arguments, announce_roles, recipe_comments, recipe_from_args


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


def config_class(name: str) -> type:
    """The config dataclass of the training algorithm ``name``."""
    algorithm = next((a for a in ALGORITHMS if a.name == name), None)
    if algorithm is None:
        raise ValueError(f"unknown training algorithm {name!r}; choose one of {', '.join(a.name for a in ALGORITHMS)}")
    return _load(algorithm.config)


def _run(algorithm: Algorithm, args: argparse.Namespace) -> int:
    from clinical_gym.trainers.common.config_cli import config_values

    try:
        recipe, roles = recipe_from_args(args)
        base = recipe.train_settings(algorithm.name) if recipe is not None else None
        cls = _load(algorithm.config)
        values = config_values(cls, args, base, source=f"recipe {recipe.name}" if recipe else "recipe")
        if roles:
            from clinical_gym.recipes import role_env_kwargs

            values["env_kwargs"] = {**values.get("env_kwargs", {}), **role_env_kwargs(recipe, roles)}
        if args.print_config:
            print(_config_yaml(cls, values, recipe, roles, algorithm.name))
            return 0
        cfg = cls(**values)
        _load(algorithm.check)(cfg)
    except (ValueError, TypeError) as e:
        raise CLIError(str(e).splitlines()[0]) from None
    announce_roles(recipe, roles)
    _load(algorithm.main)(cfg)
    return 0


def _config_yaml(cls: type, values: dict[str, Any], recipe: Any, roles: dict[str, str], name: str) -> str:
    """The resolved settings as a YAML ``--config`` file, the recipe and its roles in comments at the top; the
    settings are checked first (a missing model is a placeholder only for the check)."""
    import dataclasses

    import yaml

    cfg = cls(**{**values, "model": values.get("model") or "MODEL"})
    settings = dataclasses.asdict(cfg)
    settings["model"] = values.get("model", "")
    lines = [f"# clinical-gym train {name}: resolved settings (defaults < recipe < --config < flags)"]
    lines += recipe_comments(recipe, roles)
    if not settings["model"]:
        lines.append("# model: required (--model PATH)")
    return "\n".join(lines) + "\n" + yaml.safe_dump(settings, sort_keys=False, allow_unicode=True, width=120)


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
        add_recipe_arguments(parser, "train")
        parser.set_defaults(func=lambda args, a=algorithm: _run(a, args))

