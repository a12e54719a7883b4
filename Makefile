# The two set-up commands are `make serve` and `make test`; everything else is a helper.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: test serve install engine-test bench clean typecheck proto proto-check lint-proto api-test

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[test]'
	touch $(STAMP)

install: $(STAMP)

test: $(STAMP) proto-check lint-proto typecheck
	$(BIN)/python -m pytest -q

engine-test: $(STAMP)
	$(BIN)/python -m pytest -q tests/engine

serve: $(STAMP)
	$(BIN)/accordion-server --listen 127.0.0.1:50051

typecheck: $(STAMP)
	$(BIN)/mypy --strict service/accordion/engine

api-test: $(STAMP)
	$(BIN)/python -m pytest -q tests/api

# --- the contract: proto/ -> service/accordion/v1/ (committed; `proto-check` fails when stale)
PROTO_FILES := proto/accordion/v1/accordion.proto
PROTO_GEN := accordion/v1/accordion_pb2.py accordion/v1/accordion_pb2.pyi \
	accordion/v1/accordion_pb2_grpc.py accordion/v1/accordion_pb2_grpc.pyi
# grpc_tools adds its own include dir for google/protobuf/*; proto/third_party has google/api/*.
PROTOC = $(BIN)/python -m grpc_tools.protoc -Iproto -Iproto/third_party \
	--plugin=protoc-gen-mypy=$(BIN)/protoc-gen-mypy --plugin=protoc-gen-mypy_grpc=$(BIN)/protoc-gen-mypy_grpc \
	--python_out=$(1) --grpc_python_out=$(1) --mypy_out=quiet:$(1) --mypy_grpc_out=quiet:$(1) $(PROTO_FILES)

proto: $(STAMP)
	$(call PROTOC,service)

proto-check: $(STAMP)
	@tmp=$$(mktemp -d) && trap 'rm -rf "$$tmp"' EXIT && $(call PROTOC,$$tmp) && \
	for f in $(PROTO_GEN); do \
		cmp -s "$$tmp/$$f" "service/$$f" || { echo "service/$$f is stale: run 'make proto'" >&2; exit 1; }; \
	done && echo "proto-check: generated code is up to date"

lint-proto: $(STAMP)
	$(BIN)/buf lint && echo "lint-proto: buf lint passed"

bench: $(STAMP)
	$(BIN)/python bench/engine.py

clean:
	rm -rf $(VENV)
