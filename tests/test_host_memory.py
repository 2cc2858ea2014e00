"""A CPU training step's resident memory (trainers/common/host_memory.py): the heap trim really lowers resident
memory, a lowered mmap threshold keeps freed blocks from staying resident, both run only on the CPU when asked, and
GRPO's and PPO's updates call them around each backward pass and after each optimizer step."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

torch = pytest.importorskip("torch", reason="the trainers need the [train] extra")

from accelerate import Accelerator  # noqa: E402
from test_grpo_objective import trajectory  # noqa: E402
from test_grpo_toy_env import one_torch_thread  # noqa: E402,F401

from clinical_gym.trainers.common import host_memory  # noqa: E402
from clinical_gym.trainers.common.batch import pack  # noqa: E402
from clinical_gym.trainers.common.tiny_models import tiny_llama, tiny_tokenizer  # noqa: E402

pytestmark = pytest.mark.usefixtures("one_torch_thread")

GLIBC = host_memory.can_release()

# A process whose heap keeps 256 MiB of freed tensors resident: blocks up to 64 MiB come from the heap (as they do
# once glibc's threshold has risen), and a block allocated after them pins the heap's top, so glibc cannot shrink
# the heap by itself when they are freed.
FRAGMENTED = """
import json, torch
from clinical_gym.trainers.common.host_memory import release_freed_memory, set_mmap_threshold
set_mmap_threshold(64 << 20)
def rss(): return int(open("/proc/self/statm").read().split()[1]) * 4096 / 2**20
blocks = [torch.ones(2**18) for _ in range(256)]  # 256 x 1 MiB, written
pin = torch.ones(2**18)
held = rss()
del blocks
freed = rss()
released = release_freed_memory()
print(json.dumps({"held": held, "freed": freed, "after": rss(), "released": released}))
"""


# The same blocks allocated after the backward pass's threshold is set: each has its own mapping, and freeing them
# gives the memory back at once, with no trim.
MAPPED = FRAGMENTED.replace("blocks = [", "from clinical_gym.trainers.common.host_memory import "
                            "BACKWARD_MMAP_THRESHOLD\nassert set_mmap_threshold(BACKWARD_MMAP_THRESHOLD)\nblocks = [")


def _resident_mib(script: str) -> dict:
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


@pytest.mark.skipif(not GLIBC, reason="malloc_trim is glibc's; elsewhere the release is documented to do nothing")
def test_blocks_of_the_backward_threshold_go_back_when_freed():
    mib = _resident_mib(MAPPED)
    assert mib["held"] - mib["freed"] > 200  # gone with the free, before any trim


@pytest.mark.skipif(not GLIBC, reason="malloc_trim is glibc's; elsewhere the release is documented to do nothing")
def test_release_gives_freed_heap_blocks_back_to_the_system():
    mib = _resident_mib(FRAGMENTED)
    assert mib["held"] - mib["freed"] < 32  # freeing alone leaves the blocks resident (the problem)
    assert mib["freed"] - mib["after"] > 200  # the release returns (nearly all of) the 256 MiB
    assert mib["released"] is True


def test_host_memory_runs_only_on_the_cpu_when_asked(monkeypatch):
    events = _record_calls(monkeypatch)
    gpu, off = host_memory.HostMemory.for_device(torch.device("cuda"), True), host_memory.HostMemory.for_device(
        "cpu", False)
    for host in (gpu, off):
        host.before_backward()
        host.after_step()
        assert not host.enabled and host.releases == 0
    assert events == []
    cpu = host_memory.HostMemory.for_device(torch.device("cpu"), True)
    cpu.before_backward()
    cpu.after_step()
    assert cpu.enabled and cpu.releases == 2
    assert events == ["release", "threshold 1048576", "threshold 33554432", "release"]


def test_nothing_is_done_without_glibc(monkeypatch):
    monkeypatch.setattr(host_memory, "_libc_function", lambda name, argtypes: None)
    assert not host_memory.can_release()
    assert host_memory.release_freed_memory() is False and host_memory.set_mmap_threshold(1 << 20) is False
    host = host_memory.HostMemory.for_device("cpu", True)
    host.before_backward()
    assert not host.enabled and host.releases == 0


def _record_calls(monkeypatch) -> list[str]:
    """Trims ("release") and threshold changes ("threshold N") in order, instead of making them."""
    events: list[str] = []
    fake = {"malloc_trim": lambda _pad: events.append("release") or 1,
            "mallopt": lambda param, value: events.append(f"threshold {value}") or 1}
    monkeypatch.setattr(host_memory, "_libc_function", lambda name, argtypes: fake[name])
    return events


def _order_of_releases(monkeypatch, model) -> tuple[list[str], set[int]]:
    """What happened, in order: trims and threshold changes, "backward" (the first gradient of a step arrives) and
    "step" (``optimizer.step`` clears the set of parameters seen)."""
    events = _record_calls(monkeypatch)
    seen: set[int] = set()

    def arrived(p):
        if not seen:
            events.append("backward")
        seen.add(id(p))

    for p in model.parameters():
        p.register_post_accumulate_grad_hook(arrived)
    return events, seen


AROUND_A_STEP = ["release", "threshold 1048576", "backward", "step", "threshold 33554432", "release"]


@pytest.mark.parametrize("release", [True, False])
def test_grpo_update_releases_before_each_backward_and_after_each_step(monkeypatch, release):
    from clinical_gym.trainers.grpo.config import GRPOConfig
    from clinical_gym.trainers.grpo.train import update

    model = tiny_llama(tiny_tokenizer())
    events, seen = _order_of_releases(monkeypatch, model)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    optimizer.register_step_pre_hook(lambda *_: (events.append("step"), seen.clear()) and None)
    scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, lambda _: 1.0)
    cfg = GRPOConfig(model="unused", micro_batch_size=2, num_minibatches=2, beta=0.0, ref_kl_monitor=False,
                     release_host_memory=release)
    batch = pack([trajectory([10 + i] * (i + 1), float(i % 2), group=i // 2) for i in range(4)],
                 [1.0, -1.0, 0.5, -0.5], pad_token_id=0)
    update(model, batch, cfg, Accelerator(cpu=True), optimizer, scheduler, torch.Generator().manual_seed(0))
    assert events == (AROUND_A_STEP * 2 if release else ["backward", "step"] * 2)


def test_ppo_update_releases_before_each_backward_and_after_each_step(monkeypatch):
    from clinical_gym.rollout import Trajectory, Turn
    from clinical_gym.trainers.common.model import Reference
    from clinical_gym.trainers.common.value_head import PolicyWithValueHead, ValueHead
    from clinical_gym.trainers.ppo import train as ppo
    from clinical_gym.trainers.ppo.config import PPOConfig

    base = tiny_llama(tiny_tokenizer())
    model = PolicyWithValueHead(base, ValueHead(base.config.hidden_size))
    events, seen = _order_of_releases(monkeypatch, model)
    trajectories = [Trajectory(opening_ids=[1, 2, 3], messages=[], reward=float(i % 2),
                               turns=[Turn(prompt_len=3, generated_ids=[5 + i, 6], logprobs=[-1.0, -1.0],
                                           finish_reason="stop", action="", env_ids=[], reward=float(i % 2))])
                    for i in range(4)]
    cfg = PPOConfig(model="unused", micro_batch_size=2, num_minibatches=2, kl_coef=0.0)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    optimizer.register_step_pre_hook(lambda *_: (events.append("step"), seen.clear()) and None)
    scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, lambda _: 1.0)
    batch = ppo.PPOBatch(**vars(pack(trajectories, [0.0] * 4, pad_token_id=0)))
    batch = ppo.add_rollout_estimates(model, model.policy, Reference(model.policy, needed=False), batch, cfg)
    ppo.prepare_and_update(model, batch, trajectories, cfg, Accelerator(cpu=True), optimizer, scheduler,
                           torch.Generator().manual_seed(0), None)
    assert events == AROUND_A_STEP * 2
