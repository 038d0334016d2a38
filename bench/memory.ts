/**
 * Heap after 10,000 calls, per stack: `gc()`, heap used, 10,000 sequential calls, `gc()`, heap
 * used again. A stack that keeps per-call state (listeners, caches, run trees) grows here.
 */
import { connectBench } from './connect.js';
import { getGc, table } from './harness.js';
import { STACK, buildStacks, contendersFor } from './stacks.js';

/** Heap before/after for one stack. */
export interface MemoryResult {
  name: string;
  calls: number;
  beforeBytes: number;
  afterBytes: number;
}

function settledHeap(gc: () => void): number {
  // Several passes: weak callbacks and finalizers free more on the second and third.
  for (let pass = 0; pass < 3; pass++) gc();
  return process.memoryUsage().heapUsed;
}

/** Runs `calls` calls per stack over the in-memory transport and records the heap. */
export async function runMemory(
  quick: boolean,
  log: (line: string) => void,
): Promise<MemoryResult[]> {
  const gc = getGc();
  const calls = quick ? 500 : 10_000;
  await using connection = await connectBench('in-memory');
  const stacks = await buildStacks(connection.client);
  const contenders = contendersFor(connection.client, stacks, 'echo', {
    text: 'x'.repeat(100),
  }).filter((contender) => contender.name !== STACK.localToolNode);
  const results: MemoryResult[] = [];
  for (const contender of contenders) {
    for (let index = 0; index < 200; index++) await contender.call();
    const beforeBytes = settledHeap(gc);
    for (let index = 0; index < calls; index++) await contender.call();
    const afterBytes = settledHeap(gc);
    results.push({ name: contender.name, calls, beforeBytes, afterBytes });
    log(
      `memory ${contender.name}: ${((afterBytes - beforeBytes) / 1024).toFixed(0)} KiB after ${calls} calls`,
    );
  }
  return results;
}

/** Markdown for the memory section. */
export function memoryMarkdown(results: readonly MemoryResult[]): string {
  const kib = (bytes: number): string => `${(bytes / 1024).toFixed(0)} KiB`;
  return [
    'In-memory transport, 100 B echo, heap used after three forced GCs, before and after the calls.',
    '',
    table(
      ['stack', 'calls', 'heap before', 'heap after', 'growth', 'growth per call'],
      results.map((result) => [
        result.name,
        result.calls.toLocaleString('en-US'),
        kib(result.beforeBytes),
        kib(result.afterBytes),
        kib(result.afterBytes - result.beforeBytes),
        `${((result.afterBytes - result.beforeBytes) / result.calls).toFixed(1)} B`,
      ]),
    ),
  ].join('\n');
}
