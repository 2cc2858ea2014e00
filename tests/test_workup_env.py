"""DiagnosticWorkup-v1: oracle scores exactly 1.6, random scores near 0, world models, parsing and info contract."""

from __future__ import annotations

import numpy as np
import gymnasium as gym
import pytest

import clinical_gym  # noqa: F401
from clinical_gym.cases import library
from clinical_gym.llm import OpenAICompatClient
from clinical_gym.domains.workup.actions import parse_workup_action
from clinical_gym.domains.workup.catalogue import load_catalogue
from clinical_gym.domains.workup.environment import DiagnosticWorkupEnv, exam_f1
from clinical_gym.domains.workup.world_model import DIAGGYM_STOP, RecordWorldModel, diaggym_prompt, patient_profile
from fake_openai import serve

APPENDIX = "dig-appendicitis-01"


def order(exam: str, first: bool = False) -> str:
    lead = ("Based on the patient's initial presentation, the following investigation should be performed" if first
            else "Based on the current findings, the following additional investigation(s) are needed")
    return f"Current diagnosis: unclear\n{lead}: {exam}\nReason: narrow the differential."


def conclude(diagnosis: str) -> str:
    return f"The available information is sufficient to make a diagnosis.\nDiagnosis: {diagnosis}\nReason: findings."


def test_oracle_scores_exactly_1_6_on_every_library_case():
    env = gym.make("DiagnosticWorkup-v1")
    for case in library():
        obs, info = env.reset(seed=0, options={"case_id": case.id})
        assert case.diagnosis.name.lower() not in obs.lower()
        for i, exam in enumerate(case.key_exams):
            obs, r, terminated, _, info = env.step(order(exam, first=i == 0))
            assert not terminated and r == 0.0
            assert info["exam_source"] == "record", (case.id, exam, info)
        obs, r, terminated, _, info = env.step(conclude(case.diagnosis.name))
        assert terminated and r == pytest.approx(1.6, abs=1e-12), (case.id, info["outcome"])
        assert info["outcome"]["exam_f1"] == 1.0 and info["outcome"]["accuracy"] == 1.0


def test_random_agent_scores_near_zero_and_never_crashes():
    env = gym.make("DiagnosticWorkup-v1")
    rng = np.random.default_rng(0)
    words = ["scan", "blood", "CBC", "xyz", "Diagnosis: flu", "Test:", "<answer>Test: MRI knee</answer>", "", "order", "\n"]
    totals = []
    for ep in range(40):
        env.reset(seed=ep)
        total, done = 0.0, False
        while not done:
            action = " ".join(rng.choice(words, size=int(rng.integers(1, 4))))
            _, r, done, _, info = env.step(action)
            total += r
        totals.append(total)
    assert np.mean(totals) < 0.3


def test_unrecorded_exam_is_synthesised_deterministically_and_marked_only_in_info():
    env = gym.make("DiagnosticWorkup-v1")
    env.reset(seed=3, options={"case_id": APPENDIX})
    obs1, _, _, _, info = env.step(order("Lipase"))
    assert info["exam_source"] == "synthesised" and "synthes" not in obs1.lower()
    env.reset(seed=3, options={"case_id": APPENDIX})
    obs2 = env.step(order("lipase"))[0]
    assert obs1 == obs2


def test_unknown_exam_gets_suggestions():
    env = gym.make("DiagnosticWorkup-v1")
    env.reset(seed=0)
    obs, r, terminated, _, info = env.step(order("quantum flux scan"))
    assert "not a recognised examination" in obs and info["exam_source"] == "unknown" and not terminated
    obs, *_ , info = env.step(order("complete blod count"))
    assert info["exam"] is not None


