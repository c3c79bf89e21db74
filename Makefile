# One task runner for chipwatch.  `make run` and `make test` do all set-up on a fresh machine.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
HOST ?= 127.0.0.1
PORT ?= 8000

.PHONY: install run init test test-pg lint migrate seed revision bench docs clean

$(BIN)/chipwatch: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[dev,postgres]'
	touch $(BIN)/chipwatch

install: $(BIN)/chipwatch

init: install
	$(BIN)/chipwatch init

run: init
	$(BIN)/chipwatch serve --host $(HOST) --port $(PORT)

test: install
	$(BIN)/python -m pytest -q $(PYTEST_ARGS)

lint: install
	$(BIN)/ruff check service tests benchmarks migrations

migrate: install
	$(BIN)/alembic upgrade head

seed: install
	$(BIN)/chipwatch seed

revision: install
	$(BIN)/alembic revision --autogenerate -m "$(MSG)"

docs: install
	$(BIN)/python -m chipwatch.signals.language_doc README.md

bench: install
	$(BIN)/python benchmarks/read_api.py
	$(BIN)/python benchmarks/feeds.py
	$(BIN)/python benchmarks/signals.py
	$(BIN)/python benchmarks/matcher_build.py
	$(BIN)/python benchmarks/webhooks.py

clean:
	rm -rf $(VENV) data .pytest_cache
