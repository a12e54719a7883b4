# The two set-up commands are `make serve` and `make test`; everything else is a helper.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
# The solver's C cores, one a family (setup.py's SOLVER_CORES), the headers they share and each
# family's own headers (setup.py's depends: the same globs).
SOLVER_C := $(wildcard service/accordion/solver/*/_c*.c) $(wildcard service/accordion/solver/_c*.h) \
	$(wildcard service/accordion/solver/*/_c*.h)

.PHONY: zones test-pure proto-breaking serve-web web-test serve-rest test serve install engine-test bench bench-service clean typecheck proto proto-check lint-proto api-test clients-test deploy-test deploy-render faults-test packages-test

$(STAMP): pyproject.toml clients/python/pyproject.toml setup.py $(SOLVER_C)
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[test]'  # pure here (below): $(COMPILED) compiles, with every stub installed
	$(BIN)/pip install --quiet -e './clients/python[dev]'  # accordion-client: its own package
	touch $(STAMP)
$(STAMP): export ACCORDION_PURE := 1

# The hot path compiled by mypyc (setup.py; the list is accordion/build_info.py), beside its
# sources: rebuilt whenever one of them changes, since a stale .so would shadow the edited .py.
# Without a C compiler the same source runs (tests/ops/test_compiled.py fails then, by module).
COMPILED := $(VENV)/.compiled
COMPILED_SOURCES := $(shell find service/accordion/engine service/accordion/sessions -name '*.py') \
	service/accordion/bytecodec.py service/accordion/api/wire.py service/accordion/api/codec.py \
	service/accordion/api/validation.py service/accordion/build_info.py
$(COMPILED): $(STAMP) $(COMPILED_SOURCES)
	find service -name '*.so' ! -path '*/solver/*' -delete  # a module no longer compiled must not linger
	$(BIN)/python setup.py --quiet build_ext --inplace  # ~1 minute (mypyc, then one C file per module)
	touch $(COMPILED)

install: $(STAMP) $(COMPILED)

