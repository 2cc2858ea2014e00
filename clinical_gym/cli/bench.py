"""``clinical-gym bench``: run agents on environments and write results, a report and plots; ``bench show`` prints one
episode; ``bench compare`` compares two agents (of one run or two) on the episodes both played, paired, with
confidence intervals of the differences.

    clinical-gym bench --env ID[,ID...]|all --agent SPEC[,SPEC...] [--cases SET] [--tasks FILE] [--split test]
                       [--episodes N] [--trials K] [--seed S] [--patient MODEL] [--world-model MODEL]
                       [--judge MODEL] [--tool-calling native|text] --out DIR
    clinical-gym bench --recipe NAME|PATH [--role ROLE=SPEC] --agent SPEC --out DIR [--print-config] [flags]
    clinical-gym bench show DIR --episode K [--env ID] [--agent LABEL]
    clinical-gym bench compare DIR_A [DIR_B] [--agent-a LABEL] [--agent-b LABEL]

The benchmark code lives in the ``benchmarks`` package (imported when a command runs).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from clinical_gym.cli.arguments import json_object
from clinical_gym.cli.errors import CLIError, missing_extra, require
from clinical_gym.cli.recipe_flags import add_recipe_arguments, announce_roles, recipe_comments

AGENT_HELP = ("agent specs, comma-separated: random, baseline (each env's rule-based agent), oracle, "
              "transformers:PATH, openai:MODEL, checkpoint:PATH; LABEL=SPEC names one")


# BenchConfig field of each flag whose value a recipe may set (a flag left out is None and keeps the recipe's value)
FLAG_FIELDS = {"env": "envs", "agent": "agents", "out": "out", "cases": "cases", "tasks": "tasks", "split": "split",
               "episodes": "episodes", "trials": "trials", "seed": "seed", "batch_size": "batch_size",
               "timeout": "timeout_s", "max_turn_tokens": "max_turn_tokens", "max_episode_tokens": "max_episode_tokens",
               "temperature": "temperature", "env_kwargs": "env_kwargs", "judge": "judge",
               "judge_base_url": "judge_base_url", "base_url": "base_url", "base_model": "base_model",
               "patient": "patient", "patient_base_url": "patient_base_url", "world_model": "world_model",
               "world_model_base_url": "world_model_base_url", "tool_calling": "tool_calling"}


def bench_settings(args: argparse.Namespace) -> tuple[dict, object, dict]:
    """The ``BenchConfig`` fields a command line gives: the recipe's (``--recipe``), then the flags given, then the
    ``--role`` endpoints, the split defaulted (all of your own cases or tasks, else test); with the recipe and the
    roles."""
    from clinical_gym.cases.loading import is_own_data
    from clinical_gym.cli.recipe_flags import recipe_from_args
    from clinical_gym.recipes import merge_settings, role_env_kwargs

    recipe, roles = recipe_from_args(args)
    given = {field: getattr(args, flag) for flag, field in FLAG_FIELDS.items() if getattr(args, flag) is not None}
    values = merge_settings(recipe.bench_settings() if recipe is not None else {}, given)
    if roles:
        values = merge_settings(values, {"env_kwargs": role_env_kwargs(recipe, roles)})
        for name, spec in roles.items():
            if recipe.role(name).bench_judge:
                if spec.startswith("transformers:"):
                    raise ValueError(f"role {name} is the benchmark's judge, a served model: give openai:MODEL "
                                     "(its URL with --judge-base-url)")
                values["judge"] = spec.removeprefix("openai:")
    own = is_own_data(values.get("cases")) or is_own_data(values.get("tasks"))
    values["split"] = values.get("split") or ("all" if own else "test")
    values["progress"] = not args.no_progress
    return values, recipe, roles


def cmd_bench(args: argparse.Namespace) -> int:
    try:
        values, recipe, roles = bench_settings(args)
    except ValueError as e:
        raise CLIError(str(e).splitlines()[0]) from None
    if args.print_config:
        return _print_bench_config(values, recipe, roles)
    missing = [flag for flag, field in (("--env", "envs"), ("--agent", "agents"), ("--out", "out"))
               if not values.get(field)]
    if missing:
        raise CLIError(f"bench needs {', '.join(missing)} (or use 'bench show' / 'bench compare')")
    require("matplotlib", "clinical-gym bench")  # the report's plots: fail before any episode is played
    from clinical_gym.benchmarks.records import read_records
    from clinical_gym.benchmarks.report import PLOTS_DIR, overview_table, read_summary
    from clinical_gym.benchmarks.runner import BenchConfig, run_bench

    try:
        config = BenchConfig(**values)
        announce_roles(recipe, roles)
        report = run_bench(config)
    except ImportError as e:
        raise (missing_extra(e, "clinical-gym bench") or CLIError(str(e).splitlines()[0])) from None
    except (ValueError, TypeError, OSError) as e:
        raise CLIError(str(e).splitlines()[0] if str(e) else type(e).__name__) from None
    print(overview_table(read_summary(report.parent)))
    print(f"\nreport: {report}\nplots:  {report.parent / PLOTS_DIR}")
    return _failure_count(read_records(report.parent))


def _print_bench_config(values: dict, recipe: object, roles: dict) -> int:
    """Print the resolved benchmark settings as YAML (the recipe and its roles in comments) and return 0."""
    import dataclasses

    import yaml

    from clinical_gym.benchmarks.runner import BenchConfig

    try:
        config = BenchConfig(**{"envs": "", "agents": "", "out": "", **values})
    except (ValueError, TypeError) as e:
        raise CLIError(str(e).splitlines()[0]) from None
    settings = {k: (str(v) if isinstance(v, Path) else v) for k, v in dataclasses.asdict(config).items()}
    settings.update({k: values.get(k) for k in ("envs", "agents", "out") if not values.get(k)})  # not given yet
    settings["out"] = None if settings["out"] is None else str(settings["out"])
    lines = ["# clinical-gym bench: resolved settings (defaults < recipe < flags)"]
    lines += recipe_comments(recipe, roles)
    print("\n".join(lines) + "\n" + yaml.safe_dump(settings, sort_keys=False, allow_unicode=True, width=120), end="")
    return 0


def _failure_count(records: list) -> int:
    """Print how many episodes failed (the agent) or errored (a simulated actor or the environment); the exit status:
    1 when any did (rerunning into the same --out plays them again), else 0."""
    failed = sum(r.status == "failed" for r in records)
    errors = sum(r.status == "error" for r in records)
    print(f"episodes: {len(records)}; failed (agent): {failed}; errors (simulator, judge or environment): {errors}")
    if failed or errors:
        print("some episodes did not finish; rerun the same command to play them again (see 'bench show')",
              file=sys.stderr)
        return 1
    return 0


def cmd_show(args: argparse.Namespace) -> int:
    from clinical_gym.benchmarks.records import RESULTS_FILE, read_records
    from clinical_gym.benchmarks.transcript import find_episode, format_episode

    records = read_records(Path(args.dir))
    if not records:
        raise CLIError(f"no results in {args.dir} (expected {Path(args.dir) / RESULTS_FILE})")
    try:
        print(format_episode(find_episode(records, args.episode, args.env, args.agent)))
    except ValueError as e:
        raise CLIError(str(e)) from None
    return 0


def cmd_compare(args: argparse.Namespace) -> int:
    from clinical_gym.benchmarks.compare import compare_runs
    from clinical_gym.benchmarks.records import RESULTS_FILE

    second = args.second or args.first
    for folder in (args.first, second):
        if not (Path(folder) / RESULTS_FILE).is_file():
            raise CLIError(f"no results in {folder} (expected {Path(folder) / RESULTS_FILE})")
    try:
        print(compare_runs(Path(args.first), Path(second), args.agent_a, args.agent_b))
    except ValueError as e:
        raise CLIError(str(e)) from None
    return 0


def add_commands(sub: argparse._SubParsersAction) -> None:
    bench = sub.add_parser("bench", help="benchmark agents on environments (results, report, plots)",
                           description="Benchmark agents on environments: results.jsonl, summary.json, report.md and "
                                       "plots in --out. Rerunning into the same --out resumes and plays failed "
                                       "and errored episodes again. Every LLM endpoint is checked before the first "
                                       "episode. Exit status 1 when any episode failed or errored.")
    bench.add_argument("--env", help="environment ids, comma-separated, or 'all'")
    bench.add_argument("--agent", help=AGENT_HELP)
    bench.add_argument("--cases", help="case set or file for ClinicalInquiry/DiagnosticWorkup, e.g. library or "
                                       "generated:common:N (N patients; default: the library)")
    bench.add_argument("--tasks", help="task folder (tasks.json with its db.json, as 'tools convert' and 'tasks "
                                       "generate' write), task file, or generated:N (N generated tasks of --seed) "
                                       "for the tool domains (default: each domain's own)")
    bench.add_argument("--split", choices=("test", "train", "all"),
                       help="case or task split (default: test of bundled and generated sets, all of your own file)")
    bench.add_argument("--episodes", type=int, help="episodes per agent and env (default: each case or task once)")
    bench.add_argument("--trials", type=int,
                       help="play each episode's case or task K times; reports add pass^k and pass@k (default 1)")
    bench.add_argument("--seed", type=int, help="decides the episodes and sampling (default 0)")
    bench.add_argument("--out", help="results folder")
    bench.add_argument("--batch-size", type=int, help="episodes played at once (default 16)")
    bench.add_argument("--timeout", type=float,
                       help="seconds one generation call may take before its episodes fail (default 600)")
    bench.add_argument("--max-turn-tokens", type=int, help="model agents: tokens per reply (default 256)")
    bench.add_argument("--max-episode-tokens", type=int,
                       help="model agents: tokens per episode (default 4096)")
    bench.add_argument("--temperature", type=float, help="model agents: sampling temperature (0 greedy)")
    bench.add_argument("--env-kwargs", type=json_object,
                       help="gym.make arguments, a JSON object (merged over a recipe's, key by key)")
    bench.add_argument("--judge", help="model name of an LLM judge (OpenAI-compatible) for ClinicalInquiry scores")
    bench.add_argument("--judge-base-url", help="the judge's endpoint (default: OPENAI_BASE_URL)")
    bench.add_argument("--patient", metavar="MODEL",
                       help="LLM patient of ClinicalInquiry: a served model name, or openai:MODEL / transformers:PATH "
                            "(default: the rule-based patient)")
    bench.add_argument("--patient-base-url", help="the patient model's endpoint (default: OPENAI_BASE_URL)")
    bench.add_argument("--world-model", metavar="MODEL",
                       help="LLM world model of DiagnosticWorkup, named like --patient (default: record-backed)")
    bench.add_argument("--world-model-base-url", help="the world model's endpoint (default: OPENAI_BASE_URL)")
    bench.add_argument("--base-url", help="endpoint of openai: agents (default: OPENAI_BASE_URL)")
    bench.add_argument("--tool-calling", choices=("native", "text"),
                       help="how openai: agents call tools in tool environments: native (the schemas sent as "
                            "'tools', replies' tool_calls) or text (calls written in the reply) (default native)")
    bench.add_argument("--base-model", help="base model of a LoRA checkpoint (default: the one its adapter names)")
    bench.add_argument("--no-progress", action="store_true", help="no progress bar")
    add_recipe_arguments(bench, "bench")
    bench.set_defaults(func=cmd_bench)
    actions = bench.add_subparsers(dest="bench_action", parser_class=type(bench))
    show = actions.add_parser("show", help="print one episode's transcript")
    show.add_argument("dir", help="results folder")
    show.add_argument("--episode", type=int, required=True, help="episode index")
    show.add_argument("--env", help="environment id (when the folder has several)")
    show.add_argument("--agent", help="agent label (when the folder has several)")
    show.set_defaults(func=cmd_show)
    compare = actions.add_parser(
        "compare", help="two agents (of one run or two) on the episodes both played: paired differences with CIs",
        description="Compare agent A and agent B on the episodes both played (same case and reset seed): per metric "
                    "the mean of B - A with a 95%% bootstrap interval clustered by task, and how many episodes were "
                    "paired. A folder with one agent needs no --agent-a/--agent-b; without them, agents with the "
                    "same label in both folders are compared.")
    compare.add_argument("first", help="results folder of A")
    compare.add_argument("second", nargs="?", help="results folder of B (default: the same folder)")
    compare.add_argument("--agent-a", help="agent label of A in the first folder")
    compare.add_argument("--agent-b", help="agent label of B in the second folder")
    compare.set_defaults(func=cmd_compare)
