import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { commands } from '../../src/cli/commands/index.js';
import { main } from '../../src/cli/main.js';

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'agents-cli-main-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** Runs `main` in process with buffered streams and a temp workspace. */
async function run(...argv: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const stdout = new PassThrough();
  const stderr = new PassThrough();
  const out: string[] = [];
  const err: string[] = [];
  stdout.on('data', (chunk: Buffer) => out.push(chunk.toString()));
  stderr.on('data', (chunk: Buffer) => err.push(chunk.toString()));
  const code = await main(['--workspace', join(dir, '.agents'), ...argv], {
    stdout,
    stderr,
    stdin: new PassThrough(),
    cwd: dir,
  });
  return { code, stdout: out.join(''), stderr: err.join('') };
}

describe('agents main', () => {
  it.each(commands.map((command) => [command.path.join(' ')]))(
    '"%s --help" prints the command usage and exits 0',
    async (path) => {
      const result = await run(...path.split(' '), '--help');
      expect(result.code).toBe(0);
      expect(result.stdout).toMatch(new RegExp(`^Usage: agents ${path}\\b`));
    },
  );

  // Every command maps an unknown option to the same usage error (exit 2), not to a config
  // error (3): `serve` and `mcp-client` used to answer CONFIG_INVALID.
  it.each(commands.map((command) => [command.path.join(' ')]))(
    '"%s --bogus" is a usage error: exit 2 with the usage on stderr',
    async (path) => {
      const result = await run(...path.split(' '), '--bogus');
      expect(result.code).toBe(2);
      expect(result.stderr).toContain("Unknown option '--bogus'");
      expect(result.stderr).toContain(`Usage: agents ${path}`);
    },
  );

  it('reports a usage error as INVALID_ARGUMENTS with the usage apart under --json', async () => {
    const result = await run('--json', 'serve', '--port', 'x', '--transport', 'http');
    expect(result.code).toBe(2);
    const parsed = JSON.parse(result.stderr) as {
      error: { code: string; message: string; details: { usage: string } };
    };
    expect(parsed.error.code).toBe('INVALID_ARGUMENTS');
    expect(parsed.error.message).toContain('--port');
    expect(parsed.error.details.usage).toMatch(/^Usage: agents serve/);
  });

  it('rejects a non-numeric mcp-client --timeout as a usage error', async () => {
    const result = await run('mcp-client', 'http://127.0.0.1:1/mcp', '--timeout', '5x');
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('--timeout must be a positive integer, got "5x"');
  });
});
