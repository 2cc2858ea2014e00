"""``clinical-gym bench`` (run, show, compare) and ``clinical-gym plot``: output, and one-line errors with exit 2."""

from __future__ import annotations

import json
import re

import pytest

import clinical_gym.cli as cli


@pytest.fixture(scope="module", autouse=True)
def bench_commands():
    """The bench and plot modules wired into the CLI (as in COMMAND_MODULES)."""
    extra = tuple(m for m in ("bench", "plot") if m not in cli.COMMAND_MODULES)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(cli, "COMMAND_MODULES", cli.COMMAND_MODULES + extra)
        yield


def one_error_line(capsys, *args: str) -> str:
    assert cli.main(list(args)) == 2
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("clinical-gym: error:"), lines
    return lines[0]


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory):
    out = tmp_path_factory.mktemp("bench")
    assert cli.main(["bench", "--env", "DiagnosticWorkup-v1", "--agent", "oracle,baseline", "--episodes", "3",
                     "--out", str(out), "--no-progress"]) == 0
    return out


def test_bench_runs_and_prints_the_overview_and_where_the_report_is(run_dir, capsys):
    assert cli.main(["bench", "--env", "DiagnosticWorkup-v1", "--agent", "oracle,baseline", "--episodes", "3",
                     "--out", str(run_dir), "--no-progress"]) == 0  # resumed: nothing left to play
    out = capsys.readouterr().out
    assert "| oracle | 1.00 [1.00, 1.00] |" in out and f"report: {run_dir / 'report.md'}" in out


def test_bench_show_prints_one_transcript(run_dir, capsys):
    assert cli.main(["bench", "show", str(run_dir), "--episode", "1", "--agent", "oracle"]) == 0
    out = capsys.readouterr().out
    assert "DiagnosticWorkup-v1 · oracle (oracle (ground truth)) · episode 1" in out
    assert "--- turn 1" in out and "[agent] Current diagnosis" in out and "status: ok" in out


def test_bench_compare_prints_differences_with_intervals(run_dir, tmp_path, capsys):
    other = tmp_path / "other"
    assert cli.main(["bench", "--env", "DiagnosticWorkup-v1", "--agent", "baseline", "--episodes", "3",
                     "--out", str(other), "--no-progress", "--seed", "0"]) == 0
    capsys.readouterr()
    assert cli.main(["bench", "compare", str(run_dir), str(other)]) == 0
    out = capsys.readouterr().out
    assert "DiagnosticWorkup-v1 · baseline vs baseline: 3 paired episodes over 3 tasks (A played 3, B 3)" in out
    assert re.search(r"exam_f1 +\d\.\d{3} +\d\.\d{3} +\+0\.000 \[\+0\.000, \+0\.000\]\n", out)  # same agent, same episodes


@pytest.mark.parametrize("args, message", [
    (("bench", "--agent", "oracle", "--out", "x"), "bench needs --env"),
    (("bench", "--env", "NoSuchEnv-v0", "--agent", "oracle", "--out", "{tmp}"), "unknown environment NoSuchEnv-v0"),
    (("bench", "--env", "all", "--agent", "wizard", "--out", "{tmp}"), "bad agent spec 'wizard'"),
    (("bench", "--env", "DiagnosticWorkup-v1", "--agent", "checklist", "--out", "{tmp}"), "does not play"),
    (("bench", "--env", "all", "--agent", "oracle", "--env-kwargs", "{{not json", "--out", "{tmp}"), "not JSON"),
    (("bench", "--env", "all", "--agent", "oracle", "--episodes", "0", "--out", "{tmp}"), "at least 1"),
    (("bench", "--env", "all", "--agent", "oracle", "--cases", "generated:common", "--out", "{tmp}"),
     "say how many cases"),
    (("bench", "--env", "ClinicalInquiry-v1", "--agent", "checkpoint:/no/such/run", "--out", "{tmp}"),
     "no checkpoint in /no/such/run"),
    (("bench", "show", "{tmp}", "--episode", "0"), "no results in"),
    (("bench", "compare", "{tmp}", "{tmp}"), "no results in"),
    (("plot", "{tmp}"), "no metrics.jsonl in"),
])
def test_errors_are_one_line_with_exit_2(capsys, tmp_path, args, message):
    line = one_error_line(capsys, *(a.format(tmp=tmp_path) for a in args))
    assert message in line


def test_show_asks_which_run_when_an_episode_is_ambiguous(run_dir, capsys):
    assert "pass --env and --agent" in one_error_line(capsys, "bench", "show", str(run_dir), "--episode", "0")
    assert "no episode 7" in one_error_line(capsys, "bench", "show", str(run_dir), "--episode", "7")


def test_plot_draws_the_training_panels_from_a_metrics_file(tmp_path, capsys):
    rows = [{"step": s, "rollout/reward_mean": -11.0 + s, "env/inquiry/success_rate": 0.1 * s,
             "rollout/gen_tokens_per_turn": 30.0 + s, "rollout/turns_per_episode": 3.0,
             "rollout/tool_calls_per_episode": 0.0, "losses/kl_ref": None if s == 1 else 0.01 * s,
             "rollout/group_reward_std": 0.5} for s in (1, 2, 3)]
    (tmp_path / "metrics.jsonl").write_text("\n".join(json.dumps(r) for r in rows) + "\n{cut sho")
    assert cli.main(["plot", str(tmp_path)]) == 0
    png = tmp_path / "plots" / "training_curves.png"
    assert capsys.readouterr().out.strip() == str(png)
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and png.stat().st_size > 10_000
    (tmp_path / "metrics.jsonl").write_text("not json\n")
    assert "holds no metric rows" in one_error_line(capsys, "plot", str(tmp_path))
