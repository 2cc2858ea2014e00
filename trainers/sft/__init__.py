"""SFT cold start: expert conversations (data), their assistant-only loss mask (masks), templated reasoning
(rationale), and supervised fine-tuning with TRL's SFTTrainer and LoRA (config, train)."""
