"""VisualDiagnosis-v0: read generated clinical images (ECGs, cardiotocographs, spirometry, audiograms) and diagnose."""
