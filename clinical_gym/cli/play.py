"""``clinical-gym envs`` lists environments; ``clinical-gym play ENV`` lets a person be the doctor in the terminal."""

from __future__ import annotations

import argparse
import re

import clinical_gym
from clinical_gym.cli.errors import CLIError
from clinical_gym.registration import ENVIRONMENTS


def cmd_envs(args: argparse.Namespace) -> int:
    width = max(len(e.id) for e in ENVIRONMENTS)
    for e in ENVIRONMENTS:
        print(f"{e.id:<{width}}  {e.description}")
    return 0


def as_doctor_action(line: str) -> str:
    """Wrap what a person typed into the agent format: 'Diagnosis: X; Recommendation: Y' or a plain question."""
    text = line.strip()
    if "<answer>" in text:
        return text
    if re.match(r"(?i)\s*(diagnosis|test)\s*[:：]", text):
        text = re.sub(r"(?i)\s*;\s*(recommendation\s*[:：])", r"\n\1", text)
        return f"<answer>{text}</answer>"
    return f"<answer>Question: {text}</answer>"


def cmd_play(args: argparse.Namespace) -> int:
    import gymnasium as gym

    if args.env not in clinical_gym.env_ids():
        raise CLIError(f"unknown environment {args.env!r}; run 'clinical-gym envs' to list them")
    kwargs = {"turn_budget": args.budget, "allow_tests": args.tests}
    if args.cases:
        kwargs["cases"] = args.cases
    try:
        env = gym.make(args.env, **kwargs)
        options = {"case_id": args.case} if args.case else None
        obs, info = env.reset(seed=args.seed, options=options)
    except (ValueError, TypeError, OSError) as e:
        raise CLIError(str(e)) from None
    print(info["system_prompt"].split("\n")[0])
    print("Type a question, or 'Diagnosis: ...; Recommendation: ...' to finish. Ctrl-D quits.\n")
    print(f"[patient] {obs}")
    total = 0.0
    while True:
        try:
            line = input("[doctor] > ")
        except EOFError:
            print("\nconsultation abandoned")
            return 0
        if not line.strip():
            continue
        obs, reward, terminated, truncated, info = env.step(as_doctor_action(line))
        total += reward
        print(f"[patient] {obs}   (reward {reward:+.2f})")
        if terminated or truncated:
            break
    outcome = info.get("outcome", {})
    print(f"\noutcome: {outcome.get('result')}   total reward: {total:+.2f}   turns: {info['turn']}/{info['turn_budget']}")
    if outcome.get("gold_diagnosis"):
        print(f"correct diagnosis: {outcome['gold_diagnosis']} ({outcome.get('gold_icd10', '')})")
    return 0


def add_commands(sub: argparse._SubParsersAction) -> None:
    sub.add_parser("envs", help="list registered environments").set_defaults(func=cmd_envs)
    play = sub.add_parser("play", help="be the doctor in a consultation, in the terminal")
    play.add_argument("env", help="environment id, e.g. ClinicalInquiry-v0")
    play.add_argument("--case", help="case id (default: drawn with the seed)")
    play.add_argument("--cases", help="case set name or file (default: the bundled library)")
    play.add_argument("--seed", type=int, default=None)
    play.add_argument("--budget", type=int, default=10, help="turn budget (default 10)")
    play.add_argument("--tests", action="store_true", help="allow ordering examinations and tests")
    play.set_defaults(func=cmd_play)
