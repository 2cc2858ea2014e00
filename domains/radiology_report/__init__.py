"""RadiologyReport-v1: report imaging studies from structured findings, communicate critical results, sign
structured reports."""
