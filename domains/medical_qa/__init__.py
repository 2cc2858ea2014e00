"""MedicalQA-v1: a tool-using domain of multiple-choice clinical vignette questions (question bank, reference ranges,
guideline summaries, option elimination)."""
