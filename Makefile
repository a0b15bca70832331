# Set-up on a fresh machine: `make demo` (the main job) and `make test` (the test suite).
# Both create .venv and install wean into it on first use.

PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
PIP := $(BIN)/pip install --quiet --disable-pip-version-check

.PHONY: install demo test clean

$(BIN)/wean: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PIP) -e '.[test]'
	touch $@

install: $(BIN)/wean

# Score the published ACCESS outputs on TurkCorpus test with every simplification metric.
demo: install
	$(BIN)/wean evaluate --hyp ../shared/metric-parity/turkcorpus/ACCESS.txt --benchmark turkcorpus-test

test: install
	$(BIN)/python -m pytest -q

clean:
	rm -rf $(VENV) *.egg-info
