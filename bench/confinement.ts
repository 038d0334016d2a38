/**
 * Spawn cost of OS confinement (issue 12). Run: `npx tsx bench/confinement.ts [runs]`.
 *
 * Paired, alternating runs (default 20 each) in one process, medians and their ratio:
 * 1. a bare process (`node --version`) spawned plain vs under bubblewrap;
 * 2. an MCP server start to first tools/list and close (the fault-server fixture), unconfined
 *    vs confined (`resolveConfinement` with the sandbox mounted over a project path).
 * Without a working bubblewrap it says so and measures nothing.
 */
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { resolveConfinement, type Confinement } from '../src/confinement/confinement.js';
import { probeBubblewrap } from '../src/confinement/bubblewrap.js';
import { createStdioTransport } from '../src/servers/stdio-transport.js';

const FAULT_SERVER = fileURLToPath(new URL('../test/fixtures/fault-server.mjs', import.meta.url));
const runs = Number(process.argv[2] ?? 20);

const median = (values: number[]): number =>
  [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

function timeProcess(command: string, args: string[]): Promise<number> {
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { stdio: 'ignore' });
    child.once('error', reject);
    child.once('exit', (code) =>
      code === 0 ? resolve(performance.now() - started) : reject(new Error(`exit ${code}`)),
    );
  });
}

async function timeServer(confinement: Confinement, sandbox: string): Promise<number> {
  const started = performance.now();
  const launch = confinement.wrap(process.execPath, [FAULT_SERVER, 'normal'], sandbox);
  const transport = createStdioTransport({
    serverName: 'bench',
    command: launch.command,
    args: launch.args,
    cwd: sandbox,
    runDir: null,
  });
  const client = new Client({ name: 'bench', version: '1.0.0' });
  await client.connect(transport);
  await client.listTools();
  await transport.close();
  return performance.now() - started;
}

async function main(): Promise<void> {
  const probe = probeBubblewrap();
  if (!probe.available) {
    console.log(`not measured: ${probe.reason}`);
    return;
  }
  const scratch = mkdtempSync(join(tmpdir(), 'bench-confine-'));
  const sandbox = join(scratch, 'sandbox');
  const project = join(scratch, 'project');
  mkdirSync(sandbox);
  mkdirSync(project);
  try {
    const off = resolveConfinement({ mode: 'off' }, { sandboxRoot: sandbox });
    const on = resolveConfinement(
      { mode: 'required' },
      { sandboxRoot: sandbox, projectDir: project },
    );
    const bare = on.wrap(process.execPath, ['--version'], sandbox);
    // Warm the file cache and bubblewrap's first run.
    await timeProcess(process.execPath, ['--version']);
    await timeProcess(bare.command, bare.args);
    await timeServer(off, sandbox);
    await timeServer(on, sandbox);
    const rows: Array<[string, number[], number[]]> = [
      ['bare process (node --version)', [], []],
      ['MCP server start → tools/list → close', [], []],
    ];
    for (let index = 0; index < runs; index++) {
      // Alternate the order so drift in machine load hits both sides alike.
      const first = index % 2 === 0;
      for (const confined of first ? [false, true] : [true, false]) {
        rows[0]![confined ? 2 : 1].push(
          confined
            ? await timeProcess(bare.command, bare.args)
            : await timeProcess(process.execPath, ['--version']),
        );
        rows[1]![confined ? 2 : 1].push(await timeServer(confined ? on : off, sandbox));
      }
    }
    console.log(`bubblewrap ${probe.path}, ${runs} paired runs each, medians`);
    console.log('what                                      plain ms  confined ms  added ms  ratio');
    for (const [what, plain, confined] of rows) {
      const a = median(plain);
      const b = median(confined);
      console.log(
        `${what.padEnd(42)}${a.toFixed(1).padStart(8)}${b.toFixed(1).padStart(13)}${(b - a).toFixed(1).padStart(10)}${(b / a).toFixed(2).padStart(7)}×`,
      );
    }
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}

await main();
