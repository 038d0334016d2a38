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
  it('prints the version for -v and --version, and leaves a later -v to the command', async () => {
    const { version } = (await import('../../package.json', { with: { type: 'json' } })).default;
    for (const flag of ['-v', '--version']) {
      const result = await run(flag);
      expect(result).toEqual({ code: 0, stdout: `${version}\n`, stderr: '' });
    }
    const later = await run('actor', 'run', 'x', '-v');
    expect(later.code).toBe(2);
    expect(later.stdout).toBe('');
  });

  // The index lists each command's words (and its summary, written only there) without loading
  // it: they must be the loaded command's own, or `agents --help` would list a command that is
  // not there.
  it.each(commands.map((command) => [command.path.join(' '), command] as const))(
    'the index entry "%s" loads the command with its words',
    async (_path, entry) => {
      const command = await entry.load();
      expect(command.path).toEqual(entry.path);
      expect(typeof command.run).toBe('function');
    },
  );

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
      expect(result.stderr).toMatch(/^agents: Unknown option --bogus\.\n/);
      expect(result.stderr).toContain(`Usage: agents ${path}`);
      expect(result.stderr).toContain(`See \`agents ${path} --help\``);
      // The synopsis, not the whole help: the error stays on screen.
      expect(result.stderr).not.toContain('Options:');
    },
  );

  it('reports a usage error as INVALID_ARGUMENTS with the usage apart under --json', async () => {
    const result = await run(
      '--json',
      'serve',
      '--skill',
      'a',
      '--port',
      'x',
      '--transport',
      'http',
    );
    expect(result.code).toBe(2);
    const parsed = JSON.parse(result.stderr) as {
      error: { code: string; message: string; details: { usage: string } };
    };
    expect(parsed.error.code).toBe('INVALID_ARGUMENTS');
    expect(parsed.error.message).toContain('--port');
    expect(parsed.error.details.usage).toMatch(/^Usage: agents serve/);
  });

  it('puts a usage error first and alone, with "did you mean" for a close option', async () => {
    const result = await run('actor', 'run', 'coder', '--inptu', 'hi');
    expect(result.code).toBe(2);
    const lines = result.stderr.trimEnd().split('\n');
    expect(lines[0]).toBe('agents: Unknown option --inptu. Did you mean --input?');
    expect(lines[1]).toMatch(/^Usage: agents actor run NAME --input TEXT/);
    expect(lines.at(-1)).toBe('See `agents actor run --help` for all options.');
    expect(lines).toHaveLength(3);
    // Node's parser text (with its unclosed quote) is gone.
    expect(result.stderr).not.toContain('positional argument');
  });

  it('names a missing option value and a value given to a flag plainly', async () => {
    const missing = await run('actor', 'run', 'coder', '--input');
    expect(missing.stderr.split('\n')[0]).toBe('agents: --input needs a value.');
    const flag = await run('checkpoints', '--thread', 't', '--all=yes');
    expect(flag.stderr.split('\n')[0]).toBe('agents: --all takes no value.');
    const far = await run('checkpoints', '--zzzzzz');
    expect(far.stderr.split('\n')[0]).toBe('agents: Unknown option --zzzzzz.');
  });

  it.each([
    [
      ['actor', 'rnu', 'x'],
      'Unknown command "actor rnu". Did you mean "agents actor run"?',
      'actor',
    ],
    [['chekpoints'], 'Unknown command "chekpoints". Did you mean "agents checkpoints"?', ''],
    [['acotr', 'run'], 'Unknown command "acotr run". Did you mean "agents actor run"?', ''],
    [['server', 'fly'], 'Unknown command "server fly".', 'server'],
  ])('suggests the closest command for %j', async (argv, message, group) => {
    const result = await run(...argv);
    expect(result.code).toBe(2);
    expect(result.stderr).toBe(
      `agents: ${message}\nSee \`agents${group ? ` ${group}` : ''} --help\` for the commands.\n`,
    );
  });

  it('rejects a non-numeric mcp-client --timeout as a usage error', async () => {
    const result = await run('mcp-client', 'http://127.0.0.1:1/mcp', '--timeout', '5x');
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('--timeout must be a positive integer, got "5x"');
  });
});