# Bytecode in the test runs: written into the tree's __pycache__ (ignored by git and Docker) by the
# first process that imports a module and read by every one after it, even where the caller's
# environment says PYTHONDONTWRITEBYTECODE (this project's sessions' does). Without it each pytest
# process compiled every test module (assertion rewriting) and every interpreted module again
# (collecting the suite: 9.9 s of CPU instead of 2.7), and so did each server a test starts (0.44 s
# of CPU to import the server instead of 0.24). `make test` first collects the suite once in two
# halves side by side (WARM_A, WARM_B: ~11 s of CPU), so its five pytest processes start warm.
TEST_ENV := PYTHONDONTWRITEBYTECODE=
WARM_A := tests/solver tests/engine tests/api tests/sessions
WARM_B := $(filter-out $(WARM_A) %/__pycache__,$(patsubst %/,%,$(wildcard tests/*/)))

# The engine and API suites against the pure-Python build: a copy of the package without the
# mypyc extensions (the solver's C cores kept), first on PYTHONPATH, also for the servers the
# tests start; ACCORDION_PURE=1 tells tests/ops/test_compiled.py which build to expect. Not
# tests/store: the store is interpreted in both builds and neither it nor its tests import a
# compiled module (test_compiled.py holds that), so a pure run would repeat the same code.
PURE := $(VENV)/pure
PURE_TESTS := tests/engine tests/api tests/ops/test_compiled.py
# Not test_pools_every_game.py either: its cost is the solver's C cores deciding every game's deals
# (the same cores in both builds); the pooled NewGame flow on this build is
# test_pools_service.py's and test_winnable_tableau.py's.
PURE_TESTS += --ignore=tests/api/test_pools_every_game.py
# test-pure's serial tests (two Solves that search to their 10 s deadline) run beside its parallel phase,
# as `make test`'s do, not after it: ~20 s of waiting off the end of `make test`.
test-pure: $(STAMP)
	rm -rf $(PURE) && mkdir -p $(PURE) && cp -r service/accordion $(PURE)/
	find $(PURE) -name '*.so' ! -path '*/solver/*' -delete
	find $(PURE) -name __pycache__ -prune -exec rm -rf {} +  # the tree's bytecode (TEST_ENV): stale for the copies
	$(PURE_PYTEST) -m serial $(PURE_TESTS) > $(VENV)/pure-serial-test.log 2>&1 & serial=$$!; \
		$(PURE_PYTEST) -n $(TEST_WORKERS) -m "not serial" $(PURE_TESTS); par=$$?; \
		wait $$serial; ser=$$?; echo "--- the serial tests (beside the parallel ones):"; \
		cat $(VENV)/pure-serial-test.log; test $$par -eq 0 && $(SERIAL_PASSED)
PURE_PYTEST = $(TEST_ENV) ACCORDION_PURE=1 PYTHONPATH=$(abspath $(PURE)) $(BIN)/python -m pytest -q -p no:cacheprovider

# The whole suite against the compiled build, then the engine and API suites against the
# pure one (docs/performance/test-suite.md: how long each takes). First everything the tests need
# (test-needs) with make's own parallelism: what waits on the network (Synapse's venv, `npm ci`,
# apt) beside what computes (the venv, then mypyc's build beside lint and the type check); make
# stops on the first that fails. Then pytest on TEST_WORKERS processes (pytest-xdist;
# tests/conftest.py: which tests go together, and the long ones first) and, beside it, the tests
# marked `serial`, one at a time (they mostly wait on the processes they start and kill: 60 s of
# CPU in 3 minutes); then the pure suite beside the TypeScript client's. Each one's exit status
# is checked (pytest's 5, no test selected, is no failure for a `-m serial` run).
TEST_WORKERS ?= 4
NEEDS_JOBS ?= 4
.PHONY: test-needs
test-needs: $(STAMP) $(COMPILED) lint proto-check lint-proto proto-breaking typecheck
NOW = $$(date -u +%T)
test:
	@echo "make test: $(NOW) the build and checks (test-needs, -j $(NEEDS_JOBS))"
	$(MAKE) -j $(NEEDS_JOBS) --output-sync=target test-needs
	@echo "make test: $(NOW) the suite's bytecode, collected once (two halves side by side)"
	$(TEST_ENV) $(BIN)/python -m pytest -q -p no:cacheprovider --collect-only $(WARM_A) > /dev/null & a=$$!; \
		$(TEST_ENV) $(BIN)/python -m pytest -q -p no:cacheprovider --collect-only $(WARM_B) > /dev/null; b=$$?; \
		wait $$a && test $$b -eq 0
	@echo "make test: $(NOW) the parallel phase, the serial tests beside it"
	$(TEST_ENV) $(BIN)/python -m pytest -q -p no:cacheprovider -m serial > $(VENV)/serial-test.log 2>&1 & serial=$$!; \
		$(TEST_ENV) $(BIN)/python -m pytest -q -p no:cacheprovider -n $(TEST_WORKERS) -m "not serial"; par=$$?; \
		wait $$serial; ser=$$?; echo "--- the serial tests (beside the parallel ones):"; cat $(VENV)/serial-test.log; \
		echo "make test: parallel exit $$par, serial exit $$ser"; test $$par -eq 0 && $(SERIAL_PASSED)
	@echo "make test: $(NOW) the pure suite beside the TypeScript client's (node:test, its own server)"
	cd $(TS) && $(TEST_ENV) npm test > $(abspath $(VENV))/npm-test.log 2>&1 & npm=$$!; \
		$(MAKE) test-pure; pure=$$?; wait $$npm; ts=$$?; \
		cat $(VENV)/npm-test.log; echo "make test: $(NOW) done: pure exit $$pure, npm test exit $$ts"; \
		test $$pure -eq 0 && test $$ts -eq 0
SERIAL_PASSED = { test $$ser -eq 0 || test $$ser -eq 5; }

engine-test: $(STAMP) $(COMPILED)
	$(BIN)/python -m pytest -q tests/engine

# make serve: one process on the embedded store. Access lines (one JSON line per call) go to
# $(ACCESS_LOG), lifecycle lines to the terminal; /metrics on the first free port from 9100 and
# channelz (--admin-port) from 50061, both printed in the banner. More flags: ARGS='--flag value'
# (a flag given twice: the last wins), e.g. make serve ARGS='--access-log-sample 10'.
ACCESS_LOG ?= $(VENV)/log/access.log
serve: $(STAMP) $(COMPILED)
	$(BIN)/accordion-server --listen 127.0.0.1:50051 --access-log $(ACCESS_LOG) \
		--metrics-port $$($(BIN)/python tools/free_port.py 9100) \
		--admin-port $$($(BIN)/python tools/free_port.py 50061) $(ARGS)

# Redis (AOF in .venv/redis-data) and the server with $(WORKERS) workers on it, until Ctrl-C; no Docker.
# More flags: SERVE_REDIS_ARGS='--listen 127.0.0.1:50052 --data-dir DIR', and the server's own
# with ARGS='--flag value' as for make serve. Access lines to $(ACCESS_LOG), /metrics from 9100.
.PHONY: serve-redis
WORKERS ?= 2
serve-redis: $(STAMP) $(COMPILED)
	$(BIN)/python tools/serve_redis.py --workers $(WORKERS) $(SERVE_REDIS_ARGS) -- \
		--access-log $(ACCESS_LOG) --metrics-port $$($(BIN)/python tools/free_port.py 9100) $(ARGS)

# ruff over the whole tree ([tool.ruff] in pyproject.toml: the generated protobuf code left out):
# the layout as `ruff format` writes it, and the lint rules chosen there.
.PHONY: lint
lint: $(STAMP)
	$(BIN)/ruff format --check .
	$(BIN)/ruff check .

typecheck: $(STAMP)
	$(BIN)/mypy --strict service/accordion
	$(BIN)/mypy --config-file clients/python/pyproject.toml clients/python/src/accordion_client \
		clients/python/locustfile.py clients/python/examples/chat_bot.py

api-test: $(STAMP) $(COMPILED)
	$(BIN)/python -m pytest -q tests/api

clients-test: $(STAMP) $(COMPILED)
	$(BIN)/python -m pytest -q tests/clients tests/chat

# --- Synapse, the Matrix homeserver tests/chat starts (docs/chat.md): in its own virtual
# environment, so its pins (Twisted, pydantic, ...) never meet the service's; and DejaVu Sans,
# the font the PNG pictures are drawn with (resvg reads the system's fonts; system-packages).
SYNAPSE := $(VENV)/synapse/.installed
SYNAPSE_VERSION := 1.163.2
DEJAVU := /usr/share/fonts/truetype/dejavu/DejaVuSans.ttf
$(SYNAPSE):
	$(PYTHON) -m venv $(VENV)/synapse
	$(VENV)/synapse/bin/pip install --quiet --upgrade pip
	$(VENV)/synapse/bin/pip install --quiet 'matrix-synapse==$(SYNAPSE_VERSION)'
	touch $(SYNAPSE)
.PHONY: synapse
synapse: $(SYNAPSE) system-packages
test-needs clients-test: $(SYNAPSE) system-packages  # (after SYNAPSE's definition: prerequisites expand where read)

# deploy/ validated offline (Kubernetes and compose schemas, the Dockerfile, `envoy --mode validate`),
# and the multi-process server, TLS/mTLS, API keys and limits against real processes.
deploy-test: $(STAMP) $(COMPILED)
	$(BIN)/python -m pytest -q tests/deploy tests/security tests/workers

faults-test: $(STAMP) $(COMPILED)  # Redis Cluster and Sentinel failovers, SIGKILL with AOF, WAIT, fuzzing (real processes)
	$(BIN)/python -m pytest -q -s tests/faults

# The container Envoy configs (compose, Kubernetes ConfigMap) from deploy/envoy/; `make proto` runs it too.
deploy-render: $(STAMP)
	$(BIN)/python deploy/render_envoy.py

# --- the contract: proto/ -> service/accordion/v1/ (committed; `proto-check` fails when stale)
PROTO_FILES := proto/accordion/v1/accordion.proto
PROTO_GEN := accordion/v1/accordion_pb2.py accordion/v1/accordion_pb2.pyi \
	accordion/v1/accordion_pb2_grpc.py accordion/v1/accordion_pb2_grpc.pyi
# grpc_tools adds its own include dir for google/protobuf/*; proto/third_party has google/api/*.
PROTOC = $(BIN)/python -m grpc_tools.protoc -Iproto -Iproto/third_party \
	--plugin=protoc-gen-mypy=$(BIN)/protoc-gen-mypy --plugin=protoc-gen-mypy_grpc=$(BIN)/protoc-gen-mypy_grpc \
	--python_out=$(1) --grpc_python_out=$(1) --mypy_out=quiet:$(1) --mypy_grpc_out=quiet:$(1) $(PROTO_FILES)

# The client package (clients/python) ships its own copy as accordion_client.v1: protoc's output
# with its imports re-pointed (descriptors unchanged, so both copies load in one process).
CLIENT_GEN := clients/python/src/accordion_client
CLIENT_REWRITE := sed -e 's/^from accordion\.v1 import /from accordion_client.v1 import /' \
	-e "s/'accordion\.v1\.accordion_pb2'/'accordion_client.v1.accordion_pb2'/"

# The C cores' zone numbers (solver/_czones.h) from engine/moves.py ZONE_CODES; the zones test
# fails when the committed header drifts.
zones: $(STAMP)
	$(BIN)/python tools/gen_zones_header.py

proto: $(STAMP)
	$(call PROTOC,service)
	$(call REST_GEN,.)
	$(BIN)/python deploy/render_envoy.py  # the descriptor set is also in deploy/k8s
	for f in $(PROTO_GEN); do $(CLIENT_REWRITE) "service/$$f" > "$(CLIENT_GEN)/$${f#accordion/}"; done

proto-check: $(STAMP)
	@tmp=$$(mktemp -d) && trap 'rm -rf "$$tmp"' EXIT && $(call PROTOC,$$tmp) && \
	for f in $(PROTO_GEN); do \
		cmp -s "$$tmp/$$f" "service/$$f" || { echo "service/$$f is stale: run 'make proto'" >&2; exit 1; }; \
		$(CLIENT_REWRITE) "$$tmp/$$f" | cmp -s - "$(CLIENT_GEN)/$${f#accordion/}" || \
			{ echo "$(CLIENT_GEN)/$${f#accordion/} is stale: run 'make proto'" >&2; exit 1; }; \
	done && echo "proto-check: generated code is up to date"
	@tmp=$$(mktemp -d) && trap 'rm -rf "$$tmp"' EXIT && $(call REST_GEN,$$tmp) && \
	{ diff -r -q "$$tmp/$(TS_GEN)" $(TS_GEN) || { echo "$(TS_GEN) is stale: run 'make proto'" >&2; exit 1; }; } && \
	for f in $(ENVOY_PB) $(OPENAPI); do \
		cmp -s "$$tmp/$$f" "$$f" || { echo "$$f is stale: run 'make proto'" >&2; exit 1; }; \
	done && echo "proto-check: TypeScript code, Envoy descriptor set and OpenAPI are up to date"

# --- TypeScript client, REST face: proto/ -> clients/typescript/src/gen/ (buf + protoc-gen-es from
# node_modules), deploy/envoy/accordion.pb (Envoy's transcoder), docs/openapi.json (tools/gen_openapi.py).
# $(1) is the output root: "." for `make proto`, a temporary directory for `make proto-check`.
TS := clients/typescript
TS_GEN := $(TS)/src/gen
# `npm ci` runs again only when node_modules is gone or the lock file changed.
NPM_STAMP := $(TS)/node_modules/.npm-ci
ENVOY_PB := deploy/envoy/accordion.pb
OPENAPI := docs/openapi.json
REST_GEN = mkdir -p $(1)/deploy/envoy $(1)/docs && \
	$(BIN)/buf generate --template $(TS)/buf.gen.yaml -o $(1) && \
	$(BIN)/python -m grpc_tools.protoc -Iproto -Iproto/third_party --include_imports \
		--descriptor_set_out=$(1)/$(ENVOY_PB) $(PROTO_FILES) google/rpc/status.proto google/rpc/error_details.proto && \
	$(BIN)/python tools/gen_openapi.py -o $(1)/$(OPENAPI)

$(NPM_STAMP): $(TS)/package-lock.json
	cd $(TS) && npm ci --no-audit --no-fund
	touch $(NPM_STAMP)

test-needs proto proto-check: $(NPM_STAMP)

# The client packages as users get them: `pip wheel` and `npm pack`, each installed into a fresh
# environment (a venv; an npm project) and played against a server the test starts. `make test`
# runs the same test with the rest of tests/.
packages-test: $(STAMP) $(COMPILED) $(NPM_STAMP)
	$(BIN)/python -m pytest -q tests/clients/test_packages.py

serve-rest: $(STAMP) $(COMPILED)
	$(BIN)/python tools/serve_rest.py

# --- the web page (clients/web: Vite, the TypeScript client over gRPC-Web) and the API docs.
WEB := clients/web
WEB_STAMP := $(WEB)/node_modules/.npm-ci
CHROMIUM := /usr/bin/chromium
test-needs: $(WEB_STAMP)  # (here: a prerequisite's variable is expanded where the rule is read)
# `npm ci`: exactly the committed lock (complete, rollup's per-platform packages included), so a
# fresh clone stays clean (`npm install` may rewrite the lock).
$(WEB_STAMP): $(WEB)/package-lock.json
	cd $(WEB) && npm ci --no-audit --no-fund
	touch $(WEB_STAMP)

# The page is built only when its sources (or the TypeScript client's) changed: a stamp in dist/.
WEB_BUILT := $(WEB)/dist/.built
WEB_SOURCES := $(wildcard $(WEB)/src/*) $(WEB)/index.html $(WEB)/docs/index.html $(WEB)/vite.config.ts \
	$(WEB)/tsconfig.json $(WEB)/package.json $(shell find $(TS)/src -name '*.ts' 2>/dev/null)
$(WEB_BUILT): $(WEB_SOURCES) $(WEB_STAMP) $(NPM_STAMP)
	cd $(WEB) && npm run build
	touch $(WEB_BUILT)

# Page, REST and docs on one origin: http://127.0.0.1:8080/ (tools/serve_web.py; --cors-origin URL for others).
serve-web: $(STAMP) $(COMPILED) $(NPM_STAMP) $(WEB_STAMP) $(WEB_BUILT)
	$(BIN)/python tools/serve_web.py

# The page in a real headless Chromium: Debian's package, installed when missing (CI runs as root;
# no browser is downloaded), driven by playwright-core; also `npm run build`, the pictures and CORS.
web-test: $(STAMP) $(COMPILED) $(NPM_STAMP) $(WEB_STAMP) system-packages
	$(BIN)/python -m pytest -q tests/web

lint-proto: $(STAMP)
	$(BIN)/buf lint && echo "lint-proto: buf lint passed"

# The contract only grows: buf breaking (FILE rules, buf.yaml) against the committed image of the
# contract before this change (proto/baseline/accordion_v1.binpb; see proto/third_party/README.md).
proto-breaking: $(STAMP)
	$(BIN)/buf breaking --against proto/baseline/accordion_v1.binpb --exclude-imports && \
		echo "proto-breaking: no breaking change against proto/baseline/accordion_v1.binpb"

bench: $(STAMP) $(COMPILED)
	$(BIN)/python bench/engine.py

# deploy/prometheus: the alert rules' unit tests (promtool) and a real Prometheus scraping a real
# server (tests/ops/test_prometheus.py). Debian's prometheus package (promtool, prometheus),
# installed when missing, as chromium is (system-packages, below).
.PHONY: alerts-test
alerts-test: $(STAMP) system-packages
	cd deploy/prometheus && promtool check rules alerts.yml && promtool test rules alerts_test.yml
	$(BIN)/python -m pytest -q -p no:cacheprovider tests/ops/test_prometheus.py

# The service beside a bare grpc.aio echo server, pinned to cores (docs/performance.md); ~2 minutes.
bench-service: $(STAMP) $(COMPILED)
	$(BIN)/python bench/service.py

clean:
	rm -rf $(VENV)
	find service -name "*.so" -delete  # the compiled modules (and the solver core) beside their sources

# --- Debian's packages the tests use, each installed when missing (CI runs as root; no browser is
# downloaded otherwise): chromium (tests/web), prometheus (promtool and prometheus,
# tests/ops/test_prometheus.py), DejaVu Sans (the font resvg draws the PNG pictures with). One
# target, so that `make -j` never runs two apt-get at once; and apt waits for dpkg's lock (another
# `make test` on the same machine may hold it) instead of failing at once.
APT := DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=600
.PHONY: system-packages
system-packages:
	@test -x $(CHROMIUM) && test -x /usr/bin/promtool && test -e $(DEJAVU) || $(APT) update -qq
	@test -x $(CHROMIUM) || $(APT) install -y -qq chromium
	@test -x /usr/bin/promtool || $(APT) install -y -qq --no-install-recommends prometheus
	@test -e $(DEJAVU) || $(APT) install -y -qq fonts-dejavu-core
