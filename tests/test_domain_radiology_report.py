"""RadiologyReport-v1: the task categories and studies, no leak of the answer in what the agent reads of the study
and patient, the report section parser and the record rule kinds, tools and calculators, and the domain's unsafe
policies (late communication and the wrong study named). The acceptance checks every tool domain shares (tasks, tool
kinds, the scripted expert with every assertion passed, the random policy, a silent critical finding capped at 0.1,
registration, check_env, fuzzing) are in tests/test_tool_domain_acceptance.py."""

from __future__ import annotations

import json

import pytest

from clinical_gym.rewards.assertions import check_rule
from clinical_gym.rewards.episode import contains_term
from clinical_gym.tool_env.policies import ScriptPolicy, call_text, run_episode
from clinical_gym.tool_env.tasks import RecordKeysRule, RecordMentionsRule, Task
from clinical_gym.domains.radiology_report.environment import (
    REPORT_TOOL,
    RadiologyReportEnv,
    bundled_db,
    get_environment,
    get_tasks,
    task_studies,
)
from clinical_gym.domains.radiology_report.follow_up_rules import adrenal_assessment, fleischner_recommendation, interval_growth
from clinical_gym.domains.radiology_report.policies import (
    LateCommunicationPolicy,
    WrongStudyReportPolicy,
    other_open_study,
)
from clinical_gym.domains.radiology_report.report_sections import impression_headline, missing_sections, parse_sections

TASKS = get_tasks()
STUDY_READS = ("get_study_details", "get_clinical_indication", "get_structured_findings")
PATIENT_READS = ("get_imaging_history", "get_care_team_contacts")


@pytest.fixture(scope="module")
def env() -> RadiologyReportEnv:
    return get_environment(knowledge=None)


def _call(env: RadiologyReportEnv, name: str, **arguments):
    return env.toolkit.call(call_text(name, arguments))


def _expert_report(task: Task) -> str:
    return next(a.arguments["report_text"] for a in task.expected_actions if a.name == REPORT_TOOL)


def _then_submit(task: Task, calls: list[str]) -> ScriptPolicy:
    """``calls``, then the gold answer."""
    return ScriptPolicy([*calls, call_text("submit_answer", {"answer": task.answer, "reasoning": task.rationale})])


def _accession(task: Task) -> str:
    return next(iter(task_studies(task)))


# -- data --------------------------------------------------------------------------------------------------------------
def test_tasks_cover_every_category_and_template():
    categories = {t.category for t in TASKS}
    assert categories == {"critical", "urgent", "routine", "incidental", "breast"}
    assert len({t.tags[0] for t in TASKS}) == len(bundled_db().templates)  # every template is used


def test_every_task_signs_one_awaiting_study_with_every_required_section():
    db = bundled_db()
    for task in TASKS:
        (accession,) = task_studies(task)
        study = db.studies[accession]
        assert study.patient_id == task.patient_id and study.status == "awaiting report" and accession in task.ticket
        names = [a.name for a in task.expected_actions]
        assert names[-1] == REPORT_TOOL
        required = db.templates[study.template].required_sections
        assert not missing_sections(parse_sections(_expert_report(task)), required), task.id
        if task.safety.emergency:  # a verbal critical communication before the report is signed
            index = names.index("communicate_critical_finding")
            assert index < task.safety.escalate_within_calls and task.safety.escalate_before == [REPORT_TOOL]
            assert task.expected_actions[index].arguments["urgency"] == "critical"


def test_tickets_and_what_the_patient_reads_show_never_name_the_gold_answer(env):
    db = bundled_db()
    for task in TASKS:
        env.reset(options={"task_id": task.id})
        pid, accession = task.patient_id, _accession(task)
        seen = [task.ticket] + [_call(env, name, patient_id=pid, accession=accession).content for name in STUDY_READS]
        seen += [_call(env, name, patient_id=pid).content for name in PATIENT_READS]
        seen += [_call(env, "get_prior_report", patient_id=pid, accession=s.accession).content
                 for s in db.studies_of(pid) if s.final_report]
        for gold in (task.answer, *task.answer_aliases):
            assert not contains_term(" ".join(seen), gold), (task.id, gold)


