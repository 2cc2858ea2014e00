"""``clinical-gym tools list [--domain D]`` prints the tools of the tool-using environments with their kinds;
``clinical-gym tools docs [--out FILE]`` writes the domain table (``docs/domains.md``) from the code."""

from __future__ import annotations

import argparse
from pathlib import Path

from clinical_gym.cli.errors import CLIError


def cmd_list(args: argparse.Namespace) -> int:
    from clinical_gym.tool_catalogue import catalogue, format_tool_list, resolve_domain

    try:
        env_ids = [resolve_domain(args.domain).id] if args.domain else None
    except ValueError as e:
        raise CLIError(str(e)) from None
    tools, domains = catalogue(env_ids)
    print(format_tool_list(tools, args.domain))
    kinds = {}
    for t in tools:
        kinds[t.kind] = kinds.get(t.kind, 0) + 1
    where = domains[0].env_id if args.domain else f"{len(domains)} environments"
    print(f"\n{len(tools)} tools in {where}: " + ", ".join(f"{n} {k}" for k, n in sorted(kinds.items())))
    return 0


def cmd_docs(args: argparse.Namespace) -> int:
    from clinical_gym.tool_catalogue import catalogue, domains_markdown

    text = domains_markdown(*catalogue())
    if args.out is None:
        print(text, end="")
        return 0
    out = Path(args.out)
    if not out.parent.is_dir():
        raise CLIError(f"folder {out.parent} does not exist")
    out.write_text(text, encoding="utf-8")
    print(f"wrote {out}")
    return 0


def cmd_choose(args: argparse.Namespace) -> int:
    raise CLIError("choose a tools command: list, docs")


def add_commands(sub: argparse._SubParsersAction) -> None:
    tools = sub.add_parser("tools", help="list the tools of the tool-using environments")
    tools.set_defaults(func=cmd_choose)
    actions = tools.add_subparsers(dest="tools_command", parser_class=type(tools))
    listing = actions.add_parser("list", help="every tool with its kind, toolkit and environments")
    listing.add_argument("--domain", help="one environment: an id (Triage-v0) or a domain folder (triage)")
    listing.set_defaults(func=cmd_list)
    docs = actions.add_parser("docs", help="write the domain table (docs/domains.md) from the code")
    docs.add_argument("--out", help="file to write (default: print)")
    docs.set_defaults(func=cmd_docs)
