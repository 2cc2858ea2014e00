"""Triage-v1: a tool-using emergency department triage domain (Emergency Severity Index, codes, life-saving care)."""
