"""ClinicalDiagnosis-v1: a tool-using clinical domain (chart review, tests, prescribing, diagnosis, escalation)."""
