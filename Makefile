# diffsci: `make demo` runs the example gallery, `make test` runs the tests.
# Both create .venv with python3 if it is missing and install the package into it; a stamp file
# per extra (.venv/.installed-<extra>), newer than pyproject.toml, skips the reinstall next time.

PYTHON ?= python3
VENV := .venv
VPY := $(VENV)/bin/python
PIP := $(VPY) -m pip --disable-pip-version-check
PYTEST_ARGS ?=

.DEFAULT_GOAL := help
.PHONY: help demo test docs docs-check bench gpu-check lint clean distclean

help:
	@echo "make demo       install into .venv and run the example gallery (writes gallery/index.html)"
	@echo "make test       install with the test extra into .venv and run pytest (PYTEST_ARGS=...),"
	@echo "                then the Numba-kernel tests again with bounds checks on"
	@echo "make docs       install with the docs extra and build the site into build/docs (warnings"
	@echo "                are errors; the guide's examples run); figures appear after make demo"
	@echo "make docs-check open every page of build/docs and gallery/index.html in headless"
	@echo "                Chromium: no broken link or image, no console error"
	@echo "make bench      install, try the bench peers, run every benchmarks/bench_*.py"
	@echo "make gpu-check  check CUDA kernels against CPU kernels (needs an NVIDIA GPU)"
	@echo "make lint       ruff check"
	@echo "make clean      remove generated files and caches (keeps .venv); distclean: .venv too"

$(VPY):
	$(PYTHON) -m venv $(VENV)

$(VENV)/.installed-base: pyproject.toml | $(VPY)
	$(PIP) install -q -e .
	@touch $@

$(VENV)/.installed-test: pyproject.toml | $(VPY)
	$(PIP) install -q -e '.[test]'
	@touch $@

# The peers are optional: if the extra as a whole fails to install, each peer is tried on its own
# and the ones that fail are skipped (their benchmark columns are left out). Delete the stamp to
# try again.
$(VENV)/.installed-bench: $(VENV)/.installed-base
	-$(PIP) install -q -e '.[bench]' || for peer in $$($(VPY) -c 'import tomllib; \
	    print(" ".join(tomllib.load(open("pyproject.toml", "rb"))["project"]["optional-dependencies"]["bench"]))'); do \
	    $(PIP) install -q "$$peer" || echo "make bench: could not install $$peer; skipping it"; \
	done
	@touch $@

$(VENV)/.installed-docs: pyproject.toml | $(VPY)
	$(PIP) install -q -e '.[docs]'
	@touch $@

$(VENV)/.installed-cuda: $(VENV)/.installed-base
	-$(PIP) install -q -e '.[cuda]'
	@touch $@

# The gallery's Dask example (examples/finance/06) runs an embedded LocalCluster: the
# distributed extra is part of the demo install.
$(VENV)/.installed-demo: pyproject.toml | $(VPY)
	$(PIP) install -q -e '.[distributed]'
	@touch $@

demo: $(VENV)/.installed-demo
	$(VPY) -m examples

# The second pass re-runs every test marked `kernels` (they run Numba kernels) with Numba's
# bounds checks on and two threads, in a fresh Numba cache: an out-of-range index then raises
# IndexError instead of corrupting memory. Exit status 5 (no test selected) is fine there.
# It is mostly Numba compilation (a fresh cache), so it runs beside the main pass, on the
# machine's other core; its output is printed after the main pass ends.
test: $(VENV)/.installed-test
	@cache=$$(mktemp -d); log=$$(mktemp); \
	(NUMBA_BOUNDSCHECK=1 NUMBA_NUM_THREADS=2 NUMBA_CACHE_DIR=$$cache \
	    $(VPY) -m pytest -m kernels -p no:cacheprovider $(PYTEST_ARGS) >$$log 2>&1; \
	    echo $$? >$$log.rc) & \
	$(VPY) -m pytest $(PYTEST_ARGS); main=$$?; wait; \
	echo "make test: the kernel tests again with NUMBA_BOUNDSCHECK=1, NUMBA_NUM_THREADS=2:"; \
	cat $$log; kern=$$(cat $$log.rc); rm -rf $$cache $$log $$log.rc; \
	echo "make test: main pass exit $$main, bounds-checked kernel pass exit $$kern"; \
	[ $$main -eq 0 ] && { [ $$kern -eq 0 ] || [ $$kern -eq 5 ]; }

# The site: Sphinx with warnings as errors, from a clean output folder (generated pages depend on
# the code and on gallery/, which Sphinx does not track).
docs: $(VENV)/.installed-docs
	rm -rf build/docs
	$(VPY) -m sphinx -b html -W --keep-going -q docs build/docs
	@echo "make docs: open build/docs/index.html"

# Needs Chromium and chromedriver (Debian: apt-get install -y chromium chromium-driver).
docs-check: $(VENV)/.installed-docs
	$(VPY) tools/check_site.py --site build/docs --gallery gallery

bench: $(VENV)/.installed-bench
	$(VPY) -m benchmarks

gpu-check: $(VENV)/.installed-cuda
	$(VPY) benchmarks/gpu_check.py

lint: | $(VPY)
	@$(VPY) -m ruff --version >/dev/null 2>&1 || $(PIP) install -q ruff
	$(VPY) -m ruff check .

clean:
	rm -rf gallery bench_results build dist .pytest_cache .ruff_cache .mypy_cache .hypothesis
	find . -path ./$(VENV) -prune -o \( -name __pycache__ -o -name '*.egg-info' \) -prune \
	    -exec rm -rf {} +

distclean: clean
	rm -rf $(VENV)
