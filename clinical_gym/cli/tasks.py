"""``clinical-gym tasks generate --env ENV -n N [--seed S] [--split train|test|all] --out DIR`` writes N generated
tasks of a tool domain with the records they need, as a task folder (``tasks.json``, ``db.json`` and
``generation.json``) that ``gym.make(ENV, tasks=DIR)`` and ``clinical-gym bench --tasks DIR`` read back unchanged;
every task is validated first (``--no-validate`` skips the scripted expert's episodes). ``clinical-gym tasks
generators`` lists the domains with a generator and what each one's test split holds back
(``clinical_gym.tool_env.generation``)."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from clinical_gym.cli.errors import CLIError

META_FILE = "generation.json"


def _count(text: str) -> int:
    from clinical_gym.tool_env.generation import check_count

    try:
        return check_count(text)
    except ValueError as e:
        raise argparse.ArgumentTypeError(str(e)) from None


def _seed(text: str) -> int:
    from clinical_gym.tool_env.generation import check_seed

    try:
        return check_seed(text)
    except ValueError as e:
        raise argparse.ArgumentTypeError(str(e)) from None


def _domain(name: str) -> str:
    from clinical_gym.tool_env.catalogue import resolve_domain
    from clinical_gym.tool_env.generation import generator_env_ids

    try:
        env_id = resolve_domain(name).id
    except ValueError as e:
        raise CLIError(str(e)) from None
    if env_id not in generator_env_ids():
        raise CLIError(f"{env_id} has no task generator; generators exist for {', '.join(generator_env_ids())}")
    return env_id


def cmd_generate(args: argparse.Namespace) -> int:
    env_id = _domain(args.env)
    out = Path(args.out)
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        raise CLIError(f"{out} is not an empty folder; choose a new one")
    from clinical_gym.tool_env.generation import generator_for, validate_generated
    from clinical_gym.tool_env.task_folder import write_task_folder

    generator = generator_for(env_id)
    split = None if args.split == "all" else args.split
    generated = generator.generate(args.n, args.seed, split)
    if not args.no_validate:
        problems = validate_generated(generated, generator)
        if problems:
            raise CLIError(f"{len(problems)} generated task(s) failed validation, nothing written; first: {problems[0]}")
    write_task_folder(out, generated.tasks, generated.db)
    splits = {s: sum(t.split == s for t in generated.tasks) for s in ("train", "test")}
    meta = {**generated.meta, "tasks": len(generated.tasks), "splits": splits, "validated": not args.no_validate,
            "test_split_holds": generator.held_out}
    (out / META_FILE).write_text(json.dumps(meta, indent=1) + "\n", encoding="utf-8")
    print(f"wrote {len(generated.tasks)} {env_id} tasks ({splits['train']} train, {splits['test']} test; seed "
          f"{args.seed}) with their records to {out}"
          + ("" if args.no_validate else "; every task validated (the scripted expert scores 1.0)"))
    print(f"use: gym.make({env_id!r}, tasks={str(out)!r})  or  clinical-gym bench --env {env_id} --tasks {out} ...")
    return 0


def cmd_generators(args: argparse.Namespace) -> int:
    from clinical_gym.tool_env.generation import generator_env_ids, generator_for

    for env_id in generator_env_ids():
        print(f"{env_id}\n  test split holds: {generator_for(env_id).held_out}")
    return 0


def add_commands(sub: argparse._SubParsersAction) -> None:
    tasks = sub.add_parser("tasks", help="generate tool-domain tasks with the records they need",
                           description="Generated tasks of the tool domains: unlimited, varied, answers computed.")
    actions = tasks.add_subparsers(dest="tasks_action", parser_class=type(tasks))
    generate = actions.add_parser("generate", help="write N generated tasks and their records to a task folder",
                                  description="Write N generated tasks of a tool domain and the records they need to "
                                              "--out (tasks.json, db.json, generation.json), after validating them.")
    generate.add_argument("--env", required=True, help="tool environment id or domain name, e.g. Triage-v1")
    generate.add_argument("-n", type=_count, required=True, help="how many tasks (1 to 100,000)")
    generate.add_argument("--seed", type=_seed, default=0, help="task seed, a whole number >= 0 (default 0)")
    generate.add_argument("--split", choices=("all", "train", "test"), default="all",
                          help="tasks of this split only (default all: about 20%% test)")
    generate.add_argument("--out", required=True, help="the task folder to write (new or empty)")
    generate.add_argument("--no-validate", action="store_true",
                          help="skip the validation (the scripted expert's episode on each task)")
    generate.set_defaults(func=cmd_generate)
    generators = actions.add_parser("generators", help="the domains with a task generator and their held-out pools")
    generators.set_defaults(func=cmd_generators)
    tasks.set_defaults(func=cmd_tasks)


def cmd_tasks(args: argparse.Namespace) -> int:
    raise CLIError("choose one: tasks generate, tasks generators")
