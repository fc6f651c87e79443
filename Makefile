# One command to set up and run, one to test. Everything lives in a local virtual environment (.venv).
PYTHON ?= python3
VENV ?= .venv
BIN = $(VENV)/bin
Q ?=

.PHONY: setup postgres run test lint typecheck unit fuzz groundtruth truth bench catalogs clean

setup: $(VENV)/.installed

$(VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	@# setuptools says, for every editable install of a layout like ours (calc/, bot/ mapped under vramfit.), that folders
	@# named like the package may shadow it: informational only, so that one notice is silenced and no other.
	PYTHONWARNINGS="ignore:Editable installation" $(BIN)/python -m pip install -q -e ".[bot,chart,gguf,dev]"
	touch $@

# PostgreSQL server binaries for the storage tests (installed with apt-get when missing and run as root); the tests
# start and stop their own server on 127.0.0.1 from them, or use DATABASE_URL when it is set.
postgres:
	@bash .ci/ensure-postgres

# With DISCORD_TOKEN set (environment or .env) this starts the bot (`SYNC=1` registers its slash commands first,
# `SYNC=GUILD_ID` in one server); otherwise the vram command answers in the terminal: `make run Q="llama3-8b 32k
# 3060"`, or `make run` for a prompt.
run: setup
	@if [ -n "$$DISCORD_TOKEN" ] || grep -qs '^DISCORD_TOKEN=.' .env; then \
		$(BIN)/python -m vramfit.bot $(if $(SYNC),--sync $(if $(filter-out 1,$(SYNC)),--guild $(SYNC))); \
	else \
		$(BIN)/vram $(if $(Q),"$(Q)",--interactive); \
	fi

lint: setup
	$(BIN)/ruff check .
	$(BIN)/ruff format --check calc
	$(BIN)/python -m tests.import_layers

# mypy resolves vramfit.calc and vramfit.bot through a tree of links laid out as the wheel installs them (the
# editable install maps the names with an import hook, which mypy does not run).
typecheck: setup
	@mkdir -p .typecheck/vramfit && for d in calc bot presets locales; do ln -sfn ../../$$d .typecheck/vramfit/$$d; done
	cd .typecheck && ../$(BIN)/mypy --config-file ../pyproject.toml -p vramfit.calc
	cd .typecheck && ../$(BIN)/mypy --config-file ../pyproject.toml -p vramfit.bot

# After changing a user-visible string: re-extract, merge, then translate the new Korean entries.
catalogs: setup
	$(BIN)/python -m vramfit.bot.catalogs update

unit: setup postgres
	$(BIN)/python -m pytest

test: lint typecheck unit

# The parser fuzz test at 100,000 generated inputs (the suite runs a few hundred).
fuzz: setup
	$(BIN)/python -m pytest --hypothesis-profile=deep --hypothesis-show-statistics tests/bot/test_parser_fuzz.py

# Refresh the committed ground truth (tests/data/) from a folder of newer measurements: make groundtruth FROM=DIR
groundtruth: setup
	@test -n "$(FROM)" || { echo "usage: make groundtruth FROM=DIR (a folder holding groundtruth/ and eval/)"; exit 2; }
	$(BIN)/python -m tests.data.sync --from "$(FROM)"

# Measure one architecture with llama.cpp itself (tools/llamacpp_truth, tests/data/groundtruth/LLAMACPP.md):
# make truth ARCH=<model of tools/llamacpp_truth/archs.py> [OUT=rows.jsonl] [QUANTS=Q4_K_M,Q8_0] [PLAN=wide|v1]
# [TRUTH_ARGS="--repack-check none --workdir DIR"]. The first run builds llama-cpp-python $(TRUTH_LCP) (CPU) into its own
# venv, $(TRUTH_VENV) (10-20 min on 2 cores), and unpacks the sdist there for llama.cpp's gguf-py and sources.
TRUTH_VENV ?= .truth-venv
TRUTH_SRC ?= $(TRUTH_VENV)/src
TRUTH_LCP ?= 0.3.36
OUT ?= llamacpp_truth.jsonl
QUANTS ?= Q4_K_M
PLAN ?= wide
TRUTH_ARGS ?= --repack-check none

truth: $(TRUTH_VENV)/.installed
	@test -n "$(ARCH)" || { echo "usage: make truth ARCH=<model in tools/llamacpp_truth/archs.py> [OUT=rows.jsonl]"; exit 2; }
	cd tools/llamacpp_truth && "$(abspath $(TRUTH_VENV))/bin/python" run_truth.py "$(ARCH)" \
		--gguf-py "$(abspath $(TRUTH_SRC))/llama_cpp_python-$(TRUTH_LCP)/vendor/llama.cpp/gguf-py" \
		--plan $(PLAN) --quants $(QUANTS) $(TRUTH_ARGS) --out "$(abspath $(OUT))"

$(TRUTH_VENV)/.installed:
	$(PYTHON) -m venv $(TRUTH_VENV)
	$(TRUTH_VENV)/bin/python -m pip install -q --upgrade pip
	CMAKE_BUILD_PARALLEL_LEVEL=$$(nproc) $(TRUTH_VENV)/bin/python -m pip install llama-cpp-python==$(TRUTH_LCP) gguf numpy
	$(TRUTH_VENV)/bin/python -m pip download -q --no-binary :all: --no-deps -d $(TRUTH_SRC) llama-cpp-python==$(TRUTH_LCP)
	tar -xzf $(TRUTH_SRC)/llama_cpp_python-$(TRUTH_LCP).tar.gz -C $(TRUTH_SRC)
	touch $@

bench: setup
	$(BIN)/python benchmarks/accuracy.py
	$(BIN)/python benchmarks/speed.py
	$(BIN)/python benchmarks/what_fits_speed.py
	$(BIN)/python benchmarks/question_understanding.py

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache .hypothesis .typecheck
