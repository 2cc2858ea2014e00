"""Text spaces that accept any Unicode text: medical text has "36.6°C", "µg/L", CJK and emoji.

``UnicodeText`` flattens to the text's Unicode code points (an ``int32`` ``Box``, padded with -1), and Gymnasium's
shared memory stores that flat form, so ``gym.make_vec(..., vectorization_mode="async")`` (shared memory on, the
default) returns exactly the text that ``"sync"`` returns. Gymnasium 1.4's own ``Text`` handlers break there twice:
they index characters into the sampling charset (anything outside it is lost), and ``AsyncVectorEnv`` reads its
shared buffer once, at construction, expecting a live view (a tuple of strings never changes). Here the buffer reads
as ``SharedTexts``, a live view that decodes on access; ``AsyncVectorEnv`` returns a deep copy of it (a plain tuple)
unless made with ``copy=False``.
"""

from __future__ import annotations

import string
from collections.abc import Sequence
from typing import Any

import numpy as np
from gymnasium import spaces
from gymnasium.spaces.utils import flatdim, flatten, flatten_space, unflatten
from gymnasium.vector.utils import create_shared_memory, read_from_shared_memory, write_to_shared_memory

# Characters ``sample()`` draws from: printable ASCII plus medical symbols, accents, CJK and emoji.
SAMPLE_CHARSET = string.ascii_letters + string.digits + " .,;:!?()[]{}<>/'\"-+=%*#\n" + "°µ±≤≥→·–—éèüñçßøαβγΔ中文病人医生痛😀🩺💊"
PAD = -1  # fills the flat form after the text's last code point
MAX_CODE_POINT = 0x10FFFF


class UnicodeText(spaces.Text):
    """A ``gymnasium.spaces.Text`` whose ``contains`` accepts every Unicode string within the length bounds.

    ``sample()`` draws from ``SAMPLE_CHARSET`` so samples exercise non-ASCII input. The flat form
    (``gymnasium.spaces.utils.flatten``) is the code points, padded with -1 to ``max_length``.

    >>> space = UnicodeText(max_length=20)
    >>> space.contains("T 36.6°C, CRP 5 µg/L") and space.contains("发烧 🤒")
    True
    >>> space.contains("x" * 21)
    False
    >>> from gymnasium.spaces.utils import flatten, unflatten
    >>> unflatten(space, flatten(space, "37.2°C 🤒"))
    '37.2°C 🤒'
    """

    def __init__(self, max_length: int, *, min_length: int = 0, seed: int | None = None) -> None:
        super().__init__(max_length=max_length, min_length=min_length, charset=SAMPLE_CHARSET, seed=seed)

    def contains(self, x: object) -> bool:
        return isinstance(x, str) and self.min_length <= len(x) <= self.max_length

    def __repr__(self) -> str:
        return f"UnicodeText({self.min_length}, {self.max_length})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, UnicodeText) and (self.min_length, self.max_length) == (other.min_length, other.max_length)


def encode_text(space: UnicodeText, text: str) -> np.ndarray:
    """The flat form of ``text``: ``max_length`` int32 code points, padded with -1 (lone surrogates kept)."""
    codes = np.frombuffer(text.encode("utf-32-le", "surrogatepass"), dtype="<i4")
    if len(codes) > space.max_length:
        raise ValueError(f"text of {len(codes)} characters does not fit {space!r}")
    flat = np.full(space.max_length, PAD, dtype=np.int32)
    flat[:len(codes)] = codes
    return flat


def decode_text(flat: np.ndarray) -> str:
    """The text a flat form holds (its code points up to the first padding value)."""
    flat = np.asarray(flat, dtype=np.int32)
    end = int(np.argmax(flat < 0)) if (flat < 0).any() else len(flat)
    return flat[:end].astype("<i4").tobytes().decode("utf-32-le", "surrogatepass")


@flatten.register(UnicodeText)
def _flatten(space: UnicodeText, x: str) -> np.ndarray:
    return encode_text(space, x)


@unflatten.register(UnicodeText)
def _unflatten(space: UnicodeText, x: np.ndarray) -> str:
    return decode_text(x)


@flatten_space.register(UnicodeText)
def _flatten_space(space: UnicodeText) -> spaces.Box:
    return spaces.Box(low=PAD, high=MAX_CODE_POINT, shape=(space.max_length,), dtype=np.int32)


@flatdim.register(UnicodeText)
def _flatdim(space: UnicodeText) -> int:
    return space.max_length


@create_shared_memory.register(UnicodeText)
def _create_shared_memory(space: UnicodeText, n: int = 1, ctx: Any = None) -> Any:
    import multiprocessing

    return (ctx or multiprocessing).Array(np.dtype(np.int32).char, n * space.max_length)


class SharedTexts(Sequence[str]):
    """The texts in a shared-memory buffer of ``UnicodeText`` values, decoded when read (so the view follows what
    the workers write); ``copy.deepcopy`` gives a plain tuple."""

    def __init__(self, rows: np.ndarray) -> None:
        self._rows = rows

    def __len__(self) -> int:
        return len(self._rows)

    def __getitem__(self, index: Any) -> Any:
        if isinstance(index, slice):
            return tuple(decode_text(row) for row in self._rows[index])
        return decode_text(self._rows[index])

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Sequence) and tuple(self) == tuple(other)

    def __hash__(self) -> int:
        return hash(tuple(self))

    def __repr__(self) -> str:
        return repr(tuple(self))

    def __deepcopy__(self, memo: dict[int, Any]) -> tuple[str, ...]:
        return tuple(self)


@read_from_shared_memory.register(UnicodeText)
def _read_from_shared_memory(space: UnicodeText, shared_memory: Any, n: int = 1) -> SharedTexts:
    return SharedTexts(np.frombuffer(shared_memory.get_obj(), dtype=np.int32).reshape((n, space.max_length)))


@write_to_shared_memory.register(UnicodeText)
def _write_to_shared_memory(space: UnicodeText, index: int, value: str, shared_memory: Any) -> None:
    size = space.max_length
    destination = np.frombuffer(shared_memory.get_obj(), dtype=np.int32)
    np.copyto(destination[index * size:(index + 1) * size], encode_text(space, value))
