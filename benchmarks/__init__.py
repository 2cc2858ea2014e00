"""Benchmarks of clinical-gym.

* ``clinical-gym bench``: ``clinical_gym.benchmarks.runner`` plays agents (``clinical_gym.benchmarks.agents``) on environments and writes
  ``results.jsonl``, ``summary.json``, ``report.md`` and plots (``clinical_gym.benchmarks.report``); ``clinical_gym.benchmarks.metrics`` holds
  the papers' metrics with bootstrap confidence intervals; ``clinical_gym.benchmarks.training_curves`` draws a trainer's metrics.
* speed scripts, run as files: ``python benchmarks/perf_env.py`` and the other ``perf_*.py``.
"""
