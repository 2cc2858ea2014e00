"""``clinical-gym tools list [--domain D]`` prints the tools of the tool-using environments with their kinds;
``clinical-gym tools docs [--out FILE]`` writes the domain table (``docs/domains.md``) from the code;
``clinical-gym tools convert --from FILE --domain D --out DIR`` turns MedQA-style questions (MedicalQA-v1) or case
files (ClinicalDiagnosis-v1) into tasks (``domains/task_conversion.py``)."""

from __future__ import annotations

import argparse
from pathlib import Path

from clinical_gym.cli.errors import CLIError


def cmd_list(args: argparse.Namespace) -> int:
    from clinical_gym.tool_env.catalogue import catalogue, format_tool_list, resolve_domain

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


def print_or_write(text: str, out: str | None) -> int:
    """Print a generated page, or write it to ``out`` (a CLIError when its folder does not exist)."""
    if out is None:
        print(text, end="")
        return 0
    path = Path(out)
    if not path.parent.is_dir():
        raise CLIError(f"folder {path.parent} does not exist")
    path.write_text(text, encoding="utf-8")
    print(f"wrote {path}")
    return 0


def add_docs_parser(actions: argparse._SubParsersAction, help: str, func) -> None:
    """The ``docs [--out FILE]`` subcommand of a command group, its page written by ``print_or_write``."""
    docs = actions.add_parser("docs", help=help)
    docs.add_argument("--out", help="file to write (default: print)")
    docs.set_defaults(func=func)


def cmd_docs(args: argparse.Namespace) -> int:
    from clinical_gym.tool_env.catalogue import catalogue, domains_markdown

    return print_or_write(domains_markdown(*catalogue()), args.out)


CONVERTIBLE = ("MedicalQA-v1", "ClinicalDiagnosis-v1")


def cmd_convert(args: argparse.Namespace) -> int:
    from clinical_gym.tool_env.catalogue import resolve_domain

    source = Path(args.source)
    if not source.is_file():
        raise CLIError(f"no such file: {source}")
    try:
        env_id = resolve_domain(args.domain).id
    except ValueError as e:
        raise CLIError(str(e)) from None
    if env_id not in CONVERTIBLE:
        raise CLIError(f"tasks can be converted for {' and '.join(CONVERTIBLE)}, not {env_id}")
    out = Path(args.out)
    if out.exists() and any(out.iterdir()):
        raise CLIError(f"{out} is not empty; choose a new folder")
    from clinical_gym.domains import task_conversion

    try:
        if env_id == "MedicalQA-v1":
            from clinical_gym.cases.formats.rows import read_rows

            rows, problems = read_rows(source)
            conversion = task_conversion.convert_mcq((f"{source}:{n}", row) for n, row in rows)
            conversion.skipped[:0] = problems
        else:
            from clinical_gym.cases import load_cases

            conversion = task_conversion.convert_cases(load_cases(source))
    except (ValueError, OSError) as e:
        raise CLIError(str(e).splitlines()[0]) from None
    if not conversion.tasks:
        raise CLIError(f"no tasks could be converted from {source} ({conversion.summary()}; "
                       f"first problem: {(conversion.skipped + conversion.duplicates + ['none'])[0]})")
    task_conversion.write_conversion(conversion, out)
    print(f"{conversion.summary()}; wrote {out}/db.json and {out}/tasks.json")
    for line in conversion.skipped + conversion.duplicates:
        print(f"  {line}")
    return 0


def cmd_choose(args: argparse.Namespace) -> int:
    raise CLIError("choose a tools command: list, docs, convert")


def add_commands(sub: argparse._SubParsersAction) -> None:
    tools = sub.add_parser("tools", help="list the tools of the tool-using environments")
    tools.set_defaults(func=cmd_choose)
    actions = tools.add_subparsers(dest="tools_command", parser_class=type(tools))
    listing = actions.add_parser("list", help="every tool with its kind, toolkit and environments")
    listing.add_argument("--domain", help="one environment: an id (Triage-v1) or a domain folder (triage)")
    listing.set_defaults(func=cmd_list)
    add_docs_parser(actions, "write the domain table (docs/domains.md) from the code", cmd_docs)
    convert = actions.add_parser("convert", help="turn MedQA-style questions or case files into domain tasks")
    convert.add_argument("--from", dest="source", required=True,
                         help="MedQA-style JSONL (MedicalQA-v1) or a case file any case loader reads")
    convert.add_argument("--domain", required=True, help=f"target environment: {' or '.join(CONVERTIBLE)}")
    convert.add_argument("--out", required=True, help="new folder for db.json and tasks.json")
    convert.set_defaults(func=cmd_convert)
