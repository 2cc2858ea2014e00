"""Adapters that expose clinical-gym environments to other training libraries.

* ``clinical_gym.integrations.trl``: TRL's ``GRPOTrainer`` (``EnvRolloutFunc`` + ``env_reward`` for any
  environment, ``tool_environment`` for the tool domains, ``env_dataset`` for the prompts).

Importing this package imports no training library.
"""
