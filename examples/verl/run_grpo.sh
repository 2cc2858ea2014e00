#!/usr/bin/env bash
# GRPO with verl on a clinical-gym environment: GPU only (vLLM rollouts, FSDP training). Not run on the CPU
# machines this project is developed on; what is verified on CPU: docs/server.md ("verl").
#   bash examples/verl/run_grpo.sh                        # ClinicalInquiry-v1
#   ENV=Triage-v1 LOOPS=examples/verl/agent_loops_triage.yaml bash examples/verl/run_grpo.sh
set -euo pipefail
ENV=${ENV:-ClinicalInquiry-v1}
LOOPS=${LOOPS:-examples/verl/agent_loops_inquiry.yaml}
MODEL=${MODEL:-Qwen/Qwen2.5-1.5B-Instruct}
DATA=${DATA:-data/$(echo "$ENV" | tr 'A-Z' 'a-z' | cut -d- -f1)}
GPUS=${GPUS:-$(nvidia-smi -L | wc -l)}

python examples/verl/make_data.py --env "$ENV" --out "$DATA" --repeat 4

python -m verl.trainer.main_ppo \
  algorithm.adv_estimator=grpo \
  data.train_files="$DATA/train.parquet" data.val_files="$DATA/val.parquet" \
  data.return_raw_chat=True data.train_batch_size=64 \
  data.max_prompt_length=2048 data.max_response_length=4096 \
  actor_rollout_ref.model.path="$MODEL" \
  actor_rollout_ref.actor.optim.lr=1e-6 actor_rollout_ref.actor.ppo_mini_batch_size=32 \
  actor_rollout_ref.actor.use_kl_loss=True actor_rollout_ref.actor.kl_loss_coef=0.001 \
  actor_rollout_ref.rollout.name=vllm actor_rollout_ref.rollout.mode=async actor_rollout_ref.rollout.n=8 \
  actor_rollout_ref.rollout.gpu_memory_utilization=0.5 \
  actor_rollout_ref.rollout.agent.default_agent_loop=clinical_gym_agent \
  actor_rollout_ref.rollout.agent.agent_loop_config_path="$LOOPS" \
  trainer.n_gpus_per_node="$GPUS" trainer.nnodes=1 trainer.total_epochs=1 \
  trainer.logger='["console"]' trainer.project_name=clinical-gym trainer.experiment_name="grpo-$ENV"