def test_answer_tag_format_and_multi_exam_modes():
    env = DiagnosticWorkupEnv(multi_exam="all")
    env.reset(seed=0, options={"case_id": APPENDIX})
    obs, _, _, _, info = env.step("<answer>Test: Complete Blood Count; C-Reactive Protein</answer>")
    assert "White Blood Cells" in obs and "C-Reactive Protein" in obs and len(info["exam"]) == 2
    env = DiagnosticWorkupEnv(multi_exam="reject")
    env.reset(seed=0, options={"case_id": APPENDIX})
    obs, *_ = env.step(order("CBC; CRP"))
    assert "one examination per turn" in obs
    env = DiagnosticWorkupEnv()  # "first"
    env.reset(seed=0, options={"case_id": APPENDIX})
    obs, *_ = env.step(order("CBC; CRP"))
    assert "White Blood Cells" in obs and "C-Reactive" not in obs


def test_turn_limit_ends_without_diagnosis_credit():
    env = gym.make("DiagnosticWorkup-v1", reward_config={"max_turns": 2})
    env.reset(seed=0, options={"case_id": APPENDIX})
    env.step(order("Complete Blood Count"))
    obs, r, terminated, _, info = env.step(order("Lipase"))
    assert terminated and info["outcome"]["result"] == "wrong"
    assert r == pytest.approx(0.5 * info["outcome"]["exam_f1"]) and info["reward_components"]["turn"] == 0.0


def test_wrong_diagnosis_keeps_exam_credit():
    env = gym.make("DiagnosticWorkup-v1")
    env.reset(seed=0, options={"case_id": APPENDIX})
    env.step(order("Complete Blood Count"))
    _, r, _, _, info = env.step(conclude("Migraine"))
    p, rec, f1 = 1.0, 0.5, 2 / 3
    assert (info["outcome"]["exam_precision"], info["outcome"]["exam_recall"]) == (p, rec)
    assert r == pytest.approx(0.5 * f1 + 0.1)


def test_exam_f1_uses_aliases():
    assert exam_f1(["CBC", "CT abdomen and pelvis with contrast"], ["Complete Blood Count", "CT abdomen and pelvis with contrast"]) == (1.0, 1.0, 1.0)
    assert exam_f1([], ["CBC"]) == (0.0, 0.0, 0.0)


@pytest.mark.parametrize("text,kind,value", [
    (order("Complete Blood Count", first=True), "order", ("Complete Blood Count",)),
    (order("[CT head without contrast]"), "order", ("CT head without contrast",)),
    ("Current diagnosis: sepsis\nBased on the current findings, the following additional investigation(s) are needed: Blood cultures, Lactate\nReason: x",
     "order", ("Blood cultures", "Lactate")),
    (conclude("Acute appendicitis"), "diagnosis", "Acute appendicitis"),
    ("<answer>Diagnosis: Gout</answer>", "diagnosis", "Gout"),
    ("Current diagnosis: appendicitis\nReason: none", "invalid", None),
    ("<answer>Question: any fever?</answer>", "invalid", None),
])
def test_parse_workup_actions(text, kind, value):
    a = parse_workup_action(text)
    assert a.kind == kind
    if kind == "order":
        assert a.exams == value
    elif kind == "diagnosis":
        assert a.diagnosis == value


def test_llm_world_model_uses_the_diaggym_completion_prompt():
    case = next(c for c in library() if c.id == APPENDIX)
    with serve([("ok", "WBC 15.2 K/uL<SEP>ignored")]) as url:
        client = OpenAICompatClient(base_url=url, model="diaggym", timeout=2, max_retries=0)
        env = DiagnosticWorkupEnv(world_model=client)
        env.reset(seed=0, options={"case_id": APPENDIX})
        obs, *_ , info = env.step(order("Complete Blood Count"))
        req = url.requests[0]
        assert req.path.endswith("/completions") and not req.path.endswith("chat/completions")
        assert req.body["prompt"] == diaggym_prompt(patient_profile(case), [], "Complete Blood Count")
        assert req.body["prompt"].endswith("<SEP>Exam name:\nComplete Blood Count\nExam results:\n")
        assert "Final diagnosis: Acute appendicitis" in req.body["prompt"]
        assert req.body["stop"] == DIAGGYM_STOP and req.body["temperature"] == 1.0
        assert "WBC 15.2 K/uL" in obs and "ignored" not in obs and info["exam_source"] == "llm"


