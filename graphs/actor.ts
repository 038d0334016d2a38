/**
 * Entry module for the LangGraph dev server / Studio (`langgraph.json` → `./graphs/actor.ts:graph`).
 *
 * Loading this module starts the reference actor (see `studio-actor.ts`): a sandbox made from
 * `$AGENTS_STUDIO_SOURCE` (a git repo) or from a fresh temp repo, and the filesystem MCP server.
 * `$AGENTS_STUDIO_BASE_DIR` and `$AGENTS_STUDIO_SANDBOX_ID` choose where the sandbox folder goes
 * and its id (tests use them to find the files).
 * They are stopped when the process exits: SIGINT/SIGTERM close them politely; a plain exit
 * still kills the server's process group (the stdio transport's own exit hook) and removes the
 * temp folders (below).
 *
 * The graph is exported without a checkpointer: the dev server injects its own.
 */
import { createStudioActor } from './studio-actor.js';

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

// 'exit' handlers must be synchronous: remove temp folders; the server's process group is
// SIGKILLed by the stdio transport's own exit hook.
process.once('exit', () => actor.closeSync());
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    // The dev server exits on its own after these signals; closing now lets the server end
    // cleanly and the worktree be pruned before that.
    void actor.close().catch(() => undefined);
  });
}

/** The compiled reference actor graph (no checkpointer: the dev server brings its own). */
export const graph = actor.graph;

/** Where the sandbox lives, for people poking at it from Studio. */
export const sandboxRoot = actor.sandbox.root;
