/**
 * `npm run studio` (`scripts/studio.mjs`) on a busy port: it must say which port and what to do
 * (`--port`), exit non-zero, and leave nothing running: no dev server, no graph process, no MCP
 * server, no sandbox. Two ways to be busy: taken before the script starts (checked first, nothing
 * starts), and taken while the dev server is loading its graphs (the server itself then fails to
 * listen after the graphs started their sandboxes and MCP servers; the script stops it all).
 *
 * Ports are free ones picked for the test (2024 may be in use on a shared machine).
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { freePort, isAlive, OFFLINE_ENV } from '../helpers/dev-server.js';

const ROOT = path.resolve(import.meta.dirname, '..', '..');

function cmdline(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').replaceAll('\0', ' ');
  } catch {
    return '';
  }
}

/** Every process whose command line mentions `text` (our dev server's port, a sandbox folder). */
function processesMentioning(text: string): string[] {
  return readdirSync('/proc')
    .filter((entry) => /^\d+$/.test(entry) && Number(entry) !== process.pid)
    .map(Number)
    .filter((pid) => isAlive(pid) && cmdline(pid).includes(text))
    .map((pid) => `${pid} ${cmdline(pid)}`);
}

async function occupy(port: number): Promise<Server> {
  return await new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => resolve(server));
  });
}

interface Run {
  code: number | null;
  output: string;
}

/** Runs the script; `onOutput` sees everything it prints as it comes. */
function runStudio(
  port: number,
  baseDir: string,
  onOutput: (output: string) => void = () => undefined,
): Promise<Run> {
  const child = spawn(
    process.execPath,
    [path.join(ROOT, 'scripts', 'studio.mjs'), '--port', String(port), '--no-reload'],
    {
      cwd: ROOT,
      env: { ...process.env, ...OFFLINE_ENV, AGENTS_STUDIO_BASE_DIR: baseDir },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let output = '';
  const collect = (chunk: Buffer): void => {
    output += chunk.toString();
    onOutput(output);
  };
  child.stdout.on('data', collect);
  child.stderr.on('data', collect);
  return new Promise((resolve) => child.once('close', (code) => resolve({ code, output })));
}

describe('npm run studio on a busy port', () => {
  let blocker: Server | undefined;
  let baseDir: string | undefined;
  afterEach(async () => {
    await new Promise((resolve) =>
      blocker === undefined ? resolve(undefined) : blocker.close(resolve),
    );
    blocker = undefined;
    if (baseDir !== undefined) rmSync(baseDir, { recursive: true, force: true });
  });

  it('taken before it starts: says which port and to pass --port, starts nothing', async () => {
    const port = await freePort();
    blocker = await occupy(port);
    baseDir = realpathSync(mkdtempSync(path.join(tmpdir(), 'agents-studio-busy-')));
    const started = Date.now();
    const run = await runStudio(port, baseDir);
    expect(run.code).toBe(1);
    expect(run.output).toContain(`port ${port} on 127.0.0.1 is already in use`);
    expect(run.output).toContain(`npm run studio -- --port ${port + 1}`);
    // Nothing was started: no graph loaded (it would have made a sandbox), no server banner.
    expect(run.output).not.toContain('Registering graph');
    expect(readdirSync(baseDir)).toEqual([]);
    expect(processesMentioning(`--port ${port}`)).toEqual([]);
    expect(Date.now() - started).toBeLessThan(15_000);
  });

  it('taken while the graphs load: stops the dev server, its MCP servers and sandboxes', async () => {
    const port = await freePort();
    baseDir = realpathSync(mkdtempSync(path.join(tmpdir(), 'agents-studio-busy-')));
    let taking: Promise<Server> | undefined;
    const run = await runStudio(port, baseDir, (output) => {
      // The script checked the port already; take it before the server listens.
      if (taking === undefined && output.includes('Starting server')) taking = occupy(port);
    });
    blocker = await taking;
    expect(blocker).toBeDefined();
    expect(run.code).toBe(1);
    expect(run.output).toContain('Registering graph');
    expect(run.output).toContain(
      `port ${port} on 127.0.0.1 was taken while the dev server started`,
    );
    expect(run.output).toContain(`npm run studio -- --port ${port + 1}`);
    // The graphs had started (sandboxes, MCP servers); everything is gone again.
    const deadline = Date.now() + 10_000;
    const leftovers = (): string[] => [
      ...processesMentioning(`--port ${port}`),
      ...processesMentioning(baseDir!),
      ...readdirSync(baseDir!).map((name) => path.join(baseDir!, name)),
    ];
    while (leftovers().length > 0 && Date.now() < deadline)
      await new Promise((resolve) => setTimeout(resolve, 100));
    expect(leftovers()).toEqual([]);
    expect(existsSync(baseDir)).toBe(true);
  }, 120_000);
});
