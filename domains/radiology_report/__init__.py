"""RadiologyReport-v0: report imaging studies from structured findings, communicate critical results, sign
structured reports."""
