#!/bin/bash
# Run HERE (the CPU machine with .venv): what the GPU machine lacks and cannot download, in ignored folders of the
# repo that the device tool carries (see README.md): .whl/ (wheels for Python 3.12, x86-64), .gpu/tok (SmolLM2's
# tokenizer) and .gpu/p1..p3 (SmolLM2's GGUF file in three parts, each small enough for one call's 64 MiB).
set -euo pipefail
cd "$(dirname "$0")/../.."
grep -qx "/.whl/" .git/info/exclude 2>/dev/null || echo "/.whl/" >> .git/info/exclude
grep -qx "/.gpu/" .git/info/exclude 2>/dev/null || echo "/.gpu/" >> .git/info/exclude
mkdir -p .whl/alt .gpu/p1 .gpu/p2 .gpu/p3 .gpu/tok
get() { python3 -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
  --platform manylinux_2_28_x86_64 --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 \
  --platform manylinux1_x86_64 -d "$@"; }
# the versions of this repo's .venv; datasets 4.8 in alt/ for a machine whose pyarrow is older than 24
get .whl trl==1.16.0 datasets==5.2.0 dill==0.4.1 multiprocess==0.70.19 gguf==0.19.0 gymnasium==1.4.0 \
  farama-notifications==0.0.6 pydantic==2.14.4 pydantic_core==2.50.5 annotated-types==0.8.0 typing-inspection==0.4.5 \
  rank-bm25==0.2.2 PyStemmer==3.1.0 simple_icd_10_cm==1.5.0 sqlite-fts4==1.0.3 sqlite-utils==4.2.1 \
  click-default-group==1.2.4 typing_extensions==4.16.0 transformers==5.24.0
get .whl/alt datasets==4.8.0
G=$(.venv/bin/python -c "from clinical_gym.trainers.common.tiny_models import smollm2_dir, SMOLLM2_GGUF; print(smollm2_dir() + '/' + SMOLLM2_GGUF)")
head -c 26214400 "$G" > .gpu/p1/part
tail -c +26214401 "$G" | head -c 52428800 > .gpu/p2/part
tail -c +78643201 "$G" > .gpu/p3/part
cat .gpu/p1/part .gpu/p2/part .gpu/p3/part | cmp - "$G"
.venv/bin/python -c "
from clinical_gym.trainers.common.tiny_models import load_smollm2
load_smollm2(with_model=False)[0].save_pretrained('.gpu/tok')"
du -sh .whl .gpu/*