def test_llm_world_model_chat_variant_and_history():
    with serve(default=lambda path, body: "normal") as url:
        client = OpenAICompatClient(base_url=url, model="m", timeout=2, max_retries=0)
        env = DiagnosticWorkupEnv(world_model=client, world_model_mode="chat")
        env.reset(seed=0, options={"case_id": APPENDIX})
        env.step(order("CBC"))
        env.step(order("Lipase"))
        body = url.requests[-1].body
        assert url.requests[-1].path.endswith("/chat/completions")
        cbc = load_catalogue().resolve("CBC").name
        assert f"Exam name:\n{cbc}\nExam results:\nnormal<SEP>Exam name:\nLipase" in body["messages"][-1]["content"]


def test_world_model_failure_truncates_the_episode_with_an_error(caplog):
    with serve([("status", 503)] * 4) as url:
        client = OpenAICompatClient(base_url=url, model="m", timeout=1, max_retries=1, backoff=0.01)
        env = DiagnosticWorkupEnv(world_model=client)
        env.reset(seed=0)
        with caplog.at_level("WARNING", logger="clinical_gym"):
            obs, r, terminated, truncated, info = env.step(order("CBC"))
        assert truncated and not terminated and r == 0.0 and "503" in info["error"] and "outcome" not in info
        assert obs == "The workup ended because the world model failed." and "world model failed" in caplog.text


def test_record_world_model_returns_recorded_text():
    case = next(c for c in library() if c.id == APPENDIX)
    wm = RecordWorldModel()
    wm.reset(case, 0)
    res = wm.result("CT abdomen and pelvis with contrast", [])
    assert res.source == "record" and "fat stranding" in res.text


def test_bad_constructor_arguments():
    with pytest.raises(ValueError, match="reward_config"):
        DiagnosticWorkupEnv(reward_config={"bogus": 1})
    with pytest.raises(ValueError, match="multi_exam"):
        DiagnosticWorkupEnv(multi_exam="many")
    with pytest.raises(ValueError, match="world_model='oracle' is not accepted"):
        DiagnosticWorkupEnv(world_model="oracle")


def test_synthesised_labs_follow_the_disease_table():
    """A result the case does not record is normal by default and shifted where the diagnosis implies it."""
    appendix = next(c for c in library() if c.id == APPENDIX)
    without_cbc = appendix.model_copy(update={"tests": tuple(t for t in appendix.tests if t.name != "Complete Blood Count")})
    migraine = next(c for c in library() if c.diagnosis.name == "Migraine without aura")
    migraine = migraine.model_copy(update={"tests": tuple(t for t in migraine.tests if "blood count" not in t.name.lower())})

    def wbc_flags(case):
        flags = []
        for seed in range(12):
            wm = RecordWorldModel()
            wm.reset(case, seed)
            res = wm.result("CBC", [])
            assert res.source == "synthesised"
            line = next(l for l in res.text.splitlines() if l.lower().startswith("white blood cells"))
            flags.append("Flag: abnormal" in line)
        return flags

    assert sum(wbc_flags(without_cbc)) >= 6  # appendicitis: WBC raised in 80% of patients
    assert not any(wbc_flags(migraine))


def test_llm_judge_for_diagnosis_and_exam_matching():
    def reply(path, body):
        content = body["messages"][-1]["content"]
        if "Examination A:" in content:
            return "yes" if "Procalcitonin" in content else "no"
        return "Score: 5"

    with serve(default=reply) as url:
        judge = OpenAICompatClient(base_url=url, model="judge", timeout=2, max_retries=0)
        env = DiagnosticWorkupEnv(judge=judge)
        env.reset(seed=0, options={"case_id": APPENDIX})
        env.step(order("Procalcitonin"))
        _, r, _, _, info = env.step(conclude("inflamed appendix"))
        out = info["outcome"]
        assert out["result"] == "correct" and "LLM judge" in out["reason"]
        assert out["exam_precision"] == 1.0  # the judge said Procalcitonin covers a key exam
        asked = [q.body["messages"][-1]["content"] for q in url.requests if "Examination A:" in q.body["messages"][-1]["content"]]
        assert asked and all("Procalcitonin" in a for a in asked)
