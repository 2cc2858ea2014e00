"""clinical-gym: Gymnasium environments for training and evaluating clinical LLM agents.

Importing the package registers every environment id (``ClinicalInquiry-v1``, ...) with gymnasium; the
environments themselves load on ``gym.make``. Nothing here imports torch.
"""

from clinical_gym.registration import ENVIRONMENTS, env_ids, register_all

__version__ = "0.1.0"
__all__ = ["ENVIRONMENTS", "env_ids", "__version__"]

register_all()
