/**
 * Entry module for the LangGraph dev server / Studio (`langgraph.json` → `./graphs/approvals.ts:graph`):
 * the reference actor of `actor.ts` with the safety policy in `ask` mode.
 *
 * A write-class call (the scripted model's `write_file`) pauses the run with a LangGraph
 * interrupt whose value is the approval preview (`kind: 'agents/tool-approval'`: the tool, its
 * arguments with logical paths, each capability verdict and where it came from). Studio shows it
 * on the thread; answer with `Command({ resume })`:
 * `{ type: 'approve' }`, `{ type: 'edit', args }` or `{ type: 'reject', message }`.
 *
 * It has its own sandbox (id `$AGENTS_STUDIO_SANDBOX_ID-approvals` when that is set) and its own
 * filesystem MCP server, stopped and removed like `actor.ts`'s when the process exits.
 * Exported without a checkpointer: the dev server injects its own (interrupts need one).
 */
import { createStudioGraph } from '../src/studio/index.js';
import { createStudioActor, studioOptionsFromEnv } from './studio-actor.js';

const actor = await createStudioGraph((studio) =>
  createStudioActor({
    janitor: studio.janitor,
    name: 'approvals',
    policy: { mode: 'ask' },
    ...studioOptionsFromEnv(process.env, { idSuffix: 'approvals' }),
  }),
);

/** The reference actor graph with approvals (no checkpointer: the dev server brings its own). */
export const graph = actor.graph;

/** Where this graph's sandbox lives, for people poking at it from Studio. */
export const sandboxRoot = actor.sandbox.root;
