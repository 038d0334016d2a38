/**
 * The CPU profile of a run grouped into phases by where the code lives (bench/long-run-loop.ts):
 * the model step, LangGraph's step and checkpoint write, the SDK and its transport, our
 * pipeline, the sandbox.
 */
import { writeFile } from 'node:fs/promises';
import { Session } from 'node:inspector/promises';

/** Where a profiled function's code lives, as a phase of the run. */
function phaseOf(url: string): string {
  if (url === '') return 'V8 (GC, compiler, native)';
  if (url.includes('/src/actors/scripted-model')) return 'model step (scripted model)';
  if (url.includes('/src/sandbox/') || url.includes('/src/pipeline/path-')) return 'ours: sandbox';
  if (url.includes('/src/checkpoint/')) return 'checkpoint write (SQLite saver)';
  if (url.includes('/src/policy/')) return 'ours: policy and audit log';
  if (url.includes('/src/')) return 'ours: pipeline, actor, adapter';
  if (url.includes('langgraph-checkpoint') || url.includes('better-sqlite3'))
    return 'checkpoint write (SQLite saver)';
  if (url.includes('@langchain/langgraph')) return 'LangGraph step';
  if (url.includes('@langchain/mcp-adapters')) return 'peer adapter';
  if (url.includes('@langchain/core') || url.includes('langsmith')) return 'LangChain core';
  if (url.includes('@modelcontextprotocol') || url.includes('zod')) return 'MCP SDK + zod';
  if (url.includes('/yaml/')) return 'YAML';
  if (url.includes('json-schema') || url.includes('ajv')) return 'JSON Schema validation';
  if (url.startsWith('node:')) return 'Node (streams, pipes, timers)';
  return 'other';
}

/**
 * Runs `run` under the V8 sampling profiler and returns its value and the share of profiled time
 * per phase, in percent. `keep` names a file for the raw profile (open it in Chrome DevTools).
 */
export async function profiledPhases<T>(
  run: () => Promise<T>,
  keep?: string,
): Promise<{ value: T; phases: Record<string, number> }> {
  const session = new Session();
  session.connect();
  await session.post('Profiler.enable');
  await session.post('Profiler.setSamplingInterval', { interval: 500 });
  await session.post('Profiler.start');
  const value = await run();
  const { profile } = await session.post('Profiler.stop');
  session.disconnect();
  if (keep) await writeFile(keep, JSON.stringify(profile));
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  const totals = new Map<string, number>();
  const deltas = profile.timeDeltas ?? [];
  let all = 0;
  (profile.samples ?? []).forEach((id, index) => {
    const node = byId.get(id)!;
    const name = node.callFrame.functionName;
    const phase = name === '(idle)' ? 'idle (waiting on the server)' : phaseOf(node.callFrame.url);
    const delta = deltas[index] ?? 0;
    if (process.env['BENCH_LOOP_OTHER'] === '1' && phase === 'other')
      process.stderr.write(`other: ${name} ${node.callFrame.url}\n`);
    totals.set(phase, (totals.get(phase) ?? 0) + delta);
    all += delta;
  });
  const phases: Record<string, number> = {};
  for (const [phase, time] of totals) phases[phase] = (100 * time) / all;
  return { value, phases };
}
