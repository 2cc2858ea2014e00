"""TT-OPD (turn-level truncated on-policy distillation): GRPO on the cosine length reward plus a turn-level KL to an
EMA teacher that sees outcome-conditioned hints; see README.md."""
