#!/bin/bash
# The server's view of a load run beside the client's (issue 34; docs/operations.md): one server
# process (memory store) with /metrics and an access log, /metrics read before and after an
# `accordion-load` open-loop run, `accordion_grpc_calls_waiting` polled each second, then the
# client's table and the server's (tools/server_quantiles.py: arrival→reply, queued and the
# lower bound of the wait in grpc core, per method; refusals, errors, loop lag).
#
#   bench/server_view.sh OUT_DIR RATE SECONDS [accordion-server flags...]
#   LOAD_ARGS='--connections 16' bench/server_view.sh /tmp/view 1500 20
set -u
cd "$(dirname "$0")/.."
OUT=$1; RATE=$2; SECONDS_=$3; shift 3
mkdir -p "$OUT"
MP=$(.venv/bin/python tools/free_port.py 19300)
.venv/bin/accordion-server --listen 127.0.0.1:0 --metrics-port "$MP" --access-log "$OUT/access.log" \
    --access-log-sample 100 --newgame-rate 0 "$@" > "$OUT/server.out" 2> "$OUT/server.err" &
SERVER=$!
for _ in $(seq 1 240); do grep -q "listening on" "$OUT/server.out" 2>/dev/null && break; sleep 0.5; done
ADDR=$(head -1 "$OUT/server.out" | grep -o "127.0.0.1:[0-9]*")
METRICS="http://127.0.0.1:$MP/metrics"
sleep 2
.venv/bin/python tools/server_quantiles.py save "$METRICS" "$OUT/before.prom"
( while true; do
    echo "$(date +%s) $(curl -s "$METRICS" | grep -E '^accordion_grpc_calls_waiting ' | cut -d' ' -f2)"
    sleep 1
  done ) > "$OUT/calls_waiting.txt" &
POLL=$!
# shellcheck disable=SC2086  # LOAD_ARGS is a list of flags
.venv/bin/accordion-load --target "$ADDR" --rate "$RATE" --duration "$SECONDS_" --json "$OUT/load.json" \
    ${LOAD_ARGS:-} > "$OUT/load.txt" 2>&1
kill $POLL
sleep 3
.venv/bin/python tools/server_quantiles.py diff "$OUT/before.prom" "$METRICS" > "$OUT/server.txt"
kill $SERVER; wait $SERVER
grep -v '^\[' "$OUT/load.txt"
echo "---- the server's view"
cat "$OUT/server.txt"
echo "calls waiting in grpc core, each second: $(cut -d' ' -f2 "$OUT/calls_waiting.txt" | tr '\n' ' ')"
