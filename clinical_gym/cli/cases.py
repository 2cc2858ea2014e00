"""``clinical-gym cases``: list, show, validate and export case sets (the library, or files in any supported format)."""

from __future__ import annotations

import argparse
import sys
import warnings
from pathlib import Path

from clinical_gym.cases import Case, load_cases, read_case_file
from clinical_gym.cases.formatting import format_test_result, format_vitals
from clinical_gym.cli.errors import CLIError

DEFAULT_SET = "library"
EXPORT_FORMATS = ("jsonl", "hf")


def _load(name: str) -> list[Case]:
    """A case set; its warnings (rows skipped from a file) are printed as one line each on stderr."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", UserWarning)
        try:
            cases = load_cases(name)
        except (ValueError, OSError) as e:
            raise CLIError(str(e)) from None
    for w in caught:
        if issubclass(w.category, UserWarning):
            print(f"clinical-gym: warning: {w.message}", file=sys.stderr)
    return cases


def cmd_list(args: argparse.Namespace) -> int:
    cases = _load(args.set)
    width = max((len(c.id) for c in cases), default=0)
    for c in cases:
        print(f"{c.id:<{width}}  {c.specialty:<21}  {c.diagnosis.name}")
    return 0


def render_case(case: Case) -> str:
    """A case as readable text: every field, history facts marked (* volunteered, - denied) with their topics."""
    d = case.demographics
    lines = [f"{case.id}  ({case.specialty.replace('_', ' ')})", f"Source: {case.source}", f"Patient: {d.sex}, {d.age_text}",
             f"Chief complaint: {case.chief_complaint}", f"Self-report: {case.self_report}", "",
             f"History ({len(case.history)} facts; * volunteered, - denied):"]
    for f in case.history:
        mark = "*" if f.volunteered else "-" if not f.present else " "
        lines.append(f"  {mark} [{f.category}] {f.text}  ({', '.join(f.topics)})")
    for label, items in (("Past history", case.past_history), ("Medications", case.medications), ("Allergies", case.allergies),
                         ("Social history", case.social_history), ("Family history", case.family_history)):
        if items:
            lines.append(f"{label}: {'; '.join(items)}")
    if case.vitals:
        lines.append(f"Vitals: {format_vitals(case.vitals)}")
    if case.physical_exam:
        lines.append("Physical exam:")
        lines.extend(f"  {system}: {text}" for system, text in case.physical_exam.items())
    if case.tests:
        lines.append("Tests:")
        for t in case.tests:
            lines.append(f"  {t.name} ({t.category}):")
            lines.extend(f"    {line}" for line in format_test_result(t).splitlines())
    if case.images:
        lines.append(f"Images: {', '.join(case.images)}")
    if case.key_exams:
        lines.append(f"Key exams: {', '.join(case.key_exams)}")
    synonyms = f"; also called {', '.join(case.diagnosis.synonyms)}" if case.diagnosis.synonyms else ""
    lines.append(f"Diagnosis: {case.diagnosis.name} ({case.diagnosis.icd10}){synonyms}")
    if case.differential:
        lines.append(f"Differential: {', '.join(case.differential)}")
    if case.recommendation:
        lines.append(f"Recommendation: {case.recommendation}")
    if case.rubrics:
        lines.append(f"Rubrics ({len(case.rubrics)}):")
        lines.extend(f"  [{r.points:g}] {r.criterion}" for r in case.rubrics)
    p = case.persona
    withheld = f"; withholds {', '.join(p.withheld)}" if p.withheld else ""
    lines.append(f"Persona: {p.emotion}, {p.language} language, {p.cognitive} memory{withheld}")
    return "\n".join(lines)


def cmd_show(args: argparse.Namespace) -> int:
    case = next((c for c in _load(args.set) if c.id == args.id), None)
    if case is None:
        raise CLIError(f"no case {args.id!r} in {args.set!r}; run 'clinical-gym cases list --set {args.set}' to see the ids")
    print(case.model_dump_json(indent=2) if args.json else render_case(case))
    return 0


def cmd_validate(args: argparse.Namespace) -> int:
    path = Path(args.file)
    if not path.exists():
        raise CLIError(f"no such file: {args.file}")
    try:
        cases, problems = read_case_file(path, format=args.format)
    except (ValueError, OSError) as e:
        raise CLIError(str(e)) from None
    for problem in problems:
        print(problem)
    print(f"{path}: {len(cases)} cases read, {len(problems)} problems")
    return 1 if problems else 0


def cmd_export(args: argparse.Namespace) -> int:
    cases = _load(args.set)
    out = Path(args.out)
    if args.format == "jsonl":
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text("".join(c.model_dump_json() + "\n" for c in cases), encoding="utf-8")
    else:
        try:
            from clinical_gym.cases.formats import to_hf_dataset

            dataset = to_hf_dataset(cases)
        except ImportError:
            raise CLIError("exporting to hf needs the 'datasets' package: pip install 'clinical-gym[train]'") from None
        dataset.save_to_disk(str(out))
    print(f"wrote {len(cases)} cases to {out}")
    return 0


def _choose(args: argparse.Namespace) -> int:
    raise CLIError("choose a cases command: list, show, validate, export")


def add_commands(sub: argparse._SubParsersAction) -> None:
    cases = sub.add_parser("cases", help="list, show, validate and export case sets")
    cases.set_defaults(func=_choose)
    commands = cases.add_subparsers(dest="cases_command", parser_class=type(cases))
    set_help = f"case set name or case file (default: {DEFAULT_SET})"

    listing = commands.add_parser("list", help="case ids with specialty and diagnosis")
    listing.add_argument("--set", default=DEFAULT_SET, help=set_help)
    listing.set_defaults(func=cmd_list)

    show = commands.add_parser("show", help="print one case")
    show.add_argument("id", help="case id")
    show.add_argument("--set", default=DEFAULT_SET, help=set_help)
    show.add_argument("--json", action="store_true", help="print the case as JSON")
    show.set_defaults(func=cmd_show)

    validate = commands.add_parser("validate", help="check a case file; prints each problem with its line, exit 1 if any")
    validate.add_argument("file", help="case file (JSON/JSONL, any supported format) or saved dataset folder")
    validate.add_argument("--format", default=None,
                          help="the file's format: osce, mtmeddialog, diaggym, medqa, hf or native (default: detected from its first row)")
    validate.set_defaults(func=cmd_validate)

    export = commands.add_parser("export", help="write a case set as clinical-gym JSONL or a Hugging Face dataset folder")
    export.add_argument("--format", required=True, choices=EXPORT_FORMATS)
    export.add_argument("--out", required=True, help="output file (jsonl) or folder (hf)")
    export.add_argument("--set", default=DEFAULT_SET, help=set_help)
    export.set_defaults(func=cmd_export)
