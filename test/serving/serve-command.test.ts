import { PassThrough } from 'node:stream';
import { afterEach, describe, expect, it } from 'vitest';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { createServeCommand, parseServeArgs } from '../../src/cli/commands/serve.js';
import type { ServeResolution, ServeTarget } from '../../src/cli/commands/serve.js';
import type { CommandContext } from '../../src/cli/command.js';
import { serveEntries } from '../../src/serving/serve-entries.js';
import { echoEntry } from './helpers.js';

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** A host's view of a stdio server: it writes our stdin and reads our stdout. */
function stdioPair() {
  const stdin = new PassThrough();
  const stdout = new PassThrough();
  const lines: string[] = [];
  stdout.on('data', (chunk: Buffer) => lines.push(...chunk.toString().split('\n').filter(Boolean)));
  const hostTransport = new StdioServerTransport(stdout, stdin);
  return { stdin, stdout, lines, hostTransport };
}

async function connectHost(hostTransport: StdioServerTransport): Promise<Client> {
  const client = new Client({ name: 'host', version: '1.0.0' });
  await client.connect(hostTransport);
  cleanups.push(() => client.close());
  return client;
}

describe('parseServeArgs', () => {
  it('parses a skill served over HTTP with port, host and token', () => {
    expect(
      parseServeArgs([
        '--skill',
        'git',
        '--transport',
        'http',
        '--port',
        '8123',
        '--host',
        '127.0.0.1',
        '--token',
        't',
      ]),
    ).toEqual({
      target: { kind: 'skill', name: 'git' },
      transport: 'http',
      port: 8123,
      host: '127.0.0.1',
      token: 't',
      allowRemote: false,
      keepSandbox: false,
    });
  });

  it('defaults to stdio and reads the token from AGENTS_SERVE_TOKEN', () => {
    expect(parseServeArgs(['--actor', 'coder'], { AGENTS_SERVE_TOKEN: 'env-token' })).toEqual({
      target: { kind: 'actor', name: 'coder' },
      transport: 'stdio',
      token: 'env-token',
      allowRemote: false,
      keepSandbox: false,
    });
  });

  it('parses --thread, --keep-sandbox and --policy for an actor', () => {
    expect(
      parseServeArgs(['--actor', 'coder', '--thread', 't1', '--keep-sandbox', '--policy', 'auto']),
    ).toEqual({
      target: { kind: 'actor', name: 'coder' },
      transport: 'stdio',
      allowRemote: false,
      keepSandbox: true,
      threadId: 't1',
      policyMode: 'auto',
    });
  });

  it('rejects --thread for a skill and an unknown --policy mode', () => {
    expect(() => parseServeArgs(['--skill', 'files', '--thread', 't1'])).toThrow(
      /--thread applies to --actor only/,
    );
    expect(() => parseServeArgs(['--actor', 'coder', '--policy', 'yolo'])).toThrow(
      /--policy must be read-only, ask or auto, got "yolo"/,
    );
  });

  it('rejects missing or doubled targets, bad transports, bad ports and unknown flags', () => {
    expect(() => parseServeArgs([])).toThrow(/exactly one of --skill NAME or --actor NAME/);
    expect(() => parseServeArgs(['--skill', 'a', '--actor', 'b'])).toThrow(/exactly one/);
    expect(() => parseServeArgs(['--skill', 'a', '--transport', 'sse'])).toThrow(/stdio or http/);
    expect(() => parseServeArgs(['--skill', 'a', '--transport', 'http', '--port', '-1'])).toThrow(
      /--port/,
    );
    expect(() => parseServeArgs(['--skill', 'a', '--port', '80'])).toThrow(/--transport http only/);
    expect(() => parseServeArgs(['--skill', 'a', '--bogus'])).toThrow(/Usage: agents serve/);
  });
});

describe('serveEntries over stdio', () => {
  it('writes only JSON-RPC to stdout and stops when stdin ends', async () => {
    const { stdin, stdout, lines, hostTransport } = stdioPair();
    const logs: string[] = [];
    const served = serveEntries({
      entries: () => [echoEntry('echo')],
      transport: 'stdio',
      stdio: { stdin, stdout },
      log: (line) => logs.push(line),
    });
    const client = await connectHost(hostTransport);
    expect((await client.listTools()).tools.map((tool) => tool.name)).toEqual(['echo']);
    expect((await client.callTool({ name: 'echo', arguments: { text: 'a' } })).content).toEqual([
      { type: 'text', text: '{"text":"a"}' },
    ]);
    stdin.end();
    await served;
    expect(logs).toContain('mcp stdio: stopping (stdin closed)');
    expect(lines.length).toBeGreaterThanOrEqual(3);
    for (const line of lines) expect(JSON.parse(line)).toMatchObject({ jsonrpc: '2.0' });
  });

  it('stops on abort and on a stdout error (EPIPE) without throwing', async () => {
    const first = stdioPair();
    const controller = new AbortController();
    const aborted = serveEntries({
      entries: () => [],
      transport: 'stdio',
      stdio: { stdin: first.stdin, stdout: first.stdout },
      signal: controller.signal,
    });
    controller.abort();
    await expect(aborted).resolves.toBeUndefined();

    const second = stdioPair();
    const logs: string[] = [];
    const broken = serveEntries({
      entries: () => [],
      transport: 'stdio',
      stdio: { stdin: second.stdin, stdout: second.stdout },
      log: (line) => logs.push(line),
    });
    await new Promise((resolve) => setImmediate(resolve));
    second.stdout.emit('error', Object.assign(new Error('write EPIPE'), { code: 'EPIPE' }));
    await expect(broken).resolves.toBeUndefined();
    expect(logs.join('\n')).toContain('stdout failed: write EPIPE');
  });
});

