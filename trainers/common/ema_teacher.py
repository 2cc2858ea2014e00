"""A teacher policy that trails the student: an exponential moving average (EMA) of its weights,
θ_T ← α θ_T + (1 − α) θ_S (Tarvainen & Valpola, 2017), and hard copies θ_T ← θ_S.

For a peft LoRA model the teacher is a second adapter (``"teacher"``) in the same model, switched in for the
teacher's logprobs: the EMA runs over adapter weights only and costs no second base model. Otherwise the teacher is
a frozen copy of the whole model, in the model's dtype or, with ``dtype=torch.bfloat16``, stored in bfloat16 (half
the memory of a float32 copy; it still computes in the model's dtype, ``_widened``). A bfloat16 model's teacher
keeps a float32 master copy so that small EMA steps are not rounded away; a float32 model's teacher stored in
bfloat16 instead rounds each EMA result stochastically (up or down with the probabilities that make the expected
rounded value the exact one), so small steps move it on average too, without a master copy. What the lower precision does to the teacher's log-probabilities and to the
distillation term is bounded in tests/test_ttopd_teacher.py and trainers/ttopd/README.md.

Checkpoints: ``save_with_checkpoint`` writes the teacher (weights and counters) inside the trainer's checkpoint
folder as ``teacher/``, atomically with it: the teacher is staged first, so a checkpoint that exists always has its
teacher (``load_from_checkpoint``).
"""

from __future__ import annotations

import copy
import json
import os
import shutil
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import torch

from clinical_gym.trainers.common.logprobs import token_logprobs
from clinical_gym.trainers.common.model import eval_mode

LOW_PRECISION = (torch.float16, torch.bfloat16)
STOCHASTIC_SEED = 0x7EAC  # + the step: the stochastic rounding of an EMA update is the same on resume
TEACHER_DIR = "teacher"
WEIGHTS_FILE = "teacher.safetensors"
STATE_FILE = "teacher.json"
STAGED_PREFIX = ".teacher-"


