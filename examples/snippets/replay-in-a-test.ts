// examples/snippets/replay-in-a-test.ts — run: npx tsx examples/snippets/replay-in-a-test.ts
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { test } from 'node:test'; // in vitest or jest: `test` (or `it`) from there
import { readCassette, replayCassette } from '@agents/langgraph-mcp/testing';

// Recorded by replay-record.ts, committed next to the test: no server, no model, no key.
const cassettePath = join(import.meta.dirname, 'cassettes', 'write-a-note.jsonl');

await test('write-a-note replays the recorded run', async () => {
  const run = await replayCassette({ cassette: await readCassette(cassettePath) });
  assert.equal(run.messages.at(-1)?.content, 'done');
  assert.equal(run.turns, 3);
  console.log('replay in a test ok');
});
