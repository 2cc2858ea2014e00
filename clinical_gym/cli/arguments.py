"""Argument types shared by the CLI's commands."""

from __future__ import annotations

import argparse
import json


def json_object(text: str) -> dict:
    """An ``argparse`` type: a JSON object given on the command line (``--env-kwargs '{"turn_budget": 4}'``)."""
    try:
        value = json.loads(text)
    except json.JSONDecodeError as e:
        raise argparse.ArgumentTypeError(f"not JSON: {e.msg}") from None
    if not isinstance(value, dict):
        raise argparse.ArgumentTypeError("must be a JSON object")
    return value
