"""Paper recipes: each source paper's environment, reward, trainer and evaluation settings in one YAML file that a
user can copy and edit (``clinical-gym train ALGO --recipe NAME|PATH``, ``clinical-gym bench --recipe NAME|PATH``,
``--print-config`` on both shows the resolved settings).

A recipe file holds:

* ``name``, ``title``, ``paper`` (the citation) and ``source`` (where in the paper the values are);
* ``env``: the environment id the recipe trains and evaluates on;
* ``roles``: the LLM actors and judges the paper used, each with the environment argument that takes its endpoint
  (``env_kwarg``; or ``bench_judge: true`` for the benchmark's diagnosis judge), the paper's model and the rule
  stand-in used when no endpoint is given (``--role NAME=openai:MODEL`` or ``transformers:PATH`` gives one);
* ``train``: per algorithm (``grpo``, ``ttopd``, ...), the trainer config's fields (``env_kwargs`` included);
* ``bench``: ``BenchConfig`` fields of the paper's evaluation protocol (``env_kwargs`` included);
* ``settings``: the rows of ``docs/papers.md``: each setting with the paper's value, ours (``ours``: a dotted path
  into the resolved recipe, see ``resolved_value``; or ``ours_text``), whether they match, and why not.

Settings resolve as: the config's defaults < the recipe < ``--config FILE.yaml`` < flags; ``env_kwargs`` are
merged key by key in the same order. Loading needs PyYAML (in the ``[train]`` and ``[bench]`` extras).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

RECIPES = ("doctoragent-rl", "doctor-r1", "diaggym", "healthcare-gym-ttopd")
"""The bundled recipes, one per source paper."""
TOP_KEYS = {"name", "title", "paper", "source", "env", "roles", "train", "bench", "settings", "notes"}
ROLE_KEYS = {"paper", "env_kwarg", "bench_judge", "stand_in"}
SETTING_KEYS = {"setting", "paper", "ours", "ours_text", "match", "note"}
MATCHES = ("yes", "no", "partly", "stand-in", "not given")


@dataclass(frozen=True)
class Role:
    """An LLM actor or judge of the paper: where its endpoint goes and what stands in without one."""

    name: str
    paper: str
    stand_in: str
    env_kwarg: str | None = None
    bench_judge: bool = False


@dataclass(frozen=True)
class Setting:
    """One row of the paper page: the paper's value, ours (a path into the resolved recipe, or text), the match."""

    setting: str
    paper: Any
    ours: str | None = None
    ours_text: str | None = None
    match: str | None = None
    note: str = ""


@dataclass(frozen=True)
class Recipe:
    name: str
    title: str
    paper: str
    source: str
    env: str
    roles: tuple[Role, ...]
    train: Mapping[str, Mapping[str, Any]]
    bench: Mapping[str, Any]
    settings: tuple[Setting, ...]
    notes: str = ""
    path: str = field(default="", compare=False)

    def role(self, name: str) -> Role:
        found = next((r for r in self.roles if r.name == name), None)
        if found is None:
            raise ValueError(f"recipe {self.name} has no role {name!r}; its roles: "
                             f"{', '.join(r.name for r in self.roles) or 'none'}")
        return found

    def train_settings(self, algorithm: str) -> dict[str, Any]:
        """The trainer settings of ``algorithm`` (``env`` filled in from the recipe); ValueError naming the
        algorithms the recipe has when it has none for this one."""
        if algorithm not in self.train:
            raise ValueError(f"recipe {self.name} has no settings for 'train {algorithm}'; it has: "
                             f"{', '.join(self.train) or 'none'} (clinical-gym train {next(iter(self.train), 'ALGO')}"
                             f" --recipe {self.name})")
        return {"env": self.env, **_copy(self.train[algorithm])}

    def bench_settings(self) -> dict[str, Any]:
        """The benchmark settings (``BenchConfig`` fields; ``envs`` from the recipe's environment)."""
        return {"envs": self.env, **_copy(self.bench)}


