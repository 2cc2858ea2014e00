"""Play a few ClinicalInquiry-v0 consultations with a scripted checklist doctor and print them.

    python examples/inquiry_demo.py [--episodes 3] [--seed 0]

The doctor asks its chief-complaint questions and a review of systems, noting which symptoms the patient has and
denies, then names the diagnosis whose textbook presentation best fits what it heard. Its "textbook" is the
library's presentations (one per disease), so it knows every disease the patient can have, but it only learns
about this patient through the questions it asks.
"""

from __future__ import annotations

import argparse
import re

import gymnasium as gym

import clinical_gym  # noqa: F401  (registers the environments)
from clinical_gym.cases import load_cases
from domains.inquiry.questions import analyze_question

OPENING = ["When did it start?", "Where exactly do you feel it?", "How bad is it?", "Does anything make it worse?"]
REVIEW = {  # symptom key -> question
    "fever": "Have you had a fever?", "cough": "Do you have a cough?", "shortness_of_breath": "Are you short of breath?",
    "chest_pain": "Any chest pain?", "abdominal_pain": "Any stomach pain?", "vomiting": "Have you been vomiting?",
    "diarrhea": "Any diarrhea?", "headache": "Any headaches?", "dysuria": "Any pain when you pee?", "rash": "Any rash?",
    "joint_pain": "Any joint pain?", "weight_loss": "Have you lost weight?",
}


def ask(question: str) -> str:
    return f"<think>Checklist question.</think><answer>Question: {question}</answer>"


def mentioned_symptoms(text: str) -> frozenset[str]:
    """Symptoms the patient's words name (the same lexicon the environment reads questions with)."""
    return analyze_question(text).explicit_symptoms


def best_textbook_match(heard: dict[str, bool], textbook) -> tuple[str, str]:
    """The diagnosis (and its recommendation) of the reference case that best fits the symptoms heard."""
    def fit(case) -> int:
        has = {s for f in case.history if f.present for s in f.symptoms}
        return sum(1 if (s in has) == present else -1 for s, present in heard.items())
    best = max(textbook, key=fit)
    return best.diagnosis.name, best.recommendation


def play(env, seed: int, budget: int, textbook) -> None:
    obs, info = env.reset(seed=seed)
    print(f"\n=== episode seed={seed} ({info['specialty']}) ===\n[patient] {obs}")
    heard: dict[str, bool] = dict.fromkeys(mentioned_symptoms(obs), True)
    questions = OPENING + list(REVIEW.values())
    for turn, question in enumerate(questions[: budget - 1]):
        obs, reward, terminated, _, info = env.step(ask(question))
        print(f"[doctor ] {question}\n[patient] {obs}  (reward {reward:+.1f})")
        reply = obs.split("\n")[0]
        symptom = next((s for s, q in REVIEW.items() if q == question), None)
        if symptom and re.search(r"\bno\b", reply.lower()):
            heard[symptom] = False
        else:
            heard.update(dict.fromkeys(mentioned_symptoms(reply), True))
    diagnosis, recommendation = best_textbook_match(heard, textbook)
    obs, reward, terminated, _, info = env.step(
        f"<think>Best fit for the symptoms heard.</think><answer>Diagnosis: {diagnosis}\nRecommendation: {recommendation}</answer>")
    out = info["outcome"]
    print(f"[doctor ] Diagnosis: {diagnosis}\n[env    ] {obs}")
    print(f"outcome: {out['result']}  diagnosis F1 {out['diagnosis_f1']:.2f}  recommendation F1 {out['recommendation_f1']:.2f}  "
          f"final reward {reward:+.2f}")


def main() -> None:
    ap = argparse.ArgumentParser(description="Scripted ClinicalInquiry-v0 consultations.")
    ap.add_argument("--episodes", type=int, default=3)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--budget", type=int, default=12)
    args = ap.parse_args()
    env = gym.make("ClinicalInquiry-v0", split="test", turn_budget=args.budget)
    textbook = load_cases("library")
    for i in range(args.episodes):
        play(env, args.seed + i, args.budget, textbook)


if __name__ == "__main__":
    main()
