"""``docs/papers.md``: per paper, every setting and reward term with the paper's value, ours, whether they match and
why not, generated from the recipes (``clinical-gym recipes docs --out docs/papers.md``). A test regenerates it and
fails when the page and the recipes disagree."""

from __future__ import annotations

from typing import Any

from clinical_gym.recipes import RECIPES, Recipe, load_recipe, resolved, resolved_value
from clinical_gym.tool_env.tasks import values_match

INTRO = """# The source papers, setting by setting

Generated from the recipes in `clinical_gym/recipes/` by `clinical-gym recipes docs --out docs/papers.md`; a test
fails when this page and the recipes disagree. Each recipe sets an environment, its reward, a trainer and the
evaluation protocol of one paper:

```bash
clinical-gym train grpo --recipe doctoragent-rl --model PATH            # the paper's GRPO settings
clinical-gym train grpo --recipe doctoragent-rl --print-config          # what that run would use, as YAML
clinical-gym bench --recipe doctoragent-rl --agent openai:MODEL --out runs/eval --role evaluator=openai:JUDGE
clinical-gym recipes show doctoragent-rl > my-recipe.yaml               # copy, edit, then --recipe my-recipe.yaml
```

Settings resolve as: the trainer's (or benchmark's) defaults < the recipe < `--config FILE.yaml` < flags. Where a
paper used an LLM as a simulated actor or a judge, the recipe names the role; `--role NAME=openai:MODEL` (URL from
`OPENAI_BASE_URL`) or `--role NAME=transformers:PATH` gives it an endpoint, and without one the rule stand-in below
plays it. "Ours" is the value a run with the recipe uses, read from the resolved settings where the row names one;
"match" is computed from the two values there, and given by the recipe for rows described in words ("stand-in":
a rule plays an LLM's role; "not given": the paper does not say, so ours is our choice). "[code]" marks values
taken from a paper's released code rather than its text.
"""


def papers_page(names: tuple[str, ...] = RECIPES) -> str:
    """The whole page, one section per recipe."""
    return INTRO + "".join(recipe_section(load_recipe(name)) for name in names)


def recipe_section(recipe: Recipe) -> str:
    values = resolved(recipe)
    algorithms = ", ".join(f"`train {a}`" for a in recipe.train)
    lines = [f"\n## {recipe.title} (`--recipe {recipe.name}`)", "", f"{recipe.paper}. Values from: {recipe.source}.",
             "", *([recipe.notes, ""] if recipe.notes else []),
             f"Environment `{recipe.env}`; trains with {algorithms or 'no trainer'}; evaluates with `bench`."]
    if recipe.roles:
        lines += ["", "| role | the paper's | without an endpoint | endpoint |", "|---|---|---|---|"]
        for role in recipe.roles:
            where = f"`--role {role.name}=...` (env argument `{role.env_kwarg}`)" if role.env_kwarg \
                else f"`--role {role.name}=openai:MODEL` (the bench judge)"
            lines.append(f"| {role.name} | {_cell(role.paper)} | {_cell(role.stand_in)} | {where} |")
    lines += ["", "| setting | paper | ours | match | note |", "|---|---|---|---|---|"]
    for row in recipe.settings:
        if row.ours is not None:
            ours = resolved_value(values, row.ours)
            shown = f"{_value(ours)} (`{row.ours}`)"
            match = row.match or ("yes" if values_match(row.paper, ours) else "no")
        else:
            shown, match = _cell(row.ours_text), row.match or "no"
        lines.append(f"| {_cell(row.setting)} | {_value(row.paper)} | {shown} | {match} | {_cell(row.note)} |")
    return "\n".join(lines) + "\n"


def _value(value: Any) -> str:
    if value is None:
        return "none"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return f"{value:g}"
    return _cell(str(value))


def _cell(text: str) -> str:
    return " ".join(str(text).replace("|", "\\|").split())
