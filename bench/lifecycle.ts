/**
 * Server lifecycle benchmark (issue 4). Run: `npx tsx bench/lifecycle.ts [cycles]`.
 *
 * 1. Parallel activation of 1, 4 and 8 fault-server fixtures: wall time of the parallel start
 *    as a ratio to the slowest single start measured alone (goal: close to 1×, not N×).
 * 2. N activate/deactivate cycles (default 200) through the ServerManager, counting processes
 *    of the spawned groups still alive afterwards (goal: 0).
 */
import { fileURLToPath } from 'node:url';
import type { NamedServerConfig } from '../src/config/server-schema.js';
import { createServerManager } from '../src/servers/server-manager.js';
import { isProcessGroupAlive } from '../src/servers/process-group.js';
import { benchRounds } from './harness.js';

const FAULT_SERVER = fileURLToPath(new URL('../test/fixtures/fault-server.mjs', import.meta.url));
const cycles = Number(process.argv[2] ?? 200);

function config(name: string): NamedServerConfig {
  return {
    name,
    transport: 'stdio',
    command: process.execPath,
    args: [FAULT_SERVER, 'normal'],
    trusted: false,
    timeouts: {
      startupMs: 30_000,
      callMs: 10_000,
      maxCallMs: 60_000,
      pingMs: 2_000,
      shutdownMs: 1_000,
    },
  };
}

async function timeStart(configs: NamedServerConfig[]): Promise<{ ms: number; pids: number[] }> {
  const manager = createServerManager();
  const started = performance.now();
  const lease = await manager.acquire(configs);
  const ms = performance.now() - started;
  const pids = lease.servers.map((server) => server.pid!);
  await manager.close();
  return { ms, pids };
}

const median = (values: number[]): number =>
  [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

async function main(): Promise<void> {
  console.log(`node ${process.version}, ${(await import('node:os')).cpus().length} cpus`);
  // Warm the file cache so the first measurement is not an outlier.
  await timeStart([config('warm')]);

  const singles: number[] = [];
  const singleRuns = benchRounds(5, 1);
  for (let index = 0; index < singleRuns; index++)
    singles.push((await timeStart([config(`single${index}`)])).ms);
  const slowestSingle = Math.max(...singles);
  console.log(
    `single start: median ${median(singles).toFixed(0)} ms, slowest ${slowestSingle.toFixed(0)} ms (${singleRuns} runs)`,
  );

  for (const count of [1, 4, 8]) {
    const runs: number[] = [];
    for (let run = 0; run < benchRounds(3, 1); run++) {
      const configs = Array.from({ length: count }, (_, index) =>
        config(`p${count}_${run}_${index}`),
      );
      runs.push((await timeStart(configs)).ms);
    }
    const ms = median(runs);
    console.log(
      `parallel start of ${count}: median ${ms.toFixed(0)} ms = ${(ms / slowestSingle).toFixed(2)}× the slowest single start ` +
        `(${(ms / median(singles)).toFixed(2)}× the median single; sequential would be ~${count}×)`,
    );
  }

  const manager = createServerManager();
  const pgids: number[] = [];
  const started = performance.now();
  for (let cycle = 0; cycle < cycles; cycle++) {
    const lease = await manager.acquire([config('cycle')]);
    pgids.push(lease.servers[0]!.pid!);
    await lease.release();
  }
  const elapsed = performance.now() - started;
  await manager.close();
  const alive = pgids.filter((pgid) => isProcessGroupAlive(pgid)).length;
  console.log(
    `${cycles} activate/deactivate cycles: ${elapsed.toFixed(0)} ms (${(elapsed / cycles).toFixed(0)} ms per cycle), ` +
      `process groups left alive: ${alive}`,
  );
  if (alive > 0) process.exitCode = 1;
}

await main();
