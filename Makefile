VENV ?= .venv
INSTALLED := $(VENV)/.inferqa-installed

.PHONY: demo test install benchmarks llama-server

# Main job: install, then run the demo pipeline end to end on the embedded dataset.
demo: $(INSTALLED)
	$(VENV)/bin/inferqa demo

# Tests: install, check the import layers (pyproject [tool.importlinter]), then run the whole suite.
test: $(INSTALLED)
	PYTHONPATH=src $(VENV)/bin/lint-imports
	$(VENV)/bin/python -m pytest -q

install: $(INSTALLED)

$(INSTALLED): pyproject.toml scripts/install.sh
	VENV=$(VENV) bash scripts/install.sh

# Optional: llama.cpp's own server (parallel slots) for benchmarks/reader_throughput.py's openai rows.
llama-server: $(INSTALLED)
	VENV=$(VENV) bash scripts/build_llama_server.sh
