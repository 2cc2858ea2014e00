"""Keeping a CPU training step's resident memory close to what it holds live (glibc's allocator).

Freed tensors on a CPU go back to the C allocator, not to the system. glibc's ``malloc`` takes a block below its
mmap threshold from its heap, and that threshold rises each time a mapped block is freed, up to 32 MiB, so after
the first step nearly every activation and gradient of a SmolLM2-sized model comes from the heap. A freed block
inside the heap stays resident until a request of a size that fits reuses it. The backward pass frees and
allocates blocks of many sizes (each layer's recomputed activations, their gradients, the weights' gradients), and
the heap grows far beyond what is in use: in a full fine-tuning step at SmolLM2-135M's size, 1,403 MiB of the
heap were free (``mallinfo2``) against 1,287 MiB in use at the moment of the peak, and the resident peak stood
about 800 MiB above what the process held live (benchmarks/README.md, "Trainers against TRL").

``HostMemory`` does two things around the backward pass, on the CPU only:
* ``before_backward``: hands every free page of the heap back (``malloc_trim(0)``: the host-side counterpart of
  ``torch.cuda.empty_cache()``; what is in use is untouched, a page reused later is faulted back in) and lowers
  the mmap threshold to ``BACKWARD_MMAP_THRESHOLD`` (1 MiB), so the backward pass's blocks of 1 MiB or more get
  mappings of their own that go back to the system as soon as they are freed;
* ``after_step`` (after the optimizer step and ``zero_grad``): raises the threshold to 32 MiB, the value glibc's
  own threshold climbs to, so the rollout and the forward passes keep reusing heap blocks without a page fault
  each, and trims the heap again.
Measured at SmolLM2-135M's size (GRPO, full fine-tuning, one thread; runs one after the other on one machine):
peak resident memory 3,060 MiB against 3,790 without it, for about 0.5 CPU s more a step in page faults; lowering
the threshold for the whole step instead saved 130 MiB more for more than twice the extra faults (ad hoc runs of
one child; ``benchmarks/perf_trainer.py --host-memory on|off`` compares the two settings). Other projects that
train or serve on the CPU do the same (PrimeIntellect's prime-rl trims the heap after every step). Off with
``release_host_memory: false``; on a GPU, or with a C library other than glibc, nothing is done.

The threshold is process-wide, and once set glibc stops adjusting it by itself: a training process keeps the
value ``after_step`` leaves (32 MiB).
"""

from __future__ import annotations

import ctypes
import ctypes.util
import functools
from typing import Any

M_MMAP_THRESHOLD = -3  # mallopt's parameter number in glibc's malloc.h
BACKWARD_MMAP_THRESHOLD = 1 << 20  # blocks of 1 MiB or more get their own mapping during the backward pass
STEP_MMAP_THRESHOLD = 32 << 20  # glibc's DEFAULT_MMAP_THRESHOLD_MAX on 64-bit: where its own threshold tops out


@functools.cache
def _libc_function(name: str, argtypes: tuple[Any, ...]) -> Any:
    """glibc's ``name`` (returning an int), or None where the C library has none (musl, macOS, Windows)."""
    try:
        function = getattr(ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6"), name)
    except (OSError, AttributeError):
        return None
    function.argtypes, function.restype = list(argtypes), ctypes.c_int
    return function


def _malloc_trim() -> Any:
    return _libc_function("malloc_trim", (ctypes.c_size_t,))


def _mallopt() -> Any:
    return _libc_function("mallopt", (ctypes.c_int, ctypes.c_int))


def can_release() -> bool:
    """Whether this process's C library can give freed heap memory back and set its mmap threshold (glibc)."""
    return _malloc_trim() is not None and _mallopt() is not None


def release_freed_memory() -> bool:
    """Return the free pages of the C heap to the system; True when some memory was given back."""
    trim = _malloc_trim()
    return bool(trim(0)) if trim is not None else False


def set_mmap_threshold(size: int) -> bool:
    """Blocks of ``size`` bytes or more get a mapping of their own from now on; True when glibc took it."""
    mallopt = _mallopt()
    return bool(mallopt(M_MMAP_THRESHOLD, size)) if mallopt is not None else False


class HostMemory:
    """The two calls around a backward pass (see the module docstring); they do nothing unless ``enabled`` (a run
    on the CPU that asked for it, with glibc). ``releases`` counts the heap trims done."""

    def __init__(self, enabled: bool) -> None:
        self.enabled = enabled and can_release()
        self.releases = 0

    @classmethod
    def for_device(cls, device: Any, enabled: bool) -> HostMemory:
        """Enabled when ``enabled`` and ``device`` (a ``torch.device`` or its type) is the CPU."""
        kind = getattr(device, "type", device)
        return cls(enabled and kind == "cpu")

    def before_backward(self) -> None:
        if self.enabled:
            self._release()
            set_mmap_threshold(BACKWARD_MMAP_THRESHOLD)

    def after_step(self) -> None:
        if self.enabled:
            set_mmap_threshold(STEP_MMAP_THRESHOLD)
            self._release()

    def _release(self) -> None:
        release_freed_memory()
        self.releases += 1
