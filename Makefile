# hpo: a fault-tolerant Optuna runner. `make` lists the targets.
SHELL := /bin/bash
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
HPO := $(VENV)/bin/hpo
# torch comes first so pip never pulls a CUDA build you did not ask for. On a GPU machine pick the
# CUDA build you want, e.g.: make venv TORCH_SPEC=torch==2.13.0 TORCH_INDEX=https://download.pytorch.org/whl/cu128
TORCH_SPEC ?= torch==2.13.0
TORCH_INDEX ?=
EXTRAS ?= dev,postgres,mysql,report,dashboard,models,gpu
# What only the tests need (Lightning, XGBoost, LightGBM, optuna-integration, accelerate: the real
# clients of tests/test_real_clients.py): installed by `make test`, never by `make demo`.
TEST_EXTRAS ?= integrations
STUDY ?= studies/demo.yaml
HPO_ARGS ?=
PYTEST_ARGS ?=
# Test processes (pytest-xdist): most tests wait on real child processes, so 2 halves the wall
# time on a 2-core machine (16m11s -> 10m13s for 2119 tests). TEST_JOBS=0 runs them in one process.
TEST_JOBS ?= 2
# make wheelhouse: the wheels an offline GPU machine needs (its own torch aside), for PYVER.
PYVER ?= 3.12
WHEELHOUSE ?= wheelhouse
WHEEL_PY = $(if $(wildcard $(PY)),$(PY),$(PYTHON))
# make gpu-check: this machine's own Python and torch, never the venv target (which installs torch):
# .venv/bin/python if it exists (the README's offline route makes it), else $(PYTHON).
GPU_PY ?= $(if $(wildcard $(PY)),$(PY),$(PYTHON))
GPU_CHECK_ARGS ?=
WHEEL_PLATFORMS := manylinux2014_x86_64 manylinux_2_17_x86_64 manylinux_2_28_x86_64 manylinux_2_34_x86_64

.DEFAULT_GOAL := help
.PHONY: help venv venv-test demo test test-fast lint typecheck bench tune-criteria-supermax \
        tune-criteria-max status failures report dashboard doctor gpu-check wheelhouse clean

help: ## List the targets
	@grep -E '^[a-zA-Z_-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  make %-24s %s\n", $$1, $$2}'

venv: $(VENV)/.installed ## Create the virtualenv and install hpo with its dependencies

$(VENV)/.installed: pyproject.toml
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q $(if $(TORCH_INDEX),--index-url $(TORCH_INDEX)) "$(TORCH_SPEC)"
	$(PY) -m pip install -q -e ".[$(EXTRAS)]"
	@touch $@

venv-test: $(VENV)/.installed-test ## The virtualenv plus the libraries only the tests use (TEST_EXTRAS)

$(VENV)/.installed-test: $(VENV)/.installed
	$(PY) -m pip install -q -e ".[$(EXTRAS),$(TEST_EXTRAS)]"
	@touch $@

demo: venv ## Run the demo: a small real transformers study on CPU (about 2.5 minutes)
	$(HPO) run studies/demo.yaml $(HPO_ARGS)

test: venv-test ## Run the test suite (PostgreSQL tests skip without a server; CI makes them mandatory)
	$(PY) -m pytest -q -n $(TEST_JOBS) $(PYTEST_ARGS)

test-fast: venv-test ## Unit tests only (no end-to-end runs)
	$(PY) -m pytest -q -n $(TEST_JOBS) -m "not slow" $(PYTEST_ARGS)

lint: venv ## ruff check, format check, and the import-linter contracts (layers, no cycles)
	$(VENV)/bin/ruff check hpo tests bench
	$(VENV)/bin/ruff format --check hpo tests bench
	$(VENV)/bin/lint-imports

typecheck: venv ## mypy on hpo/
	$(VENV)/bin/mypy hpo

bench: venv ## Benchmarks side by side (writes bench/results/latest.json and .md)
	$(PY) bench/run_all.py

tune-criteria-supermax: venv ## The 5000-trial criteria study (GPUs, packing auto)
	$(HPO) run studies/criteria-supermax.yaml $(HPO_ARGS)

tune-criteria-max: venv ## The 800-trial criteria study
	$(HPO) run studies/criteria-max.yaml $(HPO_ARGS)

status: venv ## Status of STUDY (default studies/demo.yaml)
	$(HPO) status $(STUDY)

failures: venv ## Failed and pruned trials of STUDY
	$(HPO) failures $(STUDY)

report: venv ## HTML report of STUDY
	$(HPO) report $(STUDY)

dashboard: venv ## optuna-dashboard on STUDY's storage
	$(HPO) dashboard $(STUDY)

doctor: venv ## Diagnose this machine (torch, CUDA, cuDNN, GPUs, allocator, shm, disk)
	$(HPO) doctor

gpu-check: ## The acceptance run on a real GPU (<= 10 min; JSON verdict + summary); skips at once without one
	@$(GPU_PY) -m hpo.gpucheck $(GPU_CHECK_ARGS)

wheelhouse: ## Wheels of hpo and its dependencies but torch, for an offline PYVER machine (< 60 MiB)
	rm -rf $(WHEELHOUSE) && mkdir -p $(WHEELHOUSE)
	$(WHEEL_PY) -m pip wheel -q --no-deps --no-build-isolation -w $(WHEELHOUSE) .
	$(WHEEL_PY) -c 'import tomllib; d = tomllib.load(open("pyproject.toml", "rb"))["project"]; \
	  print("\n".join(r for r in d["dependencies"] + ["pytest>=8", "pytest-timeout>=2.2"] \
	  if not r.startswith("torch")))' > $(WHEELHOUSE)/requirements.txt
	$(WHEEL_PY) -m pip download -q --only-binary=:all: --python-version $(PYVER) --implementation cp \
	  $(addprefix --platform ,$(WHEEL_PLATFORMS)) --platform any \
	  -d $(WHEELHOUSE) -r $(WHEELHOUSE)/requirements.txt
	@! ls $(WHEELHOUSE) | grep -Ei '^(torch|nvidia_(cu|nccl|nvjit|nvtx|cufft|curand|cusparse|cusolver|cublas))' \
	  || { echo "wheelhouse: torch or a CUDA wheel slipped in"; exit 1; }
	@du -sh $(WHEELHOUSE) | awk '{print "wheelhouse: " $$1 " in $(WHEELHOUSE)/ for Python $(PYVER) (README: offline GPU machines)"}'

clean: ## Remove run folders and caches (keeps the virtualenv)
	rm -rf runs .pytest_cache .mypy_cache .ruff_cache test-artifacts
