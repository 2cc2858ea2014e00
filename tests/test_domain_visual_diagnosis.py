"""VisualDiagnosis-v0 beyond the shared acceptance suite: images as OpenAI content parts and in ``info["images"]``,
the text-only ``image_mode="describe"``, tools that show more images, the critical-finding safety patterns, the
calculators on their boundaries, and the task generator (valid sets, reproducible bundled data, held-out layouts)."""

from __future__ import annotations

import io
import json

import numpy as np
import pytest
from PIL import Image

from clinical_gym.content_parts import data_url_bytes, first_text, image_urls, text_of
from clinical_gym.domains.visual_diagnosis import generator as gen
from clinical_gym.domains.visual_diagnosis.environment import get_environment, get_tasks
from clinical_gym.domains.visual_diagnosis.policies import ReassuringReaderPolicy
from clinical_gym.domains.visual_diagnosis.studies import describe
from clinical_gym.rewards.episode import contains_term
from clinical_gym.tool_env.generation import validate_generated
from clinical_gym.tool_env.policies import ExpertToolPolicy, call_text, run_episode

STEMI = "vd-0-9"  # inferior STEMI (the 10th condition)
NORMAL = "vd-0-0"  # normal sinus rhythm


@pytest.fixture(scope="module")
def env():
    return get_environment(knowledge=None)


@pytest.fixture(scope="module")
def described():
    return get_environment(knowledge=None, image_mode="describe")


def png_of(url: str) -> Image.Image:
    return Image.open(io.BytesIO(data_url_bytes(url)))


def test_the_image_comes_as_content_parts_and_in_info(env):
    obs, info = env.reset(options={"task_id": STEMI})
    task = env.task
    assert obs == task.prompt and "data:image" not in obs
    content = env.messages[-1]["content"]
    assert [p["type"] for p in content] == ["text", "text", "image_url"]
    assert first_text(content) == obs and "[Image 1: 12-lead ECG" in text_of(content)
    assert image_urls(content) == info["images"] and len(info["images"]) == 1
    image = png_of(info["images"][0])
    assert image.format == "PNG" and image.width > 1000  # 250 mm of trace at 5 px/mm
    assert env.messages[0]["role"] == "system" and isinstance(env.messages[0]["content"], str)


def test_tools_that_show_a_study_attach_the_next_image(env):
    env.reset(options={"task_id": STEMI})
    obs, _, _, _, info = env.step(call_text("get_prior_study", {"patient_id": env.task.patient_id}))
    assert "[Image 2: 12-lead ECG" in obs and len(info["images"]) == 1
    assert image_urls(env.messages[-1]["content"]) == info["images"]
    study = gen.study_of(env.task)
    obs, _, _, _, info = env.step(call_text("get_rhythm_strip", {"study_id": study, "lead": "V1"}))
    assert "[Image 3: ECG rhythm strip (lead V1)" in obs and png_of(info["images"][0]).height < 500
    obs, _, _, _, info = env.step(call_text("get_measurements", {"study_id": study}))
    assert info["images"] == [] and isinstance(env.messages[-1]["content"], str)
    assert json.loads(obs)["ventricular_rate_bpm"] > 0


def test_describe_mode_is_text_only_and_never_names_the_answer(described):
    for task in get_tasks():
        obs, info = described.reset(options={"task_id": task.id})
        assert info["images"] == [] and all(isinstance(m["content"], str) for m in described.messages)
        assert "Reader's description" in obs and obs.startswith(task.prompt)
        description = describe(described.db.studies[gen.study_of(task)])
        assert not contains_term(description, task.options[task.answer]), task.id
    described.reset(options={"task_id": STEMI})
    obs, *_ = described.step(call_text("get_prior_study", {"patient_id": described.task.patient_id}))
    assert "description" in json.loads(obs)


def test_the_expert_scores_1_in_both_modes(env, described):
    for e in (env, described):
        for task_id in (STEMI, NORMAL, "vd-0-24", "vd-0-30"):
            task = next(t for t in get_tasks() if t.id == task_id)
            reward, info = run_episode(e, ExpertToolPolicy(task), options={"task_id": task_id})
            assert reward == 1.0 and info["outcome"]["success"], (task_id, info["outcome"]["scores"])


def test_a_missed_stemi_is_a_critical_violation_unless_named_or_acted_on(env):
    task = next(t for t in get_tasks() if t.id == STEMI)
    reward, info = run_episode(env, ReassuringReaderPolicy(task), options={"task_id": STEMI})
    assert reward <= 0.1 and {"stemi_missed", "missed_emergency"} <= set(info["outcome"]["violation_names"])
    benign = next(k for k, v in task.options.items() if k != task.answer and "myocardial" not in v.lower())
    negated = [call_text("submit_answer", {"answer": benign, "reasoning": "There is no STEMI here."})]
    _, info = run_episode(env, _Script(negated), options={"task_id": STEMI})
    assert "stemi_missed" in info["outcome"]["violation_names"]  # a negated mention does not recognise it
    escalated = [call_text("escalate_care", {"patient_id": task.patient_id, "pathway":
                                             "cath lab activation (primary PCI)", "reason": "ST elevation"}),
                 call_text("submit_answer", {"answer": benign})]
    _, info = run_episode(env, _Script(escalated), options={"task_id": STEMI})
    names = info["outcome"]["violation_names"]
    assert "stemi_missed" not in names and "missed_emergency" not in names  # acted on, though misnamed


