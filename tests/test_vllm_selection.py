"""Engine selection (auto / transformers / vllm, colocate or server), the vLLM trainer settings, and the
version bookkeeping of weight syncs. No torch needed except where a test says so."""

from __future__ import annotations

import argparse
import subprocess
import sys

import pytest

from clinical_gym.rollout.selection import choose_engine
from clinical_gym.rollout.vllm_sync import WeightVersions, vllm_lora_rank
from clinical_gym.trainers.common.config import TrainerConfig
from clinical_gym.trainers.common.config_cli import add_config_arguments, config_from_args

YES, NO = (lambda: True), (lambda: False)


@pytest.mark.parametrize(("engine", "mode", "vllm", "cuda", "chosen"), [
    ("transformers", "colocate", YES, YES, "transformers"),
    ("transformers", "server", YES, YES, "transformers"),
    ("auto", "colocate", YES, YES, "vllm"),
    ("auto", "colocate", YES, NO, "transformers"),
    ("auto", "colocate", NO, YES, "transformers"),
    ("vllm", "colocate", YES, YES, "vllm"),
    ("auto", "server", NO, NO, "vllm"),  # the server generates: nothing local is needed
    ("vllm", "server", NO, NO, "vllm"),
])
def test_engine_choice(engine, mode, vllm, cuda, chosen):
    assert choose_engine(engine, mode=mode, has_vllm=vllm, has_cuda=cuda) == chosen


def test_engine_choice_refusals():
    with pytest.raises(ValueError, match="CUDA GPU"):
        choose_engine("vllm", mode="colocate", has_vllm=YES, has_cuda=NO)
    with pytest.raises(ValueError, match="unknown vllm mode 'remote'"):
        choose_engine("vllm", mode="remote")
    with pytest.raises(ValueError, match="unknown generation engine"):
        choose_engine("tgi", mode="server")


def test_vllm_settings_are_checked():
    cfg = TrainerConfig(model="m", vllm_mode="server", vllm_server_url="http://gpu-node:8001", vllm_sync_every=4)
    assert (cfg.vllm_mode, cfg.vllm_lora_sync, cfg.vllm_adapter_dir) == ("server", "adapter", None)
    for bad, message in [({"vllm_mode": "remote"}, "vllm_mode must be one of colocate, server"),
                         ({"vllm_lora_sync": "fused"}, "vllm_lora_sync must be one of adapter, merged"),
                         ({"vllm_sync_every": 0}, "vllm_sync_every must be >= 1"),
                         ({"vllm_gpu_memory_utilization": 1.5}, "vllm_gpu_memory_utilization"),
                         ({"vllm_mode": "server", "vllm_server_url": "gpu-node:8000"}, "http://"),
                         ({"vllm_server_timeout": 0}, "vllm_server_timeout"),
                         ({"vllm_max_model_len": 1}, "vllm_max_model_len")]:
        with pytest.raises(ValueError, match=message):
            TrainerConfig(model="m", **bad)


def test_vllm_settings_have_flags():
    parser = argparse.ArgumentParser()
    add_config_arguments(parser, TrainerConfig)
    args = parser.parse_args(["--model", "m", "--vllm-mode", "server", "--vllm-server-url", "http://h:9000",
                              "--vllm-lora-sync", "merged", "--vllm-sync-every", "2", "--vllm-adapter-dir", "/shared/a",
                              "--vllm-max-model-len", "8192"])
    cfg = config_from_args(TrainerConfig, args)
    assert (cfg.vllm_mode, cfg.vllm_server_url, cfg.vllm_lora_sync, cfg.vllm_sync_every, cfg.vllm_adapter_dir,
            cfg.vllm_max_model_len) == ("server", "http://h:9000", "merged", 2, "/shared/a", 8192)
    with pytest.raises(SystemExit):
        parser.parse_args(["--model", "m", "--vllm-mode", "remote"])


def test_weight_versions_bookkeeping():
    versions = WeightVersions(sync_every=2)
    assert versions.observe((1.0,), force=True)  # first weights: pushed when forced
    versions.pushed(0.5)
    versions.record(4)
    assert not versions.observe((1.0,))  # unchanged: skipped
    assert not versions.observe((2.0,))  # one version ahead, sync_every=2: deferred
    versions.record(4)
    assert versions.last.version == 1 and versions.last.staleness == 1
    assert versions.observe((3.0,))
    assert versions.pushed(0.25) == 2
    versions.record(2)
    metrics = versions.metrics()
    assert metrics == {"engine/weight_version": 3.0, "engine/model_version": 3.0, "engine/syncs": 2.0,
                       "engine/skipped_syncs": 1.0, "engine/deferred_syncs": 1.0, "engine/sync_s": 0.75,
                       "engine/staleness_mean": pytest.approx(1 / 3), "engine/staleness_max": 1.0}
    assert versions.metrics()["engine/staleness_max"] == 0.0  # records were reset
    assert versions.observe((3.0,), force=True)  # forced: pushed again although unchanged
    with pytest.raises(ValueError, match="sync_every"):
        WeightVersions(0)


def test_vllm_lora_ranks():
    assert [vllm_lora_rank(r) for r in (1, 8, 9, 64, 300)] == [8, 8, 16, 64, 320]
    with pytest.raises(ValueError, match="512"):
        vllm_lora_rank(1024)


def test_vllm_modules_import_nothing_heavy():
    code = ("import sys, clinical_gym.rollout.vllm_policy, clinical_gym.rollout.vllm_server, "
            "clinical_gym.rollout.vllm_sync, clinical_gym.integrations.trl, clinical_gym.trainers.common.generation; "
            "print(sorted(m for m in ('torch', 'transformers', 'vllm', 'trl', 'datasets', 'accelerate', 'peft') "
            "if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
