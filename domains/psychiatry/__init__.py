"""Psychiatry-v1: a tool-using mental health domain (risk, rating scales, mental state, psychotropic safety)."""
