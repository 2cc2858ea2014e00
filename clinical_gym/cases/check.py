"""Check case files against the schema and the library bar: ``python -m clinical_gym.cases.check FILE...``."""

from __future__ import annotations

import sys

from clinical_gym.cases.loading import read_case_file
from clinical_gym.cases.quality import case_problems


def main(argv: list[str] | None = None) -> int:
    bad = 0
    for path in argv if argv is not None else sys.argv[1:]:
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
