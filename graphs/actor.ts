/**
 * Entry module for the LangGraph dev server / Studio (`langgraph.json` → `./graphs/actor.ts:graph`).
 *
 * Loading this module starts the reference actor (see `studio-actor.ts`): a sandbox made from
 * `$AGENTS_STUDIO_SOURCE` (a git repo) or from a fresh temp repo, and the filesystem MCP server.
 * `$AGENTS_STUDIO_BASE_DIR` and `$AGENTS_STUDIO_SANDBOX_ID` choose where the sandbox folder goes
 * and its id (tests use them to find the files); see `studioOptionsFromEnv`.
 * They are stopped when the process exits, however it exits (see the comment below).
 *
 * The graph is exported without a checkpointer: the dev server injects its own.
 */
import { createStudioActor, studioOptionsFromEnv } from './studio-actor.js';

const actor = await createStudioActor({ janitor: true, ...studioOptionsFromEnv() });

// Stopping. The dev server turns SIGINT/SIGTERM into `process.exit`, and runs graphs under
// `tsx`, whose parent SIGKILLs this process if it does not acknowledge a signal within ~30 ms;
// in-process cleanup cannot be relied on. The stdio transport's exit hook kills the MCP server's
// process group on a normal exit; the janitor (a detached watchdog on a pipe, see janitor.mjs)
// stops the server and removes the sandbox and temp folders however this process ends.

/** The compiled reference actor graph (no checkpointer: the dev server brings its own). */
export const graph = actor.graph;

/** Where the sandbox lives, for people poking at it from Studio. */
export const sandboxRoot = actor.sandbox.root;
