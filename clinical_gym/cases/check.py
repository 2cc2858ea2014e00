"""Check case files (or, with ``--diseases``, disease-table files): ``python -m clinical_gym.cases.check [--diseases] FILE...``."""

from __future__ import annotations

import sys

from clinical_gym.cases.loading import read_case_file
from clinical_gym.cases.quality import case_problems


def check_diseases(paths: list[str]) -> int:
    import json

    from pydantic import ValidationError

    from clinical_gym.cases.disease_table import Disease
    from clinical_gym.cases.quality import disease_problems

    bad = 0
    for path in paths:
        rows = json.loads(open(path, encoding="utf-8").read())
        for i, row in enumerate(rows, 1):
            try:
                d = Disease.model_validate(row)
            except ValidationError as e:
                print(f"{path}: entry {i}: {e}")
                bad += 1
                continue
            for p in disease_problems(d):
                print(f"{path}: {d.id}: {p}")
                bad += 1
        print(f"{path}: {len(rows)} diseases")
    print("OK" if not bad else f"{bad} problems")
    return 1 if bad else 0


def main(argv: list[str] | None = None) -> int:
    args = list(argv if argv is not None else sys.argv[1:])
    if args and args[0] == "--diseases":
        return check_diseases(args[1:])
    bad = 0
    for path in args:
        cases, problems = read_case_file(path)
        for p in problems:
            print(p)
        bad += len(problems)
        for c in cases:
            for p in case_problems(c):
                print(f"{path}: {c.id}: {p}")
                bad += 1
        print(f"{path}: {len(cases)} cases parsed")
    print("OK" if not bad else f"{bad} problems")
    return 1 if bad else 0


if __name__ == "__main__":
    raise SystemExit(main())
