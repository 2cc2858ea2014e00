"""The rule-based agents' reasoning: rank the diseases of the knowledge table by how well they explain the findings.

A naive-Bayes log score with a uniform prior over the table (``clinical_gym.cases.disease_table``):

* a symptom heard present adds log P(symptom | disease): the table's frequency, or ``UNLISTED`` for a symptom the
  disease's entry does not list;
* a symptom heard absent adds log(1 - P(symptom | disease));
* sex adds log of the disease's share of that sex (kept within [``SEX_FLOOR``, 1 - ``SEX_FLOOR``]);
* an age outside the disease's usual range adds log ``AGE_OUTSIDE``.
"""

from __future__ import annotations

import math

from clinical_gym.benchmarks.agents.findings import Findings
from clinical_gym.cases.disease_table import Disease, disease_table

UNLISTED = 0.03
"""P(symptom | disease) for a symptom the disease's table entry does not list."""
SEX_FLOOR = 0.02
AGE_OUTSIDE = 0.2


def log_score(disease: Disease, findings: Findings) -> float:
    """How well ``disease`` explains ``findings`` (a log-likelihood; higher is better)."""
    frequency = {s.symptom: s.frequency for s in disease.symptoms}
    # sorted: a set's order changes with the process's hash seed, and so would the float sums and near-ties
    score = sum(math.log(frequency.get(s, UNLISTED)) for s in sorted(findings.present))
    score += sum(math.log(max(1.0 - frequency.get(s, UNLISTED), UNLISTED)) for s in sorted(findings.absent))
    if findings.sex is not None:
        share = disease.male_fraction if findings.sex == "male" else 1.0 - disease.male_fraction
        score += math.log(min(max(share, SEX_FLOOR), 1.0 - SEX_FLOOR))
    if findings.age is not None and not disease.age_range[0] <= findings.age <= disease.age_range[1]:
        score += math.log(AGE_OUTSIDE)
    return score


def rank_diseases(findings: Findings) -> list[Disease]:
    """Every disease of the table, the most likely first (ties keep the table's order)."""
    table = disease_table()
    scores = [log_score(d, findings) for d in table]
    return [table[i] for i in sorted(range(len(table)), key=lambda i: -scores[i])]
