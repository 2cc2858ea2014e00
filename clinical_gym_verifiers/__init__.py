"""The verifiers environment package of clinical-gym: ``vf-eval clinical-gym-verifiers --env.taskset.env-id ENV ...``.

verifiers finds a taskset by importing the module its id names, so this top-level package carries the id; the
code is ``clinical_gym.integrations.verifiers`` (its docstring has the commands and settings).
"""

from clinical_gym.integrations.verifiers import ClinicalEnv, ClinicalTaskset, LocalChatHarness

__all__ = ["ClinicalTaskset", "ClinicalEnv", "LocalChatHarness"]
