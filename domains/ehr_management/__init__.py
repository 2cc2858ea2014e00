"""EHRManagement-v1: a tool-using clinical domain over MIMIC-shaped hospital records."""
