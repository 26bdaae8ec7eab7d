# Two commands for a fresh machine: `make run` serves the app, `make test` runs every test.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
CHROMIUM := /usr/bin/chromium
PORT ?= 8501

.PHONY: run test test-fast lint chromium bench i18n

$(VENV)/bin/python:
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip

# Re-install only when a requirements file or the project's metadata changes. The project itself is
# installed editable (no dependencies of its own beyond requirements.txt) for the `servewise` command.
$(VENV)/.app-installed: requirements.txt pyproject.toml | $(VENV)/bin/python
	$(PY) -m pip install --quiet -r requirements.txt
	$(PY) -m pip install --quiet --no-deps -e .
	touch $@

# llama-cpp-python (llama.cpp's own KV accounting, for the conformance tests) builds from source:
# a portable CPU build without examples or tests keeps that to minutes.
LLAMA_CMAKE_ARGS := -DGGML_NATIVE=OFF -DLLAVA_BUILD=OFF -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF

$(VENV)/.test-installed: requirements.txt requirements-test.txt pyproject.toml | $(VENV)/bin/python
	CMAKE_ARGS="$(LLAMA_CMAKE_ARGS)" $(PY) -m pip install --quiet -r requirements-test.txt
	$(PY) -m pip install --quiet --no-deps -e .
	touch $(VENV)/.app-installed $@

run: $(VENV)/.app-installed
	$(PY) -m ui.serve --server.address 127.0.0.1 --server.port $(PORT) --server.headless true

# Browser tests drive Debian's Chromium; never a downloaded browser.
chromium:
	@if [ -x $(CHROMIUM) ]; then exit 0; fi; \
	if [ "$$(id -u)" = "0" ]; then \
		echo "Installing Debian's chromium for the browser tests..."; \
		apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q chromium; \
	else \
		echo "error: $(CHROMIUM) is missing; install Debian's 'chromium' package (as root: apt-get install chromium)" >&2; \
		exit 1; \
	fi

# One venv per engine the live conformance tests run (tests marked `live` find .venv-<engine>/bin/python):
# .venv-<engine> is rebuilt from requirements-<engine>.txt only when that file changes. An engine that needs
# a step after pip install defines POST_INSTALL_<engine>; LIVE_TESTS_<engine> names its live tests.
ENGINE_PYTHON ?= python3.11
ENGINES := mlx vllm
LIVE_TESTS_mlx := tests/calculators/engines/mlx_lm
LIVE_TESTS_vllm := tests/calculators/engines/vllm
# vLLM's CPU build: PyPI's torchvision / torchaudio / torchcodec are CUDA builds that break `import vllm` next
# to the CPU torch, and text-only models need none of them.
POST_INSTALL_vllm := .venv-vllm/bin/python -m pip uninstall --quiet --yes torchvision torchaudio torchcodec

.venv-%/.installed: requirements-%.txt
	@start=$$(date +%s); set -e; \
	rm -rf .venv-$*; \
	$(ENGINE_PYTHON) -m venv .venv-$*; \
	.venv-$*/bin/python -m pip install --quiet --upgrade pip; \
	.venv-$*/bin/python -m pip install --quiet -r $<; \
	$(or $(POST_INSTALL_$*),true); \
	echo ".venv-$* installed in $$(( $$(date +%s) - start )) s"
	touch $@

# One engine's live conformance tests, timed.
live-%: $(VENV)/.test-installed .venv-%/.installed
	@start=$$(date +%s); $(PY) -m pytest -m live $(LIVE_TESTS_$*); status=$$?; \
	echo "live conformance ($*): $$(( $$(date +%s) - start )) s"; exit $$status

# Everything, then each engine's live run (timed on its own).
# lint first: a ruff finding or a type error fails `make test` (and CI) before any test runs.
test: lint $(VENV)/.test-installed chromium $(ENGINES:%=.venv-%/.installed)
	$(PY) -m pytest -m "not live"
	@for engine in $(ENGINES); do $(MAKE) --no-print-directory live-$$engine || exit 1; done

# Static checks: ruff's lint rules (pyproject.toml) over the tree, mypy over calculators/ and knowledge/.
lint: $(VENV)/.test-installed
	$(PY) -m ruff check .
	$(PY) -m mypy

# Everything but real-browser, llama.cpp-conformance and live-engine tests: the loop while editing.
test-fast: $(VENV)/.test-installed
	$(PY) -m pytest -m "not browser and not llamacpp and not live"

bench: $(VENV)/.test-installed
	@for script in bench/bench_*.py; do name=$$(basename $$script .py); echo "== $$script"; $(PY) -m bench.$$name || exit 1; done

# Message catalogs: extract every _()/N_()/ngettext() message (babel.cfg) into servewise.pot, then merge it into
# each language's .po (kept in the repository; translations are written by hand, new ones arrive untranslated).
LOCALES := calculators/locale
i18n: $(VENV)/.app-installed
	$(PY) -m babel.messages.frontend extract -F babel.cfg -k _ -k N_ -k ngettext:1,2 --no-location --sort-output \
		--project servewise --omit-header -w 120 -o $(LOCALES)/servewise.pot .
	$(PY) -m babel.messages.frontend update -i $(LOCALES)/servewise.pot -d $(LOCALES) -D servewise -l es \
		--no-fuzzy-matching -w 120
	@# The catalog's date would change on every refresh and conflict on every merge: git keeps the history.
	sed -i -E 's/^"POT-Creation-Date: [^"]*"$$/"POT-Creation-Date: 2026-12-01 00:00+0000\\n"/' \
		$(LOCALES)/es/LC_MESSAGES/servewise.po
