"""``clinical-gym envs`` lists environments; ``clinical-gym play ENV`` lets a person play any of them in the terminal
(the doctor of ClinicalInquiry, the physician of DiagnosticWorkup, the agent of a tool domain): see
``clinical_gym.play``."""

from __future__ import annotations

import argparse
import sys

import clinical_gym
from clinical_gym.cli.arguments import json_object
from clinical_gym.cli.errors import CLIError
from clinical_gym.play.inquiry import as_doctor_action
from clinical_gym.registration import ENVIRONMENTS, env_family

__all__ = ["add_commands", "as_doctor_action", "env_kwargs"]


def cmd_envs(args: argparse.Namespace) -> int:
    width = max(len(e.id) for e in ENVIRONMENTS)
    for e in ENVIRONMENTS:
        print(f"{e.id:<{width}}  {e.description}")
    return 0


def env_kwargs(args: argparse.Namespace, family: str) -> dict:
    """The ``gym.make`` arguments the play flags give for an environment of ``family``."""
    kwargs = dict(args.env_kwargs or {})
    if args.tests and family != "inquiry":
        raise CLIError("--tests is for ClinicalInquiry-v1 (DiagnosticWorkup orders exams anyway)")
    if args.cases and family == "tool":
        raise CLIError("--cases is for ClinicalInquiry-v1 and DiagnosticWorkup-v1; tool domains take --tasks")
    if args.tasks and family != "tool":
        raise CLIError("--tasks is for the tool domains; ClinicalInquiry and DiagnosticWorkup take --cases")
    if args.budget is not None and args.budget < 1:
        raise CLIError(f"--budget must be at least 1, got {args.budget}")
    if args.split:
        kwargs["split"] = args.split
    if family == "inquiry":
        kwargs.setdefault("turn_budget", args.budget or 10)
        kwargs["allow_tests"] = args.tests or kwargs.get("allow_tests", False)
    elif family == "workup" and args.budget:
        kwargs["reward_config"] = {**kwargs.get("reward_config", {}), "max_turns": args.budget}
    elif family == "tool" and args.budget:
        kwargs["max_turns"] = args.budget
    if args.cases:
        kwargs["cases"] = args.cases
    return kwargs


def cmd_play(args: argparse.Namespace) -> int:
    import gymnasium as gym

    from clinical_gym.benchmarks.plan import load_env_tasks
    from clinical_gym.play import PlaySession, family_for

    if args.env not in clinical_gym.env_ids():
        raise CLIError(f"unknown environment {args.env!r}; run 'clinical-gym envs' to list them")
    family = env_family(args.env)
    kwargs = env_kwargs(args, family)
    try:
        if args.tasks:
            kwargs = {**load_env_tasks(args.env, args.tasks), **kwargs}
        env = gym.make(args.env, **kwargs)
    except (ValueError, TypeError, OSError) as e:
        raise CLIError(str(e).splitlines()[0]) from None
    if sys.stdin.isatty():
        try:
            import readline  # noqa: F401 (line editing and history for input())
        except ImportError:
            pass
    session = PlaySession(env, family_for(args.env))
    key = "task_id" if family == "tool" else "case_id"
    try:
        session.play(seed=args.seed, options={key: args.case} if args.case else None,
                     show_prompt=True if args.prompt else None)
    except ValueError as e:  # an unknown case or task id
        raise CLIError(str(e).splitlines()[0]) from None
    finally:
        env.close()
    return 0


def add_commands(sub: argparse._SubParsersAction) -> None:
    sub.add_parser("envs", help="list registered environments").set_defaults(func=cmd_envs)
    play = sub.add_parser("play", help="play any environment by hand, in the terminal",
                          description="Play one episode of an environment by hand: you type what the agent would "
                                      "send. 'help' inside the game lists the commands that cost no turn.")
    play.add_argument("env", help="environment id, e.g. ClinicalInquiry-v1, DiagnosticWorkup-v1, Triage-v1")
    play.add_argument("--case", help="case id, or task id for a tool domain (default: drawn with the seed)")
    play.add_argument("--cases", help="case set name or file (ClinicalInquiry, DiagnosticWorkup)")
    play.add_argument("--tasks", help="task folder (tasks.json with its db.json) or task file for a tool domain "
                                      "(default: its own tasks)")
    play.add_argument("--split", choices=("train", "test"), help="draw from one split only")
    play.add_argument("--seed", type=int, default=None)
    play.add_argument("--budget", type=int, default=None,
                      help="turn budget (default: the environment's own; ClinicalInquiry 10)")
    play.add_argument("--tests", action="store_true", help="ClinicalInquiry: allow ordering examinations and tests")
    play.add_argument("--prompt", action="store_true", help="print the full system prompt first (also when long)")
    play.add_argument("--env-kwargs", type=json_object, default={}, help="further gym.make arguments, a JSON object")
    play.set_defaults(func=cmd_play)
