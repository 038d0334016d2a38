/**
 * Entry module for the LangGraph dev server / Studio (`langgraph.json` → `./graphs/actor.ts:graph`).
 *
 * Loading this module starts the reference actor (see `studio-actor.ts`): a sandbox made from
 * `$AGENTS_STUDIO_SOURCE` (a git repo) or from a fresh temp repo, and the filesystem MCP server.
 * `$AGENTS_STUDIO_BASE_DIR` and `$AGENTS_STUDIO_SANDBOX_ID` choose where the sandbox folder goes
 * and its id (tests use them to find the files).
 * They are stopped when the process exits (see the 'exit' handler below).
 *
 * The graph is exported without a checkpointer: the dev server injects its own.
 */
import { createStudioActor } from './studio-actor.js';
import { appendFileSync as dbg } from 'node:fs';
const L = (m: string) => dbg('/tmp/bt/exit.log', `${Date.now() % 100000} ${process.pid} ${m}\n`);
L('load');

function fromEnv(name: string): string | undefined {
  const value = process.env[name];
  return value === undefined || value === '' ? undefined : value;
}

const source = fromEnv('AGENTS_STUDIO_SOURCE');
const baseDir = fromEnv('AGENTS_STUDIO_BASE_DIR');
const sandboxId = fromEnv('AGENTS_STUDIO_SANDBOX_ID');
const actor = await createStudioActor({
  ...(source === undefined ? {} : { source }),
  ...(baseDir === undefined ? {} : { baseDir }),
  ...(sandboxId === undefined ? {} : { sandboxId }),
});

// Stopping: on SIGINT/SIGTERM close politely (server, then sandbox). The dev server's own exit
// hook calls `process.exit` soon after, which may cut that short, so the synchronous 'exit'
// handler removes the sandbox folder and temp folders too; the MCP server's process group is
// SIGKILLed by the stdio transport's own exit hook.
let stopping = false;
function onSignal(signal: NodeJS.Signals): void {
  if (stopping) return;
  stopping = true;
  L('signal ' + signal);
  void actor
    .close()
    .catch((e) => L('close err ' + String(e)))
    .finally(() => {
      L('closed');
      // When nobody else handles the signal (a plain `tsx` run), end as the signal would have.
      if (process.listenerCount(signal) === 0) process.kill(process.pid, signal);
    });
}
process.once('SIGINT', onSignal);
process.once('SIGTERM', onSignal);
process.once('exit', (c) => { L('exit ' + c); try { actor.closeSync(); L('closeSync done'); } catch (e) { L('closeSync err ' + String(e)); } });
for (const sig of ['SIGINT','SIGTERM','SIGHUP'] as const) process.on(sig, () => L('got ' + sig));

/** The compiled reference actor graph (no checkpointer: the dev server brings its own). */
export const graph = actor.graph;

/** Where the sandbox lives, for people poking at it from Studio. */
export const sandboxRoot = actor.sandbox.root;
