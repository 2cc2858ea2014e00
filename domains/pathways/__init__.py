"""ClinicalPathway-v1: multi-phase clinical journeys (triage, assessment, treatment, disposition) over one patient."""
