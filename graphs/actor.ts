/**
 * Entry module for the LangGraph dev server / Studio (`langgraph.json` → `./graphs/actor.ts:graph`).
 *
 * Loading this module starts the reference actor (see `studio-actor.ts`): a sandbox made from
 * `$AGENTS_STUDIO_SOURCE` (a git repo) or from a fresh temp repo, and the filesystem MCP server.
 * `$AGENTS_STUDIO_BASE_DIR` and `$AGENTS_STUDIO_SANDBOX_ID` choose where the sandbox folder goes
 * and its id (tests use them to find the files); see `studioOptionsFromEnv`.
 *
 * Stopping: the dev server never tells a graph module it stops (it turns SIGINT/SIGTERM into
 * `process.exit`, and its `tsx` parent SIGKILLs a slow graph process), so the package's
 * `createStudioGraph` registers the server and the folders with a detached janitor that stops
 * and removes them however this process ends: the same helper a user's own graph uses.
 *
 * The graph is exported without a checkpointer: the dev server injects its own.
 */
import { createStudioGraph } from '../src/studio/index.js';
import { createStudioActor, studioOptionsFromEnv } from './studio-actor.js';

const actor = await createStudioGraph((studio) =>
  createStudioActor({ janitor: studio.janitor, ...studioOptionsFromEnv() }),
);

/** The compiled reference actor graph (no checkpointer: the dev server brings its own). */
export const graph = actor.graph;

/** Where the sandbox lives, for people poking at it from Studio. */
export const sandboxRoot = actor.sandbox.root;