def load_recipe(name_or_path: str | Path) -> Recipe:
    """A bundled recipe by name, or a recipe file; ValueError (one line) for an unknown name or a bad file."""
    import yaml

    text_name = str(name_or_path)
    if text_name in RECIPES:
        source = resources.files(__name__).joinpath(f"{text_name}.yaml")
        where = f"the bundled recipe {text_name}"
    else:
        source = Path(text_name).expanduser()
        where = str(source)
        if not source.is_file():
            raise ValueError(f"no recipe {text_name!r}: give one of {', '.join(RECIPES)} or a recipe file (YAML)")
    try:
        data = yaml.safe_load(source.read_text(encoding="utf-8"))
    except yaml.YAMLError as e:
        raise ValueError(f"{where} is not valid YAML: {str(e).splitlines()[0]}") from None
    return parse_recipe(data, where)


def parse_recipe(data: Any, where: str = "recipe") -> Recipe:
    """A ``Recipe`` from the mapping a recipe file holds; ValueError naming what is wrong."""
    if not isinstance(data, dict):
        raise ValueError(f"{where} must hold a mapping, not {type(data).__name__}")
    unknown = sorted(set(data) - TOP_KEYS)
    if unknown:
        raise ValueError(f"{where}: unknown key(s) {', '.join(unknown)}; known: {', '.join(sorted(TOP_KEYS))}")
    for key in ("name", "env"):
        if not isinstance(data.get(key), str) or not data[key]:
            raise ValueError(f"{where}: '{key}' must be a non-empty string")
    roles = []
    for name, spec in (data.get("roles") or {}).items():
        if not isinstance(spec, dict) or set(spec) - ROLE_KEYS or "stand_in" not in spec:
            raise ValueError(f"{where}: role {name!r} needs stand_in (and paper, env_kwarg or bench_judge), "
                             f"known keys: {', '.join(sorted(ROLE_KEYS))}")
        if not spec.get("env_kwarg") and not spec.get("bench_judge"):
            raise ValueError(f"{where}: role {name!r} needs env_kwarg (the environment argument its endpoint fills) "
                             "or bench_judge: true")
        roles.append(Role(name=str(name), paper=str(spec.get("paper", "")), stand_in=str(spec["stand_in"]),
                          env_kwarg=spec.get("env_kwarg"), bench_judge=bool(spec.get("bench_judge", False))))
    train = data.get("train") or {}
    if not isinstance(train, dict) or not all(isinstance(v, dict) for v in train.values()):
        raise ValueError(f"{where}: 'train' maps algorithm names to mappings of trainer settings")
    bench = data.get("bench") or {}
    if not isinstance(bench, dict):
        raise ValueError(f"{where}: 'bench' must be a mapping of benchmark settings")
    settings = []
    for i, row in enumerate(data.get("settings") or [], 1):
        if not isinstance(row, dict) or set(row) - SETTING_KEYS or "setting" not in row or "paper" not in row:
            raise ValueError(f"{where}: settings row {i} needs 'setting' and 'paper' (known keys: "
                             f"{', '.join(sorted(SETTING_KEYS))})")
        if (row.get("ours") is None) == (row.get("ours_text") is None):
            raise ValueError(f"{where}: settings row {i} ({row['setting']}) needs exactly one of ours, ours_text")
        if row.get("match") is not None and row["match"] not in MATCHES:
            raise ValueError(f"{where}: settings row {i}: match must be one of {', '.join(MATCHES)}")
        settings.append(Setting(**row))
    return Recipe(name=data["name"], title=str(data.get("title", data["name"])), paper=str(data.get("paper", "")),
                  source=str(data.get("source", "")), env=data["env"], roles=tuple(roles), train=train, bench=bench,
                  settings=tuple(settings), notes=str(data.get("notes", "")), path=where)


def parse_roles(items: list[str] | None) -> dict[str, str]:
    """``--role NAME=SPEC`` flags as a mapping; ValueError for an item without ``=``."""
    found: dict[str, str] = {}
    for item in items or ():
        name, sep, spec = item.partition("=")
        if not sep or not name.strip() or not spec.strip():
            raise ValueError(f"--role takes NAME=SPEC (e.g. patient=openai:MODEL), got {item!r}")
        found[name.strip()] = spec.strip()
    return found


def role_env_kwargs(recipe: Recipe | None, roles: Mapping[str, str]) -> dict[str, str]:
    """The environment arguments the given role endpoints fill (roles that are the benchmark's judge excluded)."""
    if roles and recipe is None:
        raise ValueError("--role needs --recipe (the recipe says which environment argument each role fills)")
    return {recipe.role(name).env_kwarg: spec for name, spec in roles.items() if recipe.role(name).env_kwarg}


