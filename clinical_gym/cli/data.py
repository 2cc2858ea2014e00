"""``clinical-gym data expert``: expert conversations for the SFT cold start, from an agent playing an environment
or from recorded dialogues, written as chat JSONL and a Hugging Face dataset (``clinical_gym.trainers.sft.data``).

    clinical-gym data expert --env ID --agent oracle|baseline|checklist|openai:MODEL|checkpoint:PATH|...
                             [--episodes N] [--cases SET] [--split train] [--min-reward R]
                             [--rationale fill|template|source] [--seed S] --out DIR
    clinical-gym data expert --dialogues FILE.json [--env ClinicalInquiry-v1] [--min-reward R] --out DIR

Agent specs are the benchmark's (``clinical_gym.benchmarks.agents``); the data building lives in ``clinical_gym.trainers.sft.data``.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

import clinical_gym
from clinical_gym.cli.arguments import json_object
from clinical_gym.cli.errors import CLIError

DEFAULT_ENV = "ClinicalInquiry-v1"


def agent_examples(args: argparse.Namespace) -> tuple[list[Any], Any, dict[str, Any]]:
    """Examples, their report and the summary settings from an agent playing ``args.env``."""
    from clinical_gym.benchmarks.agents import AgentSettings, parse_agent_specs
    from clinical_gym.benchmarks.guard import BenchEnv, GuardedPolicy
    from clinical_gym.benchmarks.plan import plan_env
    from clinical_gym.rollout import EpisodeSpec, RolloutLimits
    from clinical_gym.trainers.sft.data import DataReport, collect_examples

    specs = parse_agent_specs(args.agent)
    if len(specs) != 1:
        raise ValueError("give one agent (--agent SPEC)")
    spec = specs[0]
    from clinical_gym.cases.loading import is_own_data

    split = args.split or ("all" if is_own_data(args.cases) or is_own_data(args.tasks) else "train")
    plan = plan_env(args.env, cases=args.cases, tasks=args.tasks, split=None if split == "all" else split,
                    episodes=args.episodes, seed=args.seed, env_kwargs=args.env_kwargs)
    agent = spec.build(plan.family, AgentSettings(args.seed, args.temperature, args.base_url, args.base_model))
    rationale = args.rationale or ("template" if agent.privileged else "fill")
    policy = GuardedPolicy(agent.policy, args.timeout, None)
    examples, report = [], DataReport()
    bar = _progress(plan.episodes, not args.no_progress)
    for start in range(0, plan.episodes, args.batch_size):
        chunk = range(start, min(start + args.batch_size, plan.episodes))
        episodes = [EpisodeSpec(seed=plan.seed_of(k), options={"case_id": plan.case_of(k)}, group=k) for k in chunk]
        found, part = collect_examples(
            policy, lambda: BenchEnv(plan.make(), agent.on_reset), episodes, env_id=args.env,
            source=f"agent:{spec.label}", min_reward=args.min_reward, rationale=rationale,
            max_recommendation_words=args.max_recommendation_words, num_envs=len(episodes),
            limits=RolloutLimits(args.max_turn_tokens, 1_000_000), seed=args.seed + start)
        examples += found
        report.merge(part)
        if bar is not None:
            bar.update(len(episodes))
    if bar is not None:
        bar.close()
    settings = {"agent": spec.label, "agent_kind": agent.kind, "episodes": plan.episodes, "cases": args.cases,
                "split": split, "seed": args.seed, "rationale": rationale}
    return examples, report, settings


def dialogue_settings(args: argparse.Namespace) -> dict[str, Any]:
    return {"dialogues": str(args.dialogues), "rationale": args.rationale or "fill"}


def shaping(args: argparse.Namespace) -> dict[str, Any]:
    return {"max_recommendation_words": args.max_recommendation_words}


def cmd_expert(args: argparse.Namespace) -> int:
    if (args.agent is None) == (args.dialogues is None):
        raise CLIError("give either --agent SPEC (an agent plays the environment) or --dialogues FILE")
    if (args.episodes is not None and args.episodes < 1) or args.batch_size < 1:
        raise CLIError("--episodes and --batch-size must be at least 1")
    if args.max_recommendation_words is not None and args.max_recommendation_words < 1:
        raise CLIError("--max-recommendation-words must be at least 1")
    try:
        from clinical_gym.trainers.sft.data import dialogue_examples, save_examples

        if args.env not in clinical_gym.env_ids():
            raise ValueError(f"unknown environment {args.env!r}; registered: {', '.join(clinical_gym.env_ids())}")
        if args.dialogues is not None:
            if not Path(args.dialogues).is_file():
                raise ValueError(f"no dialogue file at {args.dialogues}")
            examples, report = dialogue_examples(args.dialogues, env_id=args.env, env_kwargs=args.env_kwargs,
                                                 min_reward=args.min_reward, rationale=args.rationale or "fill",
                                                 max_recommendation_words=args.max_recommendation_words)
            settings = dialogue_settings(args)
        else:
            examples, report, settings = agent_examples(args)
        if not examples:
            raise ValueError(f"no conversation passed the filters ({report.describe()})")
        out = save_examples(examples, args.out, {"env": args.env, "min_reward": args.min_reward, **settings,
                                                **shaping(args),
                                                "dropped": dict(report.dropped)})
    except (ValueError, TypeError, OSError, ImportError, KeyError) as e:
        raise CLIError(str(e).splitlines()[0] if str(e) else type(e).__name__) from None
    print(f"{args.env}: {report.describe()}")
    print(f"wrote {out} (conversations.jsonl, dataset/, summary.json)")
    return 0


def cmd_choose(args: argparse.Namespace) -> int:
    raise CLIError("choose a data command: expert")


def _progress(total: int, enabled: bool) -> Any:
    if not enabled or total == 0:
        return None
    from tqdm.auto import tqdm

    return tqdm(total=total, desc="expert", unit="episode", dynamic_ncols=True)


def add_commands(sub: argparse._SubParsersAction) -> None:
    data = sub.add_parser("data", help="build training data (expert conversations for SFT)")
    actions = data.add_subparsers(dest="data_action", parser_class=type(data))
    data.set_defaults(func=cmd_choose)
    expert = actions.add_parser(
        "expert", help="expert conversations from an agent or recorded dialogues (chat JSONL + HF dataset)",
        description="Expert conversations for supervised fine-tuning: an agent plays the environment (or recorded "
                    "MTMedDialog dialogues are replayed in it); episodes the environment did not finish, with an "
                    "action it rejected, or below --min-reward are dropped. Writes --out/conversations.jsonl, "
                    "--out/dataset/ (datasets.load_from_disk) and --out/summary.json.")
    expert.add_argument("--env", default=DEFAULT_ENV, help=f"environment id (default {DEFAULT_ENV})")
    expert.add_argument("--agent", help="the expert: oracle, baseline (the env's rule-based agent), checklist, "
                                        "test-orderer, protocol, openai:MODEL, transformers:PATH, checkpoint:PATH")
    expert.add_argument("--dialogues", help="MTMedDialog JSON/JSONL file; its doctor turns become the replies")
    expert.add_argument("--episodes", type=int, help="episodes to play (default: each case or task once)")
    expert.add_argument("--cases", help="case set or file for ClinicalInquiry/DiagnosticWorkup, e.g. library or "
                                        "generated:common:N (default: the library)")
    expert.add_argument("--tasks", help="task folder (tasks.json with its db.json) or task file for the tool domains "
                                        "(default: each domain's own)")
    expert.add_argument("--split", choices=("train", "test", "all"),
                        help="case split (default: train of bundled and generated sets, keeping their test split for "
                             "evaluation; all of your own file)")
    expert.add_argument("--min-reward", type=float, help="keep episodes whose total reward is at least this")
    expert.add_argument("--rationale", choices=("fill", "template", "source"),
                        help="reasoning in the replies: fill (keep the source's <think>, template the missing ones; "
                             "the default), template (templated everywhere; the default for the oracle, whose "
                             "reasoning is its ground-truth access), source (as the source wrote them)")
    expert.add_argument("--max-recommendation-words", type=int,
                        help="ClinicalInquiry: cut each diagnosis reply's recommendation to an excerpt of at most "
                             "this many words (for short generation budgets; default: keep it whole)")
    expert.add_argument("--seed", type=int, default=0, help="decides the episodes and sampling (default 0)")
    expert.add_argument("--env-kwargs", type=json_object, default={}, help="gym.make arguments, a JSON object")
    expert.add_argument("--batch-size", type=int, default=16, help="episodes played at once (default 16)")
    expert.add_argument("--max-turn-tokens", type=int, default=1024, help="model agents: tokens per reply")
    expert.add_argument("--temperature", type=float, default=0.0, help="model agents: sampling temperature")
    expert.add_argument("--timeout", type=float, default=600.0, help="seconds one generation call may take")
    expert.add_argument("--base-url", help="endpoint of openai: agents (default: OPENAI_BASE_URL)")
    expert.add_argument("--base-model", help="base model of a LoRA checkpoint agent")
    expert.add_argument("--no-progress", action="store_true", help="no progress bar")
    expert.add_argument("--out", required=True, help="output folder")
    expert.set_defaults(func=cmd_expert)
