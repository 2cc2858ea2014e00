"""``clinical-gym recipes``: the paper recipes (``clinical_gym.recipes``).

    clinical-gym recipes list
    clinical-gym recipes show NAME          # the recipe file, to copy and edit
    clinical-gym recipes docs [--out docs/papers.md]
"""

from __future__ import annotations

import argparse
from importlib import resources

from clinical_gym.cli.errors import CLIError, require
from clinical_gym.cli.tools import add_docs_parser, print_or_write


def cmd_choose(args: argparse.Namespace) -> int:
    raise CLIError("choose: recipes list, recipes show NAME or recipes docs")


def cmd_list(args: argparse.Namespace) -> int:
    require("yaml", "clinical-gym recipes")
    from clinical_gym.recipes import RECIPES, load_recipe

    for name in RECIPES:
        recipe = load_recipe(name)
        print(f"{name:22} {recipe.env:22} train {', '.join(recipe.train)}; {recipe.title}")
    return 0


def cmd_show(args: argparse.Namespace) -> int:
    from clinical_gym.recipes import RECIPES

    if args.name not in RECIPES:
        raise CLIError(f"no bundled recipe {args.name!r}; choose one of {', '.join(RECIPES)}")
    print(resources.files("clinical_gym.recipes").joinpath(f"{args.name}.yaml").read_text(encoding="utf-8"), end="")
    return 0


def cmd_docs(args: argparse.Namespace) -> int:
    require("yaml", "clinical-gym recipes docs")
    from clinical_gym.recipes.page import papers_page

    try:
        page = papers_page()
    except ValueError as e:
        raise CLIError(str(e).splitlines()[0]) from None
    return print_or_write(page, args.out)


def add_commands(sub: argparse._SubParsersAction) -> None:
    recipes = sub.add_parser("recipes", help="the papers' training and evaluation settings (--recipe of train, bench)")
    recipes.set_defaults(func=cmd_choose)
    actions = recipes.add_subparsers(dest="recipes_command", parser_class=type(recipes))
    actions.add_parser("list", help="the bundled recipes").set_defaults(func=cmd_list)
    show = actions.add_parser("show", help="print a bundled recipe file (copy it, edit it, pass its path to --recipe)")
    show.add_argument("name", help="a recipe name, e.g. doctoragent-rl")
    show.set_defaults(func=cmd_show)
    add_docs_parser(actions, "write the paper page (docs/papers.md) from the recipes", cmd_docs)
