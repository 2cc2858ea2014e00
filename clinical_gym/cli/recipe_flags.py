"""The paper-recipe flags of ``train`` and ``bench``: ``--recipe NAME|PATH``, ``--role ROLE=SPEC`` and
``--print-config`` (``clinical_gym.recipes``)."""

from __future__ import annotations

import argparse
import sys
from typing import Any


def add_recipe_arguments(parser: argparse.ArgumentParser, command: str) -> None:
    """``--recipe``, ``--role`` and ``--print-config`` (shared by ``train`` and ``bench``)."""
    from clinical_gym.recipes import RECIPES

    parser.add_argument("--recipe", metavar="NAME|PATH",
                        help=f"start from a paper's settings: {', '.join(RECIPES)}, or a recipe file (YAML) "
                             "(docs/papers.md)")
    parser.add_argument("--role", action="append", metavar="ROLE=SPEC",
                        help="the endpoint of an LLM actor or judge the recipe names, e.g. patient=openai:MODEL "
                             "(URL from OPENAI_BASE_URL) or judge=transformers:PATH; repeatable; without one the "
                             "recipe's rule stand-in plays the role")
    parser.add_argument("--print-config", action="store_true",
                        help=f"print the resolved {command} settings as YAML and exit")


def recipe_from_args(args: argparse.Namespace) -> tuple[Any, dict[str, str]]:
    """The recipe named by ``--recipe`` (None without one) and the ``--role`` endpoints."""
    if not args.recipe and not args.role:
        return None, {}
    from clinical_gym.cli.errors import require

    require("yaml", "--recipe")
    from clinical_gym.recipes import load_recipe, parse_roles

    recipe = load_recipe(args.recipe) if args.recipe else None
    roles = parse_roles(args.role)
    for name in roles:
        if recipe is None:
            raise ValueError("--role needs --recipe (the recipe says which environment argument each role fills)")
        recipe.role(name)
    return recipe, roles


def recipe_comments(recipe: Any, roles: dict[str, str]) -> list[str]:
    """YAML comment lines naming the recipe and, per role, its endpoint or the stand-in that plays it."""
    if recipe is None:
        return []
    lines = [f"# recipe: {recipe.name} ({recipe.paper}); docs/papers.md lists every deviation"]
    for role in recipe.roles:
        where = f"env_kwargs.{role.env_kwarg}" if role.env_kwarg else "the bench judge"
        lines.append(f"# role {role.name} ({where}): " + (roles.get(role.name) or
                                                          f"not given; stand-in: {role.stand_in}"))
        lines.append(f"#   paper: {role.paper}")
    return lines


def announce_roles(recipe: Any, roles: dict[str, str]) -> None:
    """Say on stderr, before a run, who plays each of the recipe's LLM roles: the endpoint given, or the stand-in."""
    if recipe is None:
        return
    for role in recipe.roles:
        who = roles.get(role.name) or f"rule stand-in ({role.stand_in}); --role {role.name}=openai:MODEL for an LLM"
        print(f"recipe {recipe.name}: {role.name}: {who}", file=sys.stderr)
