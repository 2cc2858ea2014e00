#!/bin/bash
# the trainers on CUDA with a tiny random model: plain (bf16 autocast, 2 steps, resumed to 3) and FSDP2 over NCCL
cd /tmp
python3 -c "
from transformers import AutoTokenizer
from clinical_gym.trainers.common.tiny_models import tiny_llama
tok = AutoTokenizer.from_pretrained('/tmp/tok')
tiny_llama(tok, hidden_size=64, num_layers=2).save_pretrained('/tmp/tiny'); tok.save_pretrained('/tmp/tiny')"
( cd /tmp; for steps in 2 3; do
    for alg in grpo ppo ttopd; do
      timeout 60 python3 -m clinical_gym.cli train $alg --env ClinicalInquiry-v1 --env-kwargs '{"turn_budget": 2}' \
        --model /tmp/tiny --dtype bfloat16 --mixed-precision bf16 --max-turn-tokens 16 --max-episode-tokens 1024 \
        --num-envs 4 --group-size 4 --groups-per-step 1 --total-steps $steps --save-every 1 --report-to none \
        --no-progress --output-dir /tmp/runs/$alg --resume > /tmp/runs_$alg.log 2>&1 &
    done; wait
    for alg in grpo ppo ttopd; do echo "== $alg to $steps steps"; grep -v -i "warn\|deprecat\|return " /tmp/runs_$alg.log | tail -2
      wc -l < /tmp/runs/$alg/metrics.jsonl; done
  done; python3 -c "
import json
for alg in ('grpo', 'ppo', 'ttopd'):
    rows = [json.loads(l) for l in open(f'/tmp/runs/{alg}/metrics.jsonl')]
    print(alg, [r.get('step') for r in rows], {k: v for k, v in rows[-1].items() if 'loss' in k or 'reward_mean' in k})"
)

( port=29510; for alg in grpo ttopd; do
    port=$((port + 1)); cd /tmp && timeout 80 torchrun --nproc_per_node 1 --master_port $port -m clinical_gym.cli train $alg --env ClinicalInquiry-v1 \
      --env-kwargs '{"turn_budget": 2}' --model /tmp/tiny --dtype bfloat16 --fsdp --generation-engine transformers \
      --max-turn-tokens 16 --max-episode-tokens 1024 --num-envs 4 --group-size 4 --groups-per-step 1 --total-steps 2 \
      --report-to none --no-progress --output-dir /tmp/fsdp/$alg > /tmp/fsdp_$alg.log 2>&1 &
  done
  wait
  for alg in grpo ttopd; do echo "== fsdp $alg"; grep -v -i "warn\|deprecat\|return " /tmp/fsdp_$alg.log | tail -4
    tail -c 400 /tmp/fsdp/$alg/metrics.jsonl; echo; done )

wait
