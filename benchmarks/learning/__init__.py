"""The pieces of ``benchmarks/efficacy.py``, the proof-of-learning benchmark: base -> SFT -> {GRPO, PPO, TT-OPD}
on held-out clinical episodes.

* ``presets``: what the smoke, cpu and gpu presets train and evaluate;
* ``setups``: the environments as the presets play them (the distinctive-conditions ClinicalInquiry case set, the
  tool domain's short expert and brief prompt);
* ``stages``: the base model folder, expert data, SFT, the RL runs and the held-out evaluation;
* ``paired``: start -> trained differences with paired, case-clustered bootstrap intervals, ``efficacy.json``,
  the report and the training curves.
"""