class EMATeacher:
    """The teacher of ``model`` (its unwrapped policy), initialised to the student's weights.

    ``ema_update``/``copy_from`` move it; ``logprobs`` scores tokens under it; ``age`` says how many steps ago it
    was last moved. ``state_dict``/``load_state_dict`` hold its weights (float32 master copies included) and
    counters.
    """

    def __init__(self, model: Any, adapter_name: str = "teacher", dtype: torch.dtype | None = None) -> None:
        """``dtype``: the storage dtype of a full copy (None: the model's); adapters keep the model's."""
        self.uses_adapters = hasattr(model, "peft_config")
        self.adapter_name = adapter_name
        self.copy: Any | None = None
        if self.uses_adapters:
            self.student_adapter = model.active_adapter
            if adapter_name == self.student_adapter:
                raise ValueError(f"the teacher adapter needs its own name, not the student's ({adapter_name!r})")
            if adapter_name not in model.peft_config:
                model.add_adapter(adapter_name, copy.deepcopy(model.peft_config[self.student_adapter]))
        else:
            self.copy = _copy_stored_as(model, dtype).eval().requires_grad_(False)
        self.compute_dtype = next(model.parameters()).dtype
        self.bind(model)
        self.ema_updates = 0
        self.copies = 0
        self.last_ema_step = 0
        self.last_copy_step = 0
        self.copy_from(step=0)
        self.copies = 0

    def bind(self, model: Any) -> None:
        """Pair every teacher weight with the student's by name. Called again after ``clinical_gym.trainers.common.
        sharding.shard`` replaced the weights of the student (and of the teacher's copy, sharded the same way): the
        teacher is made (its adapter added, its copy taken) before sharding, and bound to the sharded weights after."""
        if self.uses_adapters:
            pairs = _adapter_pairs(model, self.student_adapter, self.adapter_name)
        else:
            teacher_params = dict(self.copy.named_parameters())
            pairs = [(name, teacher_params[name], p) for name, p in model.named_parameters()]
        if not pairs:
            raise ValueError("the model has no weights for a teacher to follow")
        self.names = [name for name, _, _ in pairs]
        self._teacher = [t.requires_grad_(False) for _, t, _ in pairs]
        self._student = [s for _, _, s in pairs]
        # float32 master copies for low-precision weights of a low-precision model (EMA steps of (1 − α) ≈ 0.005
        # vanish in bfloat16); a teacher stored below its student's precision rounds stochastically instead
        self._master = [t.detach().float().clone() if t.dtype in LOW_PRECISION and t.dtype == s.dtype else None
                        for t, s in zip(self._teacher, self._student, strict=True)]

    # -- moving the teacher ---------------------------------------------------------------------------------------
    @torch.no_grad()
    def ema_update(self, alpha: float, step: int) -> None:
        """θ_T ← α θ_T + (1 − α) θ_S over every followed weight."""
        if not 0 <= alpha <= 1:
            raise ValueError(f"the EMA decay alpha must be in [0, 1], got {alpha}")
        generator = None
        for teacher, master, student in zip(self._teacher, self._master, self._student, strict=True):
            if master is None and teacher.dtype != student.dtype:  # stored in lower precision: rounded stochastically
                if generator is None:
                    generator = torch.Generator(device=_local(teacher).device).manual_seed(STOCHASTIC_SEED + step)
                _ema_rounded(_local(teacher), _local(student.detach()), alpha, generator)
                continue
            target = teacher if master is None else master
            target.mul_(alpha).add_(student.detach().to(target.dtype), alpha=1 - alpha)
            if master is not None:
                teacher.copy_(master)
        self.ema_updates += 1
        self.last_ema_step = step

    @torch.no_grad()
    def copy_from(self, step: int) -> None:
        """θ_T ← θ_S (a hard copy, or a reset)."""
        for teacher, master, student in zip(self._teacher, self._master, self._student, strict=True):
            teacher.copy_(student.detach())
            if master is not None:
                master.copy_(student.detach())
        self.copies += 1
        self.last_copy_step = step

    def age(self, step: int) -> dict[str, float]:
        """``teacher/*`` metrics at ``step``: steps since the last hard copy (or the start) and since the teacher last
        moved (EMA update or copy), and how many EMA updates and hard copies happened."""
        return {"teacher/steps_since_copy": float(step - self.last_copy_step),
                "teacher/steps_since_update": float(step - max(self.last_ema_step, self.last_copy_step)),
                "teacher/ema_updates": float(self.ema_updates), "teacher/hard_copies": float(self.copies)}

    @torch.no_grad()
    def distance(self) -> float:
        """‖θ_T − θ_S‖ / ‖θ_S‖ over the followed weights (0 right after a copy); over every process's shard of
        sharded weights (then every process must call it)."""
        diff, norm = _squared_distance_and_norm((t, s.detach()) for t, s in zip(self._teacher, self._student,
                                                                                strict=True))
        return (diff / norm) ** 0.5 if norm > 0 else diff ** 0.5

    # -- using the teacher ----------------------------------------------------------------------------------------
    @contextmanager
    def active(self, model: Any) -> Iterator[Any]:
        """The teacher as a module to call, in eval mode: ``model`` with the teacher adapter switched in (restored
        afterwards, trainable flags included), or the frozen copy. A copy stored below the student's precision
        computes in the student's: each module's weights are widened while it runs (``_widened``)."""
        if not self.uses_adapters:
            with _widened(self.copy, self.compute_dtype):
                yield self.copy
            return
        flags = [p.requires_grad for p in model.parameters()]
        model.set_adapter(self.adapter_name)
        try:
            with eval_mode(model):
                yield model
        finally:
            model.set_adapter(self.student_adapter)
            for p, flag in zip(model.parameters(), flags, strict=True):
                p.requires_grad_(flag)

    def logprobs(self, model: Any, input_ids: torch.Tensor, attention_mask: torch.Tensor, loss_mask: torch.Tensor,
                 temperature: float, matmul_precision: str = "highest") -> torch.Tensor:
        """``token_logprobs`` under the teacher, without gradients (``model``: the unwrapped student), its float32
        matrix products at ``matmul_precision`` (``float32_matmul_precision``)."""
        with torch.no_grad(), self.active(model) as teacher, float32_matmul_precision(matmul_precision):
            return token_logprobs(teacher, input_ids, attention_mask, loss_mask, temperature)

    # -- state --------------------------------------------------------------------------------------------------
    def state_dict(self) -> dict[str, Any]:
        """Weights as full CPU tensors (sharded ones gathered: every process must call it) and counters."""
        weights = {name: _full(t if m is None else m).detach().cpu().clone()
                   for name, t, m in zip(self.names, self._teacher, self._master, strict=True)}
        return {"weights": weights, "ema_updates": self.ema_updates, "copies": self.copies,
                "last_ema_step": self.last_ema_step, "last_copy_step": self.last_copy_step}

    @torch.no_grad()
    def load_state_dict(self, state: dict[str, Any]) -> None:
        weights = state["weights"]
        if set(weights) != set(self.names):
            raise ValueError("the saved teacher's weights do not match this model's")
        for name, teacher, master in zip(self.names, self._teacher, self._master, strict=True):
            value = _like(weights[name], teacher)
            teacher.copy_(value)
            if master is not None:
                master.copy_(value)
        for key in ("ema_updates", "copies", "last_ema_step", "last_copy_step"):
            setattr(self, key, int(state[key]))

    def save(self, folder: str | Path, state: dict[str, Any] | None = None) -> None:
        """Weights (safetensors) and counters (JSON) into ``folder`` (``state``: a ``state_dict()`` taken before)."""
        from safetensors.torch import save_file

        folder = Path(folder)
        folder.mkdir(parents=True, exist_ok=True)
        state = dict(state if state is not None else self.state_dict())
        save_file({k: v.contiguous() for k, v in state.pop("weights").items()}, str(folder / WEIGHTS_FILE))
        (folder / STATE_FILE).write_text(json.dumps(state, indent=1), encoding="utf-8")

    def load(self, folder: str | Path) -> None:
        from safetensors.torch import load_file

        folder = Path(folder)
        state = json.loads((folder / STATE_FILE).read_text(encoding="utf-8"))
        self.load_state_dict({**state, "weights": load_file(str(folder / WEIGHTS_FILE))})

    # -- checkpoints ------------------------------------------------------------------------------------------
    def save_with_checkpoint(self, write_checkpoint: Callable[[], Path], root: str | Path, step: int,
                             is_main_process: bool = True) -> Path:
        """Stage the teacher under ``root``, run ``write_checkpoint()`` (which writes checkpoint ``step`` and returns
        its folder), then move the teacher into it as ``teacher/``. A run killed in between leaves the staged
        teacher, which ``load_from_checkpoint`` finds; stale staged teachers are cleaned up."""
        root = Path(root)
        staged = root / f"{STAGED_PREFIX}step-{step:06d}"
        state = self.state_dict()  # on every process: sharded weights are gathered
        if is_main_process:
            partial = staged.with_name(staged.name + ".tmp")
            shutil.rmtree(partial, ignore_errors=True)
            shutil.rmtree(staged, ignore_errors=True)
            self.save(partial, state)
            os.replace(partial, staged)
        final = write_checkpoint()
        if is_main_process:
            shutil.rmtree(final / TEACHER_DIR, ignore_errors=True)
            os.replace(staged, final / TEACHER_DIR)
            _tidy_staged(root)
        return final

    def load_from_checkpoint(self, checkpoint: str | Path) -> None:
        """Restore the teacher saved with checkpoint folder ``checkpoint``."""
        checkpoint = Path(checkpoint)
        for folder in (checkpoint / TEACHER_DIR, checkpoint.parent / f"{STAGED_PREFIX}{checkpoint.name}"):
            if (folder / STATE_FILE).is_file():
                self.load(folder)
                return
        raise FileNotFoundError(f"{checkpoint} has no teacher state ({TEACHER_DIR}/{STATE_FILE}): it was not "
                                "written by a trainer with a teacher")


