"""What every trainer shares: config and CLI generation, model + LoRA and the reference policy, logprob
recomputation, loss aggregation and KL, optimizer and schedule, checkpoints with exact resume, metrics, collapse
monitors, the case order, and tiny offline models for tests and benchmarks."""
