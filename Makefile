# recordseal — `make help` lists the targets. `make run` and `make test` work on a fresh clone.
SHELL := /bin/bash
.DEFAULT_GOAL := help

VENV   := .venv
PY     := $(VENV)/bin/python
BIN    := $(VENV)/bin
export PYO3_PYTHON := $(abspath $(PY))
export CARGO_TERM_COLOR := never

.PHONY: help system setup build run load load-targets test test-rust test-python lint bench bench-service bench-baseline bench-all screenshots verify-dist clean

help: ## list the targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  make %-15s %s\n", $$1, $$2}'

APT_GET := $(if $(filter 0,$(shell id -u)),,sudo) apt-get
# Debian packages the tests and tools run for real: openssl (a local RFC 3161 time-stamping
# authority), wrk (the load script), chromium (browser tests, driven by Playwright),
# postgresql (the tests start a throwaway cluster of their own: tests/pg_cluster.py), and Go
# with golang.org/x/mod's source (tests/interop checks the checkpoints and proofs with Go's
# sumdb packages, built offline in GOPATH mode from /usr/share/gocode), and softhsm2 (a real
# PKCS#11 module: the tests keep header, log and key-encryption keys in it, tests/hsm.py).
SYSTEM_TOOLS := openssl wrk chromium
GO_MOD_SOURCE := /usr/share/gocode/src/golang.org/x/mod/sumdb/tlog

system: ## install the Debian packages the tests use, when missing
	@missing=""; for tool in $(SYSTEM_TOOLS); do command -v $$tool >/dev/null || missing="$$missing $$tool"; done; \
	ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || missing="$$missing postgresql"; \
	command -v go >/dev/null || missing="$$missing golang-go"; \
	command -v softhsm2-util >/dev/null || missing="$$missing softhsm2"; \
	[ -d $(GO_MOD_SOURCE) ] || missing="$$missing golang-golang-x-mod-dev"; \
	if [ -n "$$missing" ]; then \
	  $(APT_GET) update -qq && DEBIAN_FRONTEND=noninteractive $(APT_GET) install -y -qq $$missing; \
	fi

$(VENV)/.deps: pyproject.toml
	python3 -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet 'maturin>=1.9,<2'
	$(PY) -m pip install --quiet $$($(PY) -c 'import tomllib;p=tomllib.load(open("pyproject.toml","rb"))["project"];o=p["optional-dependencies"];print(" ".join(repr(d) for d in p["dependencies"]+o["dev"]+o["bench"]))' | tr -d "'")
	touch $@

setup: $(VENV)/.deps ## create the virtualenv with every dependency

# The build runs only when the extension's sources or the package's metadata changed (the
# stamp is older than one of them): `make run` with nothing changed starts at once. Python
# sources need no build: maturin develop installs python/ in place (a .pth file).
NATIVE_SOURCES := Cargo.toml Cargo.lock pyproject.toml $(shell find rust-core -type f -not -path '*/target/*' 2>/dev/null)

$(VENV)/.built: $(VENV)/.deps $(NATIVE_SOURCES)
	VIRTUAL_ENV=$(abspath $(VENV)) $(BIN)/maturin develop --release --quiet >/dev/null
	touch $@

build: $(VENV)/.built ## build the native extension in release mode into the virtualenv (when its sources changed)

test-rust: setup ## cargo test, clippy and fmt
	cargo fmt --all --check
	cargo clippy --workspace --all-targets -- -D warnings
	cargo clippy --workspace --all-targets --features recordseal-core/python -- -D warnings
	cargo test --workspace --quiet

lint: build ## ruff, ruff format, mypy, the import contract (lint-imports) and stubtest
	$(BIN)/ruff check python tests benchmarks tools
	$(BIN)/ruff format --check python tests benchmarks tools
	$(BIN)/mypy
	$(BIN)/lint-imports --no-cache
	$(BIN)/python -m mypy.stubtest recordseal._native

test-python: build system ## pytest over every suite
	$(BIN)/pytest -q

test: test-rust lint test-python ## everything CI runs: cargo, lints, pytest

BENCH_ARGS ?=
bench: build ## every core operation, native against reference, in about a minute (BENCH_ARGS="--compare docs/benchmarks/baseline.json")
	$(BIN)/recordseal bench $(BENCH_ARGS)

bench-service: build system ## the ingest routes driven by wrk on a service of each core, same load, same run
	$(BIN)/recordseal bench --service $(BENCH_ARGS)

