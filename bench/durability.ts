/**
 * Issue 38: what exactly-once costs per tool call. One actor run of N sequential write calls
 * (one call per turn, the case where a later call depends on an earlier one) through the actor
 * graph with a git sandbox and the SQLite checkpointer, run with LangGraph's `durability`
 * "async" (the default before issue 38: the next step starts while the previous checkpoint is
 * still being written) and "sync" (what actor runs use now: a step starts only once the
 * previous checkpoint and its task writes are stored).
 *
 *   npx tsx bench/durability.ts              # 40 calls, 3 rounds each
 *   npx tsx bench/durability.ts --calls 100 --rounds 5
 *
 * Prints a markdown table on stdout.
 */
import { execFileSync } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { HumanMessage } from '@langchain/core/messages';
import { createActor } from '../src/actors/actor.js';
import { createScriptedModel } from '../src/actors/scripted-model.js';
import { createWorkspaceStore } from '../src/workspace/store.js';

const { values } = parseArgs({
  options: {
    calls: { type: 'string', default: '40' },
    rounds: { type: 'string', default: '3' },
  },
});
const calls = Number(values.calls);
const rounds = Number(values.rounds);

async function runOnce(durability: 'async' | 'sync'): Promise<number> {
  const dir = await mkdtemp(join(tmpdir(), 'agents-bench-durability-'));
  try {
    const git = (...args: string[]) => execFileSync('git', args, { cwd: dir, stdio: 'pipe' });
    git('init', '-q', '-b', 'main');
    await writeFile(join(dir, 'README.md'), 'hello\n');
    git('add', '-A');
    git('-c', 'user.email=b@example.com', '-c', 'user.name=B', 'commit', '-q', '-m', 'init');
    const store = createWorkspaceStore(join(dir, '.agents'));
    await store.put('skill', 'files', { tools: ['write_file'] });
    const lines: string[] = [];
    for (let index = 0; index < calls; index++) {
      lines.push(
        `- tool_calls: [{ name: write_file, args: { path: out/w${index}.txt, content: "call ${index}" }, id: c${index} }]`,
      );
    }
    lines.push('- content: done');
    await writeFile(join(dir, 'script.yaml'), `${lines.join('\n')}\n`);
    await store.put('actor', 'bench', {
      skills: ['files'],
      model: 'scripted:script.yaml',
      policy: { mode: 'auto' },
      maxTurns: 100_000,
    });
    const model = await createScriptedModel({ file: join(dir, 'script.yaml') });
    await using actor = await createActor({
      name: 'bench',
      workspace: store,
      threadId: 'bench-thread',
      model,
      ephemeralThread: true,
    });
    await actor.activate();
    const started = performance.now();
    await actor.graph.invoke(
      { messages: [new HumanMessage('go')], runTurns: 0 },
      { configurable: { thread_id: 'bench-thread' }, durability },
    );
    return (performance.now() - started) / calls;
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
}

const figures: Record<string, number[]> = { async: [], sync: [] };
for (let round = 0; round < rounds; round++) {
  // Interleaved, so machine noise hits both modes alike; the order alternates, so neither mode
  // always runs first (a warm-up or a neighbour's burst would count against one mode only).
  const order = round % 2 === 0 ? (['async', 'sync'] as const) : (['sync', 'async'] as const);
  for (const mode of order) figures[mode]!.push(await runOnce(mode));
}
const asyncMs = median(figures['async']!);
const syncMs = median(figures['sync']!);
// Paired per round (the two runs of a round ran back to back, under the same load): the ratio
// is what survives a busy machine, where absolute figures swing by 2x between minutes.
const ratios = figures['sync']!.map((sync, round) => sync / figures['async']![round]!);
console.log(`| durability | ms per write call (median of ${rounds}, ${calls} calls) |`);
console.log('| --- | ---: |');
console.log(`| async | ${asyncMs.toFixed(1)} |`);
console.log(`| sync | ${syncMs.toFixed(1)} |`);
console.log(`| sync − async | ${(syncMs - asyncMs).toFixed(1)} |`);
console.log(`| sync / async (median of per-round ratios) | ${median(ratios).toFixed(2)} |`);
console.log(`\nper-round ratios: ${ratios.map((ratio) => ratio.toFixed(2)).join(', ')}`);
