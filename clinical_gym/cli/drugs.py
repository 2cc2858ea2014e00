"""``clinical-gym drugs docs [--out FILE]`` writes the audit page of the drug reference (``docs/drugs.md``);
``clinical-gym drugs show NAME`` prints one drug's entry; ``clinical-gym drugs check A B`` the interaction of two
drugs (severity, mechanism, management, source)."""

from __future__ import annotations

import argparse
import json

from clinical_gym.cli.errors import CLIError
from clinical_gym.cli.tools import add_docs_parser, print_or_write


def _drug(name: str):  # type: ignore[no-untyped-def]
    from clinical_gym.drugs import reference

    try:
        return reference().resolve(name)
    except ValueError as e:
        raise CLIError(str(e)) from None


def cmd_docs(args: argparse.Namespace) -> int:
    from clinical_gym.drugs.audit import reference_markdown

    return print_or_write(reference_markdown(), args.out)


def cmd_show(args: argparse.Namespace) -> int:
    drug = _drug(args.name)
    print(json.dumps(drug.model_dump(mode="json", exclude={"tags"}, exclude_defaults=True), indent=2,
                     ensure_ascii=False))
    return 0


def cmd_check(args: argparse.Namespace) -> int:
    from clinical_gym.drugs import reference

    a, b = _drug(args.drug_a), _drug(args.drug_b)
    if a.name == b.name:
        raise CLIError(f"both names refer to {a.name}; give two different drugs")
    hit = reference().interaction(a, b)
    if hit is None:
        print(f"{a.name} with {b.name}: no interaction listed")
        return 0
    rule = hit.rule
    print(f"{a.name} with {b.name}: {rule.severity} (rule: {rule.between[0]} with {rule.between[1]})\n"
          f"mechanism: {rule.mechanism}\nmanagement: {rule.management}\nsource: {rule.source}")
    return 0


def cmd_choose(args: argparse.Namespace) -> int:
    raise CLIError("choose a drugs command: docs, show, check")


def add_commands(sub: argparse._SubParsersAction) -> None:
    drugs = sub.add_parser("drugs", help="the drug reference: audit page, one drug, one interaction")
    drugs.set_defaults(func=cmd_choose)
    actions = drugs.add_subparsers(dest="drugs_command", parser_class=type(drugs))
    add_docs_parser(actions, "write the audit page of the drug reference (docs/drugs.md)", cmd_docs)
    show = actions.add_parser("show", help="one drug's entry as JSON")
    show.add_argument("name", help="a drug name or alias, e.g. linezolid")
    show.set_defaults(func=cmd_show)
    check = actions.add_parser("check", help="the interaction between two drugs")
    check.add_argument("drug_a", help="a drug name, e.g. linezolid")
    check.add_argument("drug_b", help="another drug name, e.g. phenelzine")
    check.set_defaults(func=cmd_check)