describe('createServeCommand', () => {
  function context(
    stdin: PassThrough,
    stdout: PassThrough,
    signal: AbortSignal,
    argv: string[],
  ): CommandContext {
    const stderr = new PassThrough();
    return {
      argv,
      workspace: '.agents',
      cwd: process.cwd(),
      projectDir: process.cwd(),
      json: false,
      stdin,
      stdout,
      stderr,
      signal,
    };
  }

  it('resolves the target, serves its tools, and closes the resolution after stdin EOF', async () => {
    const { stdin, stdout, hostTransport } = stdioPair();
    const targets: ServeTarget[] = [];
    let closed = 0;
    const command = createServeCommand({
      env: {},
      async resolve(target): Promise<ServeResolution> {
        targets.push(target);
        return {
          entries: () => [echoEntry('skill_tool')],
          async close() {
            closed++;
          },
        };
      },
    });
    const controller = new AbortController();
    const running = command.run(context(stdin, stdout, controller.signal, ['--skill', 'demo']));
    const client = await connectHost(hostTransport);
    expect(client.getServerVersion()?.name).toBe('agents-skill-demo');
    expect((await client.listTools()).tools.map((tool) => tool.name)).toEqual(['skill_tool']);
    expect(closed).toBe(0);
    stdin.end();
    await expect(running).resolves.toBe(0);
    expect(targets).toEqual([{ kind: 'skill', name: 'demo' }]);
    expect(closed).toBe(1);
  });

  it('prints where the tools write, the upstream pids and the ask-mode warning on stderr, and says a kept sandbox stays', async () => {
    const { stdin, stdout } = stdioPair();
    const given: unknown[] = [];
    const command = createServeCommand({
      env: {},
      async resolve(_target, _context, options): Promise<ServeResolution> {
        given.push(options);
        return {
          entries: () => [],
          sandbox: { root: '/work/sb', kept: true, threadId: 't1' },
          upstream: [{ serverName: 'git', pid: 42 }, { serverName: 'web' }],
          policyMode: 'ask',
          close: async () => undefined,
        };
      },
    });
    const ctx = context(stdin, stdout, new AbortController().signal, [
      '--actor',
      'coder',
      '--thread',
      't1',
    ]);
    let stderr = '';
    ctx.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const running = command.run(ctx);
    await new Promise((resolve) => setImmediate(resolve));
    stdin.end();
    await expect(running).resolves.toBe(0);
    expect(given).toEqual([{ keepSandbox: false, threadId: 't1' }]);
    expect(stderr.split('\n').filter((line) => !line.startsWith('mcp stdio'))).toEqual([
      'serving actor "coder" over stdio',
      'sandbox: /work/sb (thread t1; kept after exit)',
      'upstream server "git" (pid 42)',
      'upstream server "web"',
      'warning: the policy of actor "coder" is in mode ask: write-class tools need approval; MCP clients with elicitation support are asked, others get an error result. Allow tools with policy rules or serve with --policy auto to run them unasked.',
      'sandbox kept: /work/sb (see its changes: agents sandbox diff --thread t1)',
      '',
    ]);
  });

  it('stops on SIGINT/SIGTERM (the context signal) and still closes the upstream servers', async () => {
    const { stdin, stdout } = stdioPair();
    let closed = false;
    const command = createServeCommand({
      env: {},
      resolve: async () => ({
        entries: () => [],
        async close() {
          closed = true;
        },
      }),
    });
    const controller = new AbortController();
    const running = command.run(context(stdin, stdout, controller.signal, ['--actor', 'a']));
    await new Promise((resolve) => setImmediate(resolve));
    controller.abort();
    await expect(running).resolves.toBe(0);
    expect(closed).toBe(true);
  });

  it('reports a failing upstream shutdown as an error after serving', async () => {
    const { stdin, stdout } = stdioPair();
    const command = createServeCommand({
      env: {},
      resolve: async () => ({
        entries: () => [],
        close: async () => {
          throw new Error('git server would not die');
        },
      }),
    });
    const running = command.run(
      context(stdin, stdout, new AbortController().signal, ['--skill', 's']),
    );
    stdin.end();
    await expect(running).rejects.toThrow(
      /shutting down the upstream servers failed: git server would not die/,
    );
  });
});