def merge_settings(*layers: Mapping[str, Any]) -> dict[str, Any]:
    """Later layers override earlier ones; ``env_kwargs`` (and ``reward_config`` inside it) merge key by key."""
    merged: dict[str, Any] = {}
    for layer in layers:
        for key, value in layer.items():
            if key == "env_kwargs" and isinstance(value, Mapping) and isinstance(merged.get(key), Mapping):
                merged[key] = {**merged[key], **value}
            else:
                merged[key] = value
    return merged


# -- the paper page -----------------------------------------------------------------------------------------------

def resolved(recipe: Recipe) -> dict[str, Any]:
    """Every value a settings row may point at: ``train.<algo>.<field>`` (the trainer config with its defaults),
    ``bench.<field>`` (the benchmark config with its defaults), ``reward.<field>`` (the reward values of the training
    environment), ``experience.<field>`` (the experience injection settings, when the recipe uses one)."""
    from dataclasses import asdict, fields as dc_fields

    from clinical_gym.benchmarks.runner import BenchConfig
    from clinical_gym.cli.train import config_class
    from clinical_gym.trainers.common.config_cli import settings_from_mapping

    train: dict[str, Any] = {}
    for name in recipe.train:
        cls = config_class(name)
        values = settings_from_mapping(recipe.train_settings(name), cls, f"recipe {recipe.name}")
        train[name] = asdict(cls(**{"model": "MODEL", **values}))
    bench_values = recipe.bench_settings()
    bench_fields = {f.name for f in dc_fields(BenchConfig)}
    unknown = sorted(set(bench_values) - bench_fields)
    if unknown:
        raise ValueError(f"recipe {recipe.name}: unknown bench setting(s) {', '.join(unknown)}")
    bench = asdict(BenchConfig(**{"agents": "", "out": "OUT", **bench_values}))
    env_kwargs = next(iter(train.values()), {}).get("env_kwargs") or bench.get("env_kwargs") or {}
    return {"train": train, "bench": bench, "reward": reward_values(recipe.env, env_kwargs),
            "experience": experience_values(env_kwargs)}


def resolved_value(values: Mapping[str, Any], path: str) -> Any:
    """The value at a dotted ``path`` of ``resolved``; ValueError naming the first missing part."""
    current: Any = values
    for part in path.split("."):
        if not isinstance(current, Mapping) or part not in current:
            raise ValueError(f"no value at {path!r} (no {part!r})")
        current = current[part]
    return current


def reward_values(env_id: str, env_kwargs: Mapping[str, Any]) -> dict[str, Any]:
    """The reward values an environment uses with ``env_kwargs`` (its preset with ``reward_config`` applied)."""
    from dataclasses import asdict, fields, replace

    from clinical_gym.registration import env_family

    family = env_family(env_id)
    config = dict(env_kwargs.get("reward_config") or {})
    if family == "inquiry":
        from clinical_gym.domains.inquiry.presets import make_preset

        preset = make_preset(env_kwargs.get("reward", "doctoragent_rl"), config)
        values = preset.values if hasattr(preset, "values") else preset.penalties
        return {**asdict(values), "strict_format": preset.strict_format, "one_question_rule": preset.one_question_rule}
    if family == "workup":
        from clinical_gym.domains.workup.environment import DiagGymReward

        return asdict(replace(DiagGymReward(), **config))
    from clinical_gym.rewards.five_d import FiveDConfig

    cfg = FiveDConfig.from_dict(config)
    return {f.name: (dict(v) if isinstance(v := getattr(cfg, f.name), Mapping) else v) for f in fields(cfg)}


def experience_values(env_kwargs: Mapping[str, Any]) -> dict[str, Any]:
    if env_kwargs.get("experience") is None:
        return {}
    from dataclasses import asdict

    from clinical_gym.experience.injector import InjectionConfig

    return asdict(InjectionConfig(**(env_kwargs.get("experience_config") or {})))


def _copy(value: Any) -> Any:
    if isinstance(value, Mapping):
        return {k: _copy(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_copy(v) for v in value]
    return value