# The committed baseline and picture of docs/performance.md, measured on this machine.
bench-baseline: build ## refresh docs/benchmarks/baseline.json and docs/benchmarks/core.svg
	$(BIN)/recordseal bench --json docs/benchmarks/baseline.json --plot docs/benchmarks/core.svg

# The pytest-benchmark suites include live-view and listing benchmarks that write millions of
# rows on SQLite and PostgreSQL: many minutes, hence not in `make bench`.
bench-all: build system ## make bench, then every pytest-benchmark suite (millions of rows) and cargo bench (Criterion)
	$(BIN)/recordseal bench $(BENCH_ARGS)
	$(BIN)/pytest benchmarks -q --benchmark-only --benchmark-columns=min,median,mean,ops,rounds --benchmark-sort=name
	cargo bench -q -p recordseal-core

# Browser tests write their screenshots to a temporary folder unless RECORDSEAL_SCREENSHOTS
# names one (tests/servers.py), so `make test` leaves the tree clean; this target refreshes
# the committed ones on purpose.
screenshots: build system ## refresh docs/screenshots/ from the browser tests (Chromium)
	RECORDSEAL_SCREENSHOTS=$(abspath docs/screenshots) $(BIN)/pytest -q tests/browser

DATA_DIR    ?= data
WITNESS_DIR ?= $(DATA_DIR)/demo-witness
PORT        ?= 8000
WORKERS     ?= 2

# The demo witness (docs/operations.md) is a process of its own, with its own key and state in
# $(WITNESS_DIR): bundles reach VERIFIED on one machine. Its state lives in the data directory
# it witnesses: a new data directory (rm -rf data) gets a new witness, never one that refuses
# its logs as another history of the old ones. Production names independent
# witnesses in RECORDSEAL_WITNESSES instead.
run: build ## start the service on 127.0.0.1:8000 and a demo witness, state in ./data (witness: ./data/demo-witness)
	$(BIN)/recordseal serve --data-dir $(DATA_DIR) --port $(PORT) --workers $(WORKERS) --demo-witness $(WITNESS_DIR)


# The verifier alone (packaging/recordseal-verify): a pure-Python wheel built from the same
# sources, installable with no compiler (docs/operations.md). tests/verify_dist builds it and
# verifies bundles with it in a fresh virtualenv as part of `make test`.
verify-dist: setup ## build the verifier-only wheel recordseal-verify into dist/
	$(PY) -m pip wheel --quiet --no-deps -w dist packaging/recordseal-verify
	@ls -l dist/recordseal_verify-*.whl

LOAD_ARGS ?=
load: build system ## load script: ingest throughput and latency against a trivial-endpoint ceiling (LOAD_ARGS="--backend postgres --batch 100")
	$(PY) benchmarks/load_ingest.py --seconds 10 $(LOAD_ARGS)

# The four shapes the ingest targets are set on (docs/performance.md, "The targets"), each in
# three rounds that interleave the references and the service; every round's figures are kept
# as JSON in $(LOAD_OUT), outside the tree. About four minutes per shape.
LOAD_OUT    ?= /tmp/recordseal-load-targets
LOAD_ROUNDS := --seconds 10 --rounds 3
load-targets: build system ## the ingest targets' four shapes, 3 interleaved rounds each; JSON in LOAD_OUT (/tmp/recordseal-load-targets)
	mkdir -p $(LOAD_OUT)
	$(PY) benchmarks/load_ingest.py $(LOAD_ROUNDS) --batch 100 --connections 8 --subjects 997 --json $(LOAD_OUT)/sqlite-batch.json
	$(PY) benchmarks/load_ingest.py $(LOAD_ROUNDS) --batch 0 --connections 64 --json $(LOAD_OUT)/sqlite-single.json
	$(PY) benchmarks/load_ingest.py $(LOAD_ROUNDS) --backend postgres --batch 100 --connections 8 --subjects 997 --json $(LOAD_OUT)/postgres-batch.json
	$(PY) benchmarks/load_ingest.py $(LOAD_ROUNDS) --backend postgres --batch 0 --connections 64 --json $(LOAD_OUT)/postgres-single.json
	@echo "every round's figures: $(LOAD_OUT)/{sqlite,postgres}-{batch,single}.json"

clean: ## remove build outputs and the virtualenv
	rm -rf $(VENV) target .pytest_cache .ruff_cache .mypy_cache .hypothesis .benchmarks