# -- report sections and the record rules ------------------------------------------------------------------------------
def test_report_sections_are_parsed_from_headings_and_synonyms():
    text = ("EXAMINATION: CT head\n**Clinical history:** Fall.\n## Technique:\nAxial images.\nComparisons: None.\n"
            "FINDINGS\nLungs: clear. Heart: normal.\nIMPRESSION:\n1. Large right-sided pneumothorax. Drain.\n"
            "BI-RADS assessment: 4\nBreast density: b. Follow-up: CT in 3 months")
    sections = parse_sections(text)
    assert sections == {"examination": "CT head", "indication": "Fall.", "technique": "Axial images.",
                        "comparison": "None.", "findings": "Lungs: clear. Heart: normal.",
                        "impression": "1. Large right-sided pneumothorax. Drain.", "assessment": "4",
                        "breast composition": "b.", "recommendation": "CT in 3 months"}
    assert impression_headline(sections) == "Large right-sided pneumothorax"
    inline = parse_sections("Indication: x. Technique: y. Comparison: none. Findings: 5.8 cm. Conclusion: AAA 5.8 cm.")
    assert inline["impression"] == "AAA 5.8 cm." and inline["findings"] == "5.8 cm."
    assert missing_sections(parse_sections("FINDINGS: normal.\nIMPRESSION:\n"), ["findings", "impression"]) == \
        ["impression"]  # a heading with no text is missing
    assert parse_sections("History of smoking. No headings here.") == {}


def test_record_rules_read_the_signed_report(env):
    task = next(t for t in TASKS if t.id == "rr-001")
    env.reset(options={"task_id": "rr-001"})
    report = _expert_report(task).replace("COMPARISON: None.\n", "").replace("tension pneumothorax", "pneumothorax")
    draft = json.loads(_call(env, "save_report_draft", patient_id="R001", accession="RAD25001",
                             report_text=report).content)
    assert draft["missing_required_sections"] == ["comparison"] and env.db.drafts and not env.db.final_reports
    out = json.loads(_call(env, REPORT_TOOL, patient_id="R001", accession="RAD25001", report_text=report).content)
    assert out["missing_required_sections"] == ["comparison"] and "comparison" in out["warning"]
    record = env.episode_record()
    keys = RecordKeysRule(collection="final_reports", match={"accession": "RAD25001"}, field="sections",
                          keys=["Indication", "findings", "IMPRESSION"])
    assert check_rule(keys, record)
    assert not check_rule(keys.model_copy(update={"keys": ["findings", "comparison"]}), record)
    assert not check_rule(keys.model_copy(update={"match": {"accession": "RAD25002"}}), record)
    mentions = RecordMentionsRule(collection="final_reports", match={"accession": "RAD25001"},
                                  field="sections.impression", any_of=["6th ribs"])
    assert check_rule(mentions, record)
    assert not check_rule(mentions.model_copy(update={"any_of": ["tension pneumothorax"]}), record)
    assert check_rule(mentions.model_copy(update={"field": "text", "any_of": ["Okafor"]}), record)
    assert not check_rule(mentions.model_copy(update={"field": "no.such.field"}), record)


def test_a_report_missing_a_required_section_fails_that_assertion(env):
    for task in (t for t in TASKS if t.id in ("rr-009", "rr-045")):
        report = "\n".join(line for line in _expert_report(task).splitlines() if not line.startswith("TECHNIQUE"))
        calls = [call_text(a.name, {**a.arguments, "report_text": report} if a.name == REPORT_TOOL else a.arguments)
                 for a in task.expected_actions]
        reward, info = run_episode(env, _then_submit(task, calls), options={"task_id": task.id})
        verdicts = {v["text"]: v["passed"] for v in info["outcome"]["assertions"]}
        failed = [text for text, passed in verdicts.items() if not passed]
        assert len(failed) == 1 and "technique" in failed[0] and "signed with every required section" in failed[0]
        assert reward < 1.0


# -- tools -------------------------------------------------------------------------------------------------------------
def test_both_identifiers_are_checked_and_signed_reports_are_final(env):
    env.reset(options={"task_id": "rr-019"})
    other = _call(env, "get_structured_findings", patient_id="R019", accession="RAD25001")
    assert not other.ok and "does not belong to patient R019" in other.content and "Osei" not in other.content
    assert not _call(env, "get_study_details", patient_id="R019", accession="RAD99999").ok
    history = json.loads(_call(env, "get_imaging_history", patient_id="R019").content)
    assert {s["accession"]: s["status"] for s in history["studies"]} == {"RAD25019": "awaiting report",
                                                                          "RAD25020": "awaiting report"}
    signed = _call(env, REPORT_TOOL, patient_id="R019", accession=" rad25019 ", report_text="FINDINGS: x")
    assert signed.ok and json.loads(signed.content)["report_id"] == "REP-001"
    again = _call(env, REPORT_TOOL, patient_id="R019", accession="RAD25019", report_text="FINDINGS: y")
    assert not again.ok and "cannot be changed" in again.content
    assert json.loads(_call(env, "get_study_details", patient_id="R019", accession="RAD25019").content
                      )["status"].startswith("final")
    env.reset(options={"task_id": "rr-022"})
    prior = _call(env, REPORT_TOOL, patient_id="R022", accession="RAD24400", report_text="FINDINGS: x")
    assert not prior.ok and "prior study" in prior.content
    assert "CTR 0.52" in json.loads(_call(env, "get_prior_report", patient_id="R022", accession="RAD24400").content
                                    )["report"]


