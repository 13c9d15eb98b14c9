# The README's two commands: `make demo` and `make test`. Both create (or reuse) .venv.
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.grposcope-installed

.PHONY: demo test test-no-browser lint clean-venv sample-runs fuzz trl-corpus

$(STAMP): pyproject.toml scripts/install_torch.sh
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --upgrade pip >/dev/null
	scripts/install_torch.sh $(PY)
	$(PY) -m pip install -e '.[dev]'
	touch $@

# Under make test the browser is required: ensure_chromium.sh exits 1 when it cannot provide it, and the browser
# tests fail instead of skipping (tests/helpers/browser_fixtures.py), so a failed install never passes silently.
test: export GRPOSCOPE_REQUIRE_BROWSER = 1
test: $(STAMP)
	@tests/ensure_chromium.sh || { echo "make test: without the browser, 'make test-no-browser' runs every other test" \
		"(the browser tests skip, each saying why)" >&2; exit 1; }
	$(PY) -m pytest

# Every test but the real-browser ones, for a machine where chromium cannot be installed (not root, no apt): the
# browser tests skip with the reason. CI (CI=true) keeps them required whatever this says.
test-no-browser: export GRPOSCOPE_REQUIRE_BROWSER = 0
test-no-browser: $(STAMP)
	$(PY) -m pytest

# Every registered reader on 10,000 mutated files each (tests/helpers/fuzz/; CI runs a few hundred per reader).
fuzz: $(STAMP)
	$(PY) benchmarks/fuzz_readers.py --cases 10000

demo: $(STAMP)
	scripts/demo.sh

lint: $(STAMP)
	$(VENV)/bin/ruff check grpo_core collectors dashboard tests benchmarks

clean-venv:
	rm -rf $(VENV)

# Regenerate every run in sample_runs/ from scratch (seed 0, CPU; about 5 minutes on 2 cores).
sample-runs: $(STAMP)
	$(PY) scripts/make_sample_runs.py

# Regenerate tests/fixtures/trl_corpus/ with TRL's real GRPOTrainer on a tiny local model (CPU, under 5 minutes).
trl-corpus: $(STAMP)
	$(PY) scripts/make_trl_corpus.py

# A full-page PNG of every dashboard page, in English and Chinese, for the demo run (runs/demo, or a short one
# trained here), each sample run and three real runs (../shared/fixtures/real-runs), and build/screenshots/
# index.html showing them all at once.
.PHONY: screenshots
screenshots: $(STAMP)
	tests/ensure_chromium.sh
	$(PY) scripts/screenshots.py
