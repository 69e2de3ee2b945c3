#!/usr/bin/env bash
# Smoke test of the built distribution: start it on loopback with both
# examples' configurations, post the paper's failing run and a real household
# episode that turns unsafe as OTLP/JSON, and expect te1's violations and
# probguard's risk warning and violation as WARN log records from the
# verdictlogs connector, printed in full by the debug/verdicts exporter.
set -euo pipefail
cd "$(dirname "$0")/.."
bin=./dist/otelcol-agentguard
# A port nothing listens on (a connection to it is refused). The collector's
# own metrics are off: their default port, 8888, may be held.
for _ in $(seq 1 50); do
  port=$(( 20000 + RANDOM % 20000 ))
  (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null || break
done
log=$(mktemp)
AGENTGUARD_OTLP_HTTP=127.0.0.1:$port \
  "$bin" --config examples/weather/collector.yaml --config examples/household/collector.yaml \
  --set 'service::telemetry::metrics::level=none' >"$log" 2>&1 &
pid=$!
trap 'kill $pid 2>/dev/null || true; rm -f "$log"' EXIT
for _ in $(seq 1 100); do
  grep -q "Everything is ready" "$log" && break
  kill -0 $pid 2>/dev/null || { cat "$log"; echo "smoke: the collector exited"; exit 1; }
  sleep 0.1
done
for f in testdata/traces/adk-weather/adk-bad-43-0.json testdata/traces/adk-weather/adk-bad-43-1.json \
  testdata/traces/household-langgraph/ep-004.json; do
  curl -sf -X POST -H 'Content-Type: application/json' --data-binary @"$f" "http://127.0.0.1:$port/v1/traces" >/dev/null
done
# group_timeout has not passed; the verdicts within the traces come after wait/root_wait.
for _ in $(seq 1 100); do
  [ "$(grep -c 'SeverityText: WARN' "$log")" -ge 4 ] && break
  sleep 0.1
done
kill $pid; wait $pid 2>/dev/null || true
warns=$(grep -c 'SeverityText: WARN' "$log" || true)
if [ "$warns" -lt 4 ] || ! grep -q 'FAILURE from event 3 to 4' "$log" \
  || ! grep -q 'P(stay safe) = 0.4604 < 0.7' "$log" || ! grep -q 'unsafe state reached (hazard)' "$log"; then
  cat "$log"; echo "smoke: expected te1's two violations and probguard's risk and violation as WARN log records, saw $warns"; exit 1
fi
echo "smoke: otelcol-agentguard reported $warns warnings as log records (temporalcheck's violations, probguard's risk and violation)"
