#!/bin/bash
# The trainers on CUDA with a tiny random Llama over SmolLM2's tokenizer (/tmp/tok, from setup.sh): GRPO, PPO and
# TT-OPD with bf16 autocast, 2 steps then resumed to 3, side by side; then GRPO and TT-OPD under FSDP2 over NCCL
# (torchrun, one process each). Runs from /tmp: the repository root's clinical_gym/ would shadow the namespace.
cd /tmp
python3 -c "
from transformers import AutoTokenizer
from clinical_gym.trainers.common.tiny_models import tiny_llama
tok = AutoTokenizer.from_pretrained('/tmp/tok')
tiny_llama(tok, hidden_size=64, num_layers=2).save_pretrained('/tmp/tiny'); tok.save_pretrained('/tmp/tiny')"
COMMON=(--env ClinicalInquiry-v1 --env-kwargs '{"turn_budget": 2}' --model /tmp/tiny --dtype bfloat16
        --max-turn-tokens 16 --max-episode-tokens 1024 --num-envs 4 --group-size 4 --groups-per-step 1
        --report-to none --no-progress)
show() { grep -v -i "warn\|deprecat\|return " "$1" | tail -"$2"; }
for steps in 2 3; do
  for alg in grpo ppo ttopd; do
    timeout 60 python3 -m clinical_gym.cli train $alg "${COMMON[@]}" --mixed-precision bf16 --total-steps $steps \
      --save-every 1 --output-dir /tmp/runs/$alg --resume > /tmp/runs_$alg.log 2>&1 &
  done
  wait
  for alg in grpo ppo ttopd; do
    echo "== $alg to $steps steps"; show /tmp/runs_$alg.log 2; wc -l < /tmp/runs/$alg/metrics.jsonl
  done
done
python3 -c "
import json
for alg in ('grpo', 'ppo', 'ttopd'):
    rows = [json.loads(l) for l in open(f'/tmp/runs/{alg}/metrics.jsonl')]
    print(alg, [r.get('step') for r in rows], {k: v for k, v in rows[-1].items() if 'loss' in k or 'reward_mean' in k})"
port=29510
for alg in grpo ttopd; do
  port=$((port + 1))
  timeout 80 torchrun --nproc_per_node 1 --master_port $port -m clinical_gym.cli train $alg "${COMMON[@]}" --fsdp \
    --generation-engine transformers --total-steps 2 --output-dir /tmp/fsdp/$alg > /tmp/fsdp_$alg.log 2>&1 &
done
wait
for alg in grpo ttopd; do
  echo "== fsdp $alg"; show /tmp/fsdp_$alg.log 4; tail -c 400 /tmp/fsdp/$alg/metrics.jsonl; echo
done