def test_a_missed_category_iii_tracing_and_a_needless_escalation(env):
    tasks = get_tasks()
    cat3 = next(t for t in tasks if "ctg:absent_late" in t.tags)
    _, info = run_episode(env, ReassuringReaderPolicy(cat3), options={"task_id": cat3.id})
    assert "category_iii_tracing_missed" in info["outcome"]["violation_names"]
    vt = next(t for t in tasks if "ecg:ventricular_tachycardia" in t.tags)
    _, info = run_episode(env, ReassuringReaderPolicy(vt), options={"task_id": vt.id})
    assert "critical_tracing_finding_missed" in info["outcome"]["violation_names"]
    normal = next(t for t in tasks if t.id == NORMAL)
    needless = [call_text("escalate_care", {"patient_id": normal.patient_id, "pathway": "resuscitation team",
                                            "reason": "worried"}), call_text("submit_answer", {"answer": "A"})]
    _, info = run_episode(env, _Script(needless), options={"task_id": NORMAL})
    assert "unnecessary_escalation" in info["outcome"]["violation_names"]
    with pytest.raises(ValueError, match="no emergency finding"):
        ReassuringReaderPolicy(normal)


def test_calculators_at_their_boundaries(env):
    env.reset(options={"task_id": NORMAL})
    tools = env.domain_tools
    assert tools.calculate_qtc(qt_ms=450, heart_rate_bpm=60)["bazett_verdict"] == "prolonged in men (450 ms or more)"
    assert tools.calculate_qtc(qt_ms=449, heart_rate_bpm=60)["bazett_verdict"] == "not prolonged"
    assert tools.calculate_qtc(qt_ms=500, heart_rate_bpm=60)["bazett_verdict"] == "high risk (500 ms or more)"
    assert tools.calculate_heart_rate(large_squares=4)["heart_rate_bpm"] == 75
    assert tools.calculate_frontal_axis(lead_i_net_mm=5, lead_avf_net_mm=0)["axis_deg"] == 0
    assert tools.calculate_frontal_axis(lead_i_net_mm=5, lead_avf_net_mm=-10)["category"] == "left axis deviation"
    met = tools.check_stemi_criteria(st_elevation_mm={"V2": 2, "V3": 2}, sex="male", age=40)
    assert met["criteria_met"] and not tools.check_stemi_criteria(st_elevation_mm={"V2": 2, "V3": 2}, sex="male",
                                                                  age=39)["criteria_met"]
    with pytest.raises(ValueError, match="unknown lead"):
        tools.check_stemi_criteria(st_elevation_mm={"V7": 2}, sex="male", age=50)
    found = tools.interpret_spirometry(fev1_l=2.1, fvc_l=3.0, fev1_pct_predicted=80, fvc_pct_predicted=95)
    assert found["fev1_fvc_ratio"] == 0.7 and not found["airflow_obstruction"]
    assert tools.classify_ctg(baseline_bpm=95, variability_amplitude_bpm=0, accelerations=False,
                              late_decelerations="none", variable_decelerations="none")["category"] == "Category III"


def test_generated_tasks_are_valid_and_reproducible():
    generator = gen.VisualDiagnosisGenerator()
    made = generator.generate(8, seed=3, split="train")
    assert validate_generated(made, generator, play=True) == []  # the expert scores exactly 1.0 on each
    again = generator.generate(8, seed=3, split="train")
    assert [t.model_dump() for t in made.tasks] == [t.model_dump() for t in again.tasks]
    assert made.db.get_hash() == again.db.get_hash()


def test_the_test_split_holds_layouts_the_train_split_never_shows():
    generator = gen.VisualDiagnosisGenerator()
    train, test = generator.generate(12, seed=1, split="train"), generator.generate(12, seed=1, split="test")
    train_keys = {generator.pool_key(t) for t in train.tasks}
    test_keys = {generator.pool_key(t) for t in test.tasks}
    assert train_keys and test_keys and not train_keys & test_keys
    assert {s.layout for s in test.db.studies.values()} == {"alternate"}


def test_the_bundled_data_is_what_the_generator_makes(tmp_path):
    gen.write_bundled(tmp_path)
    bundled = json.loads((tmp_path / "tasks.json").read_text())
    assert [t.model_dump(mode="json", exclude_unset=True) for t in get_tasks()] == bundled
    assert len(bundled) >= 40 and {t["category"] for t in bundled} == {"ecg_12_lead", "ctg", "spirometry",
                                                                        "audiogram"}


def test_bad_image_mode_is_refused():
    with pytest.raises(ValueError, match="image_mode must be"):
        get_environment(knowledge=None, image_mode="pixels")


class _Script:
    def __init__(self, replies: list[str]) -> None:
        self.replies = replies

    def __call__(self, messages) -> str:  # noqa: ANN001
        turn = sum(1 for m in messages if m["role"] == "assistant")
        return self.replies[min(turn, len(self.replies) - 1)]


def test_every_study_image_renders(env):
    db = env.base_db
    kinds = {}
    for study in list(db.studies.values())[::6]:
        from clinical_gym.domains.visual_diagnosis.studies import png

        image = Image.open(io.BytesIO(png(study, db.patients[study.patient_id])))
        kinds.setdefault(study.kind, image.size)
        assert image.width >= 500 and np.asarray(image.convert("L")).std() > 10  # not blank
    assert len(kinds) >= 4


def test_gym_make_takes_generated_tasks():
    import gymnasium as gym

    made = gym.make("VisualDiagnosis-v0", tasks="generated:4", split="test", task_seed=2, knowledge=None).unwrapped
    assert len(made.tasks) == 4 and {t.split for t in made.tasks} == {"test"}
    _, info = made.reset(options={"task_id": made.tasks[0].id})
    assert len(info["images"]) == 1 and made.db.studies[gen.study_of(made.tasks[0])].layout == "alternate"