@contextmanager
def float32_matmul_precision(precision: str) -> Iterator[None]:
    """``torch.set_float32_matmul_precision(precision)`` inside the block, the previous setting restored after it.
    "highest": float32 products; "high": TF32 on a GPU that has it (float32 on a CPU); "medium": bfloat16 inputs
    with float32 accumulation and float32 results, where the hardware multiplies bfloat16 fast (a CPU with AMX or
    AVX512-BF16 through oneDNN: ~3.7x a float32 product of [528, 576] x [576, 1152] on one core, ad hoc), else as
    "high". PyTorch's setting is process-wide; the trainers score the teacher on one thread, so nothing else
    multiplies inside the block."""
    previous = torch.get_float32_matmul_precision()
    torch.set_float32_matmul_precision(precision)
    try:
        yield
    finally:
        torch.set_float32_matmul_precision(previous)


def _full(tensor: torch.Tensor) -> torch.Tensor:
    """A sharded weight's full tensor (a collective), else the tensor."""
    return tensor.full_tensor() if hasattr(tensor, "full_tensor") else tensor


def _like(value: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
    """``value`` (a full tensor) laid out as ``target``: sharded the same way when ``target`` is sharded."""
    if hasattr(target, "device_mesh"):
        from torch.distributed.tensor import distribute_tensor

        return distribute_tensor(value.to(target.device), target.device_mesh, target.placements)
    return value.to(target.device)


def _copy_stored_as(model: Any, dtype: torch.dtype | None) -> Any:
    """A deep copy of ``model`` whose weights are stored as ``dtype`` (None: as they are), made without a full-precision
    copy first (the weights enter the copy already converted); buffers (rotary frequencies) keep their precision and
    tied weights stay tied."""
    if dtype is None:
        return copy.deepcopy(model)
    memo: dict[int, Any] = {}
    for weight in model.parameters():
        memo[id(weight)] = torch.nn.Parameter(weight.detach().to(dtype), requires_grad=False)
    return copy.deepcopy(model, memo)


@contextmanager
def _widened(model: Any, dtype: torch.dtype) -> Iterator[None]:
    """Inside the block, every module of ``model`` whose own weights are stored in another floating dtype runs with
    them converted to ``dtype``, one module at a time (converted before its forward; after it, the stored tensors
    are put back as they were, so nothing changes and nothing is converted back). Rounding the weights to bfloat16
    moves a model's log-probabilities far less than also computing in bfloat16 (trainers/ttopd/README.md)."""
    if not any(p.is_floating_point() and p.dtype != dtype for p in model.parameters()):
        yield
        return

    kept: dict[int, dict[str, torch.Tensor]] = {}  # id(module) -> its stored weights while it runs widened

    def widen(module: Any) -> None:
        stored_weights = kept.setdefault(id(module), {})
        for name, weight in module._parameters.items():
            if weight is not None and weight.is_floating_point() and weight.dtype != dtype:
                stored_weights.setdefault(name, weight.data)
                weight.data = weight.data.to(dtype)

    def restore(module: Any) -> None:  # the stored tensors themselves: no conversion back
        for name, data in kept.pop(id(module), {}).items():
            module._parameters[name].data = data

    handles = []
    for module in model.modules():
        if isinstance(module, torch.nn.Embedding):  # a lookup: its rows widened are the widened table's rows
            handles.append(module.register_forward_hook(lambda _m, _i, out: out.to(dtype)))
        elif any(w is not None for w in module._parameters.values()):
            handles.append(module.register_forward_pre_hook(lambda m, _: widen(m)))
            handles.append(module.register_forward_hook(lambda m, _i, _o: restore(m)))
    try:
        yield
    finally:
        for handle in handles:
            handle.remove()
        for module in model.modules():  # after a forward an error interrupted
            restore(module)


def _local(tensor: torch.Tensor) -> torch.Tensor:
    """A sharded weight's local shard (in-place changes reach the weight), else the tensor."""
    return tensor.to_local() if hasattr(tensor, "to_local") else tensor


def _ema_rounded(teacher: torch.Tensor, student: torch.Tensor, alpha: float, generator: torch.Generator) -> None:
    """θ_T ← round(α θ_T + (1 − α) θ_S) for a low-precision ``teacher`` (float32 sums, ``SQUARES_CHUNK`` elements at a
    time), rounded stochastically (``round_stochastic``)."""
    flat_teacher, flat_student = teacher.view(-1), student.reshape(-1)
    for start in range(0, flat_teacher.numel(), SQUARES_CHUNK):
        part = slice(start, start + SQUARES_CHUNK)
        mixed = flat_teacher[part].float().mul_(alpha).add_(flat_student[part].float(), alpha=1 - alpha)
        flat_teacher[part] = round_stochastic(mixed, teacher.dtype, generator)


def round_stochastic(values: torch.Tensor, dtype: torch.dtype, generator: torch.Generator) -> torch.Tensor:
    """float32 ``values`` rounded to bfloat16 up or down at random, with the probability of rounding up the fraction
    of the gap below: the expected result is ``values`` itself (unbiased, so steps smaller than the precision add
    up). Other target dtypes round to nearest."""
    if dtype != torch.bfloat16:
        return values.to(dtype)
    # bfloat16 is float32's upper 16 bits: add uniform noise to the 16 bits that go, then drop them
    noise = torch.randint(0, 1 << 16, values.shape, generator=generator, dtype=torch.int32, device=values.device)
    bits = (values.contiguous().view(torch.int32) + noise) & -(1 << 16)
    return bits.view(torch.float32).to(torch.bfloat16)


SQUARES_CHUNK = 2**20  # elements reduced at once (4 MiB in float32): no full-size float32 copy of a stored weight
DISTANCE_CHUNK = 2**16  # elements the distance reduces at once: its float32 temporaries (256 KiB) stay in the
# core's cache (0.17 against 0.25 CPU s for 2**20 over 133M weights on one core, ad hoc)


def _squared_distance_and_norm(pairs: Any) -> tuple[float, float]:
    """(Σ (a − b)², Σ b²) over pairs of same-shaped tensors, in one pass over both: float32 differences, each chunk
    of ``DISTANCE_CHUNK`` elements reduced by a float32 dot product (BLAS: several partial sums, so a chunk's
    relative error stays near float32's 6e-8), the chunks summed in float64. Sharded tensors count each process's
    shard, summed over the processes (one collective). The teacher's distance is logged every step, and this is a
    third of the time the two float64 passes it replaced took at SmolLM2-135M's size (benchmarks/README.md). The
    totals stay on the weights' device until the end: one synchronisation, not one per chunk, on a GPU."""
    totals, sharded = None, False
    for a, b in pairs:
        if hasattr(a, "to_local"):
            a, b, sharded = a.to_local(), b.to_local(), True
        a, b = a.reshape(-1), b.reshape(-1)
        if totals is None:
            totals = torch.zeros(2, dtype=torch.float64, device=a.device)
        for start in range(0, a.numel(), DISTANCE_CHUNK):
            part = b[start:start + DISTANCE_CHUNK].float()
            gap = a[start:start + DISTANCE_CHUNK].float() - part
            totals[0] += torch.dot(gap, gap)
            totals[1] += torch.dot(part, part)
    if totals is None:
        return 0.0, 0.0
    if sharded:
        torch.distributed.all_reduce(totals)
    diff, norm = totals.tolist()
    return diff, norm


def _adapter_pairs(model: Any, student: str, teacher: str) -> list[tuple[str, torch.Tensor, torch.Tensor]]:
    """(name, teacher weight, student weight) for every weight of the student adapter."""
    params = dict(model.named_parameters())
    pairs = []
    for name, param in params.items():
        parts = name.split(".")
        if student not in parts:
            continue
        index = len(parts) - 1 - parts[::-1].index(student)
        twin = ".".join(parts[:index] + [teacher] + parts[index + 1:])
        if twin not in params:
            raise ValueError(f"adapter weight {name} has no {teacher!r} twin")
        pairs.append((name, params[twin], param))
    return pairs


def _tidy_staged(root: Path) -> None:
    """Move a staged teacher into its checkpoint when that checkpoint lacks one; delete the others."""
    for staged in root.glob(f"{STAGED_PREFIX}*"):
        target = root / staged.name[len(STAGED_PREFIX):]
        if target.is_dir() and not (target / TEACHER_DIR).exists() and not staged.name.endswith(".tmp"):
            os.replace(staged, target / TEACHER_DIR)
        else:
            shutil.rmtree(staged, ignore_errors=True)
