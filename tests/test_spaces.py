"""UnicodeText accepts any Unicode text within its bounds and samples valid strings."""

from __future__ import annotations

import doctest

import clinical_gym.spaces
from clinical_gym.spaces import UnicodeText


def test_medical_and_non_ascii_text_is_in_the_space():
    space = UnicodeText(100)
    for text in ["36.6°C", "µg/L", "血压 120/80", "🤒 fever", "a\nb\tc", ""]:
        assert space.contains(text), text


def test_bounds_and_types():
    space = UnicodeText(5, min_length=1)
    assert not space.contains("")
    assert not space.contains("toolong")
    assert not space.contains(b"bytes")
    assert not space.contains(None)


def test_samples_are_valid_and_seeded():
    a, b = UnicodeText(50, seed=3), UnicodeText(50, seed=3)
    samples = [a.sample() for _ in range(20)]
    assert samples == [b.sample() for _ in range(20)]
    assert all(a.contains(s) for s in samples)
    assert any(ord(ch) > 127 for s in samples for ch in s)


def test_docstring_examples():
    assert doctest.testmod(clinical_gym.spaces).failed == 0
