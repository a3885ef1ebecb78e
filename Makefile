# make demo  - install everything, then explain the bundled SGLang case on a simulated B200 x7
# make test  - install everything, then run the whole suite
PYTHON ?= python3.11
VENV := .venv
BIN := $(VENV)/bin
DEMO_SGLANG ?= 0.5.11
# The SGLang releases the adapter supports and the suite tests (env/sglang/<VERSION>.txt each).
SGLANG_VERSIONS ?= 0.4.5 0.4.6.post5 0.4.10.post2 0.5.3 0.5.6 0.5.9 0.5.10.post1 0.5.11 0.5.12 0.5.13 0.5.15 0.5.19 0.5.23
# The vLLM releases built by `make vllm-env` (env/vllm/<VERSION>.txt each; overlays on the same venv).
VLLM_VERSIONS ?= 0.11.2 0.15.1 0.25.1 0.33.0 0.34.0
# NVIDIA Dynamo releases built by `make dynamo-env` (env/ai-dynamo/<VERSION>.txt each: an overlay on the vLLM
# overlay its #@on line names, and for python -m dynamo.sglang on the SGLang one its #@on ... dynamo.sglang line
# names (sglang 0.5.21), each built first where it is missing).
DYNAMO_VERSIONS ?= 1.6.1

.PHONY: demo test test-all docs venv bytecode sglang-env vllm-env dynamo-env test-core clean

venv: $(VENV)/.stamp
# flagtrace's own modules load in every traced process: compiled once here, not on each start
# where PYTHONDONTWRITEBYTECODE is set.
bytecode: venv
	$(BIN)/python -m compileall -q src/flagtrace
$(VENV)/.stamp: requirements-dev.txt pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q --disable-pip-version-check -r requirements-dev.txt
	$(BIN)/pip install -q --disable-pip-version-check --no-deps --no-build-isolation -e .
	touch $@

# The framework releases, built by flagtrace's own release builder (what --release uses) into .envs/.
ENVS := $(CURDIR)/.envs
export FLAGTRACE_ENVS := $(ENVS)

sglang-env: venv
	$(BIN)/flagtrace env build --root $(ENVS) $(addprefix sglang==,$(SGLANG_VERSIONS))

vllm-env: venv
	$(BIN)/flagtrace env build --root $(ENVS) $(addprefix vllm==,$(VLLM_VERSIONS))

dynamo-env: vllm-env
	$(BIN)/flagtrace env build --root $(ENVS) $(addprefix ai-dynamo==,$(DYNAMO_VERSIONS))

# The demo builds only the release it shows.
demo: venv bytecode
	$(BIN)/flagtrace env build --root $(ENVS) sglang==$(DEMO_SGLANG)
	bash scripts/demo.sh $(DEMO_SGLANG)

# Two workers, a test file each at a time (files share their cached SGLang runs); then, alone, the
# tests against a real sshd, which time what a remote agent cleans up after a killed transport.
SERIAL_TESTS := tests/test_via.py tests/test_via_argv.py tests/test_run_via.py

# The docs site (mkdocs.yml over docs/), built strictly: a broken link or anchor, or a page left out of the nav,
# fails. Not -q: mkdocs 1.6 does not count the warnings it does not print, so -q would let --strict pass them.
docs: venv
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict -d $(CURDIR)/.site

test: venv bytecode docs sglang-env vllm-env dynamo-env
	@[ -e /usr/sbin/sshd ] || echo "make test: /usr/sbin/sshd is missing, so the --via tests (a real OpenSSH server on 127.0.0.1) will be skipped; install it with: sudo apt-get install -y openssh-server openssh-client (.ci/run does)"
	$(BIN)/python -m pytest -q -n 2 --dist loadfile --no-loadscope-reorder --durations=30 tests $(addprefix --ignore=,$(SERIAL_TESTS))
	$(BIN)/python -m pytest -q $(SERIAL_TESTS)

test-core: venv
	$(BIN)/python -m pytest -q tests --ignore=tests/frameworks

clean:
	rm -rf $(VENV) .envs

# The whole observer-effect matrix (every release, every GPU: an hour on 2 cores), beside what make test runs.
test-all: export FLAGTRACE_OBSERVER := all
test-all: export FLAGTRACE_VLLM_OBSERVER := all
test-all: test
