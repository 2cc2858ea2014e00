"""DiagnosticWorkup: exam ordering against an EHR world model, then a diagnosis (DiagGym)."""
