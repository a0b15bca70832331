# Set-up on a fresh machine: `make demo` (the main job: the shipped simplifier on sample sentences)
# and `make test` (the test suite). Both create .venv and install wean into it on first use.

PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
PIP := $(BIN)/pip install --quiet --disable-pip-version-check
# where this repository's data lie (benchmarks, and the configs' ${WEAN_DATA_ROOT}/ paths)
export WEAN_DATA_ROOT ?= $(abspath ../shared/data)
# training pairs for the demo: <prefix>.src and <prefix>.dst; validation pairs likewise (empty:
# 500 training pairs are held out for it), WikiLarge's with the default training pairs
DEMO_TRAIN ?= $(WEAN_DATA_ROOT)/kauchak_v2/train
DEMO_VALID ?= $(if $(filter $(WEAN_DATA_ROOT)/%,$(DEMO_TRAIN)),$(WEAN_DATA_ROOT)/wikilarge/valid,)

.PHONY: install demo train-demo test clean

# PyTorch first, so that nothing after it pulls another build; TORCH_INDEX: an index that holds the
# CPU build where the default one would give the CUDA one (PyTorch's install page names its own)
TORCH_INDEX ?=
$(BIN)/wean: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PIP) torch==2.13.0 $(if $(TORCH_INDEX),--index-url $(TORCH_INDEX))
	$(PIP) -e '.[test]'
	touch $@

install: $(BIN)/wean

# Simplify plain English sample sentences with the pretrained simplifier shipped in src/wean/pretrained;
# no data and no training needed.
demo: install
	$(BIN)/wean simplify < examples/complex.txt

# Train a small simplifier yourself (about ten minutes on two CPU cores), then simplify the same
# sentences, each printed after its model score (sum of log-probabilities).
train-demo: install
	@test -e $(DEMO_TRAIN).src || { echo "make train-demo: $(DEMO_TRAIN).src not found. The demo trains on the \
	Kauchak simplification pairs and validates on WikiLarge's, under the data root $$WEAN_DATA_ROOT: \
	'$(BIN)/wean data status' says where they come from and the commands that lay them out (docs/data.md). \
	Or give your own with DEMO_TRAIN=prefix (prefix.src / prefix.dst, one sentence per line) and \
	DEMO_VALID=prefix, or DEMO_VALID= to hold out 500 training pairs." >&2; exit 2; }
	$(BIN)/wean train configs/demo.yaml --set data.train=$(DEMO_TRAIN) --set 'data.valid="$(DEMO_VALID)"' \
		$$(test -e runs/demo/checkpoints/latest && echo --resume)
	$(BIN)/wean generate --model runs/demo --input examples/complex.txt --plain-text --scores

# one test process per core, at most 4 (each test runs on one thread: tests/conftest.py)
test: install
	$(BIN)/python -m pytest -q -n auto --maxprocesses=4 --dist worksteal

clean:
	rm -rf $(VENV) *.egg-info src/*.egg-info
