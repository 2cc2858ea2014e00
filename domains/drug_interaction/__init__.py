"""DrugInteraction-v1: a tool-using medication-safety domain (interactions, CYP450, renal dosing, allergies)."""
