"""PPO with a value head on the policy, GAE over generated tokens and clipped policy and value losses; see README.md."""
