"""GRPO (group-relative policy optimisation) with DAPO's clip-higher and dynamic sampling; see README.md."""
