#!/bin/bash
# On the GPU machine, in the call that carries the last part of SmolLM2: setup.sh reassembles it, then it is
# converted; trainers.sh runs beside the efficacy smoke preset, and TT-OPD variants (and a second GRPO seed) train
# from the preset's SFT model beside its RL runs. Everything stops at DEADLINE seconds.
cd "$(dirname "$0")/../.."
T0=$(date +%s); DEADLINE=${DEADLINE:-370}
left() { echo $((DEADLINE - ($(date +%s) - T0))); }
bash benchmarks/gpu_check/setup.sh > $OUT/C_setup.log 2>&1
source benchmarks/gpu_check/env.sh
{ time (cd /tmp && python3 -c "from clinical_gym.trainers.common.tiny_models import prepare_smollm2; print(prepare_smollm2())"); } \
  >> $OUT/C_setup.log 2>&1
timeout 200 bash benchmarks/gpu_check/trainers.sh > $OUT/C_trainers.log 2>&1 &
timeout $(left) python3 benchmarks/efficacy.py --preset smoke --out /tmp/sm > /tmp/C_eff.log 2>&1 &
EFF=$!
M=/tmp/sm/ClinicalInquiry-v1/sft/model
while [ ! -f $M/model.safetensors ] && kill -0 $EFF 2>/dev/null; do sleep 2; done
sleep 3; echo "sft ready at $(( $(date +%s) - T0 )) s" >> $OUT/C_setup.log
run() { name=$1; seed=$2; shift 2
  timeout $(left) python3 benchmarks/gpu_check/variant.py --smoke /tmp/sm --work /tmp/var --name $name --seed $seed "$@" \
    > /tmp/var_${name}_$seed.out 2> /tmp/var_${name}_$seed.err & }
for s in 0 1; do
  run lam1 $s --set lambda_distill=1.0
  run lam0 $s --set lambda_distill=0.0
  run cosine $s --set 'distill_schedule="cosine"'
  run emafast $s --set ema_interval=1 ema_alpha=0.8
  run nohint $s --set hints=false
done
run lam4 1
run grpo 1 --algorithm grpo
wait
cat /tmp/var_*.out > $OUT/variants.jsonl
for f in /tmp/var_*.err; do echo "== $f"; grep -v -i "warn\|deprecat\|return \|Loading weights" $f | tail -3; done \
  > $OUT/C_variants.log 2>&1
cp /tmp/sm/efficacy.json /tmp/sm/report.md $OUT/ 2>/dev/null
grep -v -i "warn\|deprecat\|return \|Loading weights" /tmp/C_eff.log | tail -40 > $OUT/C_efficacy.log
echo "C done in $(( $(date +%s) - T0 )) s" >> $OUT/C_setup.log
