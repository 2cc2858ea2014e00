"""Text spaces that accept any Unicode text: medical text has "36.6°C", "µg/L", CJK and emoji."""

from __future__ import annotations

import string

from gymnasium import spaces

# Characters ``sample()`` draws from: printable ASCII plus medical symbols, accents, CJK and emoji.
SAMPLE_CHARSET = string.ascii_letters + string.digits + " .,;:!?()[]{}<>/'\"-+=%*#\n" + "°µ±≤≥→·–—éèüñçßøαβγΔ中文病人医生痛😀🩺💊"


class UnicodeText(spaces.Text):
    """A ``gymnasium.spaces.Text`` whose ``contains`` accepts every Unicode string within the length bounds.

    ``sample()`` draws from ``SAMPLE_CHARSET`` so samples exercise non-ASCII input.

    >>> space = UnicodeText(max_length=20)
    >>> space.contains("T 36.6°C, CRP 5 µg/L") and space.contains("发烧 🤒")
    True
    >>> space.contains("x" * 21)
    False
    """

    def __init__(self, max_length: int, *, min_length: int = 0, seed: int | None = None) -> None:
        super().__init__(max_length=max_length, min_length=min_length, charset=SAMPLE_CHARSET, seed=seed)

    def contains(self, x: object) -> bool:
        return isinstance(x, str) and self.min_length <= len(x) <= self.max_length

    def __repr__(self) -> str:
        return f"UnicodeText({self.min_length}, {self.max_length})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, UnicodeText) and (self.min_length, self.max_length) == (other.min_length, other.max_length)
