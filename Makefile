# numpipe: every target creates .venv when it is missing and installs what it needs.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.numpipe-installed

.PHONY: demo test lint stress soak bench reference clean

$(STAMP): pyproject.toml
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -m pip install -q -e '.[test,farm]'
	@touch $(STAMP)

demo: $(STAMP)
	$(BIN)/python -m gallium demo

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

test: lint
	$(BIN)/python -m pytest

# the thread-safety suites, then the soak (ten minutes: resident memory must
# return to its baseline); SOAK_SECONDS=30 for a short one
stress: $(STAMP)
	$(BIN)/python -m stress --seconds $${SECONDS_PER_SUITE:-20} --soak-seconds $${SOAK_SECONDS:-600}

soak: $(STAMP)
	$(BIN)/python -m stress --suite soak --seconds $${SOAK_SECONDS:-600}

bench: $(STAMP)
	$(BIN)/python -m pip install -q moderngl || echo "moderngl unavailable: numpipe runs alone"
	$(BIN)/python -m bench $(BENCH_ARGS)

# Goldens rendered by Mesa (llvmpipe, softpipe); needs libgl1-mesa-dri and libegl1.
reference: $(STAMP)
	$(BIN)/python -m pip install -q moderngl
	$(BIN)/python tools/make_reference.py
	$(BIN)/python tools/make_tex_reference.py
	$(BIN)/python tools/make_tgsi_corpus.py
	$(BIN)/python tools/make_blit_reference.py
	$(BIN)/python tools/make_layer_reference.py

clean:
	rm -rf $(VENV) out .pytest_cache
