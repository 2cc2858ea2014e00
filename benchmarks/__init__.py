"""Benchmarks of clinical-gym.

* ``clinical-gym bench``: ``benchmarks.runner`` plays agents (``benchmarks.agents``) on environments and writes
  ``results.jsonl``, ``summary.json``, ``report.md`` and plots (``benchmarks.report``); ``benchmarks.metrics`` holds
  the papers' metrics with bootstrap confidence intervals; ``benchmarks.training_curves`` draws a trainer's metrics.
* speed scripts, run as files: ``python benchmarks/perf_env.py`` and the other ``perf_*.py``.
"""