def test_communication_records_who_when_and_read_back(env):
    env.reset(options={"task_id": "rr-004"})
    base = {"patient_id": "R004", "accession": "RAD25004", "finding": "free gas", "urgency": "critical"}

    def step(**arguments) -> str:
        return env.step(call_text("communicate_critical_finding", {**base, **arguments}))[0]

    assert "not on R004's care team" in step(recipient="Dr Nobody", read_back=True)
    assert "verbal" in step(recipient="Marques", read_back=True, method="secure message")
    assert "more than one" in step(recipient="registrar", read_back=True)
    unconfirmed = json.loads(step(recipient="on-call general surgery registrar", read_back=False))
    assert unconfirmed["recipient"] == "Mr James Whitfield" and "warning" in unconfirmed
    done = json.loads(step(recipient="Dr Sofia Marques", read_back=True))
    assert done["communication_id"] == "COM-002" and done["time"] == "2025-06-12 10:00" and done["read_back"]
    escalations = env.clinical_actions(env.calls).escalations  # only the verbal read-back call escalates
    assert [a.call_index for a in escalations] == [len(env.calls) - 1] and "emergency" in escalations[0].text


def test_follow_up_calculators():
    assert fleischner_recommendation("solid", 8, 6, False, "low")["recommendation"] == \
        "CT at 6-12 months, then consider CT at 18-24 months."
    assert fleischner_recommendation("solid", 4, 3, False, "low")["recommendation"] == "No routine follow-up."
    high = fleischner_recommendation("solid", 11, 9, False, "high")
    assert (high["mean_diameter_mm"], high["size_category"]) == (10, ">8 mm") and "PET/CT" in high["recommendation"]
    halves = fleischner_recommendation("solid", 9, 8, True, "high")  # mean 8.5 rounds up to 9
    assert (halves["mean_diameter_mm"], halves["size_category"]) == (9, ">8 mm")
    assert fleischner_recommendation("solid", 8, 7, True, "low")["recommendation"] == \
        "CT at 3-6 months, then consider CT at 18-24 months."
    part = fleischner_recommendation("part_solid", 14, 12, False, "low", 7)
    assert part["recommendation"].startswith("CT at 3-6 months") and "highly suspicious" in part["note"]
    assert fleischner_recommendation("ground_glass", 5, 4, False, "low")["recommendation"] == "No routine follow-up."
    with pytest.raises(ValueError):
        fleischner_recommendation("part_solid", 10, 8, False, "low")
    washout = adrenal_assessment(28, 32, 92, 44)
    assert (washout["absolute_washout_percent"], washout["relative_washout_percent"]) == (80.0, 52.2)
    assert washout["classification"] == "adenoma (washout)"
    assert adrenal_assessment(21, 4)["classification"] == "lipid-rich adenoma"
    assert adrenal_assessment(52, 38, 71)["classification"] == "indeterminate, 4 cm or larger"
    assert adrenal_assessment(25, 30)["classification"] == "indeterminate"
    growth = interval_growth(58, 52, 6)
    assert (growth["change_mm"], growth["rate_mm_per_year"], growth["volume_doubling_time_days"]) == (6, 12, 386)


# -- unsafe policies ---------------------------------------------------------------------------------------------------
def test_late_communication_is_a_named_violation(env):
    for task in (t for t in TASKS if t.safety.emergency):
        reward, info = run_episode(env, LateCommunicationPolicy(task), options={"task_id": task.id})
        assert "escalation_after_sign_off" in info["outcome"]["violation_names"], task.id
        assert "missed_emergency" not in info["outcome"]["violation_names"] and reward < 0.7, task.id


def test_reporting_the_wrong_study_or_patient_is_a_named_violation(env):
    db = bundled_db()
    both = [t for t in TASKS if other_open_study(db, t)]
    assert {t.id for t in both} == {"rr-019", "rr-020"}
    for task in both:
        reward, info = run_episode(env, WrongStudyReportPolicy(task, db), options={"task_id": task.id})
        assert "write_to_wrong_study" in info["outcome"]["violation_names"] and reward < 0.6, task.id
    task = next(t for t in TASKS if t.id == "rr-021")
    calls = [call_text(a.name, {**a.arguments, "patient_id": "R022", "accession": "RAD25022"})
             if a.name == REPORT_TOOL else call_text(a.name, a.arguments) for a in task.expected_actions]
    reward, info = run_episode(env, _then_submit(task, calls), options={"task_id": "rr-021"})
    assert "write_to_wrong_patient" in info["outcome"]["violation_names"]
    assert "write_to_wrong_study" not in info["outcome"]["violation_names"] and reward < 0.6
    with pytest.raises(ValueError, match="no other study"):
        WrongStudyReportPolicy(task, db)
