#!/bin/bash
# On the GPU machine: our trainers against TRL's GRPOTrainer at SmolLM2's size, full fine-tuning and LoRA r=8, with
# the per-phase peaks of the full rows (allocated CUDA memory).
cd "$(dirname "$0")/../.."
bash benchmarks/gpu_check/setup.sh > $OUT/perf_setup.log 2>&1
source benchmarks/gpu_check/env.sh
timeout 170 python3 benchmarks/perf_trainer.py --hidden 576 --layers 30 --steps 3 --lora 0 --phases \
  --tokenizer /tmp/tok > $OUT/perf_full.log 2>&1
timeout 170 python3 benchmarks/perf_trainer.py --hidden 576 --layers 30 --steps 3 --lora 8 --tokenizer /tmp/tok \
  > $OUT/perf_lora.log 2>&1
