"""RL trainers for clinical-gym environments (GRPO; PPO and TT-OPD to come), sharing ``clinical_gym.trainers.common``.

Trainers consume ``clinical_gym.rollout`` trajectories only, so any registered environment works with any trainer.
Importing a trainer's ``config`` module imports no torch; ``train`` modules need the ``[train]`` extra.
"""
