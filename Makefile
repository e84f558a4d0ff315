# The front door: `make demo` and `make test` do all set-up on a fresh machine.
SHELL := /bin/bash
VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
PIP := $(PY) -m pip --disable-pip-version-check -q
# hide this machine's notices about absent local package mirrors, and pip's note that lxml
# has no html_clean extra (lxml_html_clean is installed by name); keep real errors
QUIET_PIP := 2> >(grep -v -e "^WARNING: Location" -e "does not provide the extra 'html_clean'" >&2)
# Use this checkout's models/ and index/ folders; never reach for a model hub.
export RAGCTL_HOME := $(CURDIR)
export HF_HUB_OFFLINE := 1
export TRANSFORMERS_OFFLINE := 1

.PHONY: install ocr-engine demo test test-fast lint docs bench models clean

install: $(STAMP) ocr-engine

# Scanned PDFs and images are read by Tesseract, a system program, with its models of the
# languages invoices and letters come in besides English (a page in one of them is read
# with its model too): installed here when this runs as root with apt (as CI does);
# otherwise one line says how.
OCR_PACKAGES = tesseract-ocr tesseract-ocr-deu tesseract-ocr-fra tesseract-ocr-spa \
	tesseract-ocr-ita tesseract-ocr-nld tesseract-ocr-por
ocr-engine:
	@{ command -v tesseract >/dev/null && tesseract --list-langs 2>/dev/null | grep -qx por; } || { \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
	    (apt-get install -y -qq --no-install-recommends $(OCR_PACKAGES) >/dev/null 2>&1 || \
	     (apt-get update -qq >/dev/null 2>&1 && \
	      apt-get install -y -qq --no-install-recommends $(OCR_PACKAGES) >/dev/null 2>&1)) || \
	    echo "note: tesseract-ocr could not be installed; scanned pages will be skipped"; \
	  else echo "note: to read scanned PDFs and images: sudo apt install $(OCR_PACKAGES)"; fi; }

# Reinstall only when pyproject.toml changes. The CPU build of PyTorch goes first so
# that nothing pulls the CUDA build.
# llama.cpp is compiled here, from source, without AMX (scripts/build-llama.sh says why);
# the flags it used are in $(VENV)/llama-build.txt.
$(STAMP): pyproject.toml scripts/build-llama.sh
	@test -x $(PY) || python3 -m venv $(VENV)
	$(PIP) install torch==2.13.0 $(QUIET_PIP)
	scripts/build-llama.sh $(PY) $(QUIET_PIP)
	$(PIP) install -e '.[generate,train,dev]' $(QUIET_PIP)
	$(PY) -c "import torch, hnswlib, spacy, sentence_transformers, ragctl"
	@touch $@

# `ask` exits 3 when the documents do not hold the answer; that still is a working demo.
demo: install
	$(VENV)/bin/ragctl index README.md docs
	$(VENV)/bin/ragctl search "what happens if indexing is interrupted" --limit 3
	$(VENV)/bin/ragctl ask "How many words does a passage have?" || test $$? -eq 3

test: install
	$(VENV)/bin/pytest -q

test-fast: install
	$(VENV)/bin/pytest -q -m "not real"

lint: install
	$(VENV)/bin/ruff check ragctl tests bench
	$(VENV)/bin/mypy ragctl
	$(VENV)/bin/lint-imports

docs: install
	$(PY) docs/cli_reference.py

bench: install
	$(PY) bench/index.py
	$(PY) bench/ask.py -n 200
	$(PY) bench/long.py
	$(PY) bench/eval.py --limit 100
	$(PY) bench/train.py --limit 150

# Retrain the shipped filter and relevance models from the dev splits of ../shared/data.
models: install
	$(PY) bench/models.py

clean:
	rm -rf $(VENV) index/*/ .pytest_cache .mypy_cache .ruff_cache
