import { execFile, execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { mkdtemp, realpath, rm, symlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AGENTS_CLIENT, startCliSocket, type CliSocket } from './cli-socket.js';
import {
  ROOT,
  documentationPages,
  shellBlocksOf,
  type ShellBlock,
  type ShellCommand,
} from './shell-blocks.js';

/**
 * Every shell block of README.md and docs/*.md, run as written: each command in order, in bash,
 * in one scratch clone of this repo (its `node_modules` linked, as after `npm ci`), a fresh
 * state folder and a clean tree per block. `agents` is the CLI's own `main`, run in this process
 * through a Unix socket (test/docs/cli-socket.ts), not a tsx start per line: the README's alias
 * (`npm run -s agents --`, tsx on src/cli/main.ts) reaches the same `main`, and is checked once.
 *
 * A command whose comment says `exits N` or `fails: exit N` must exit N; every other one 0. A
 * command whose comment says `Ctrl-C stops it` is stopped as Ctrl-C would once it printed.
 */

/**
 * The blocks a page marks as not run here, and why; the list is written out so it cannot grow
 * without this file changing. Key: page and first command.
 */
const NOT_RUN_HERE = [
  'README.md: npm ci && npm start',
  'README.md: npm install @agents/langgraph-mcp @langchain/core @langchain/langgraph @modelcontextprotocol/sdk',
  'docs/delivery.md: agents actor run coder --input "Write hello.txt and notes.txt" --thread t1',
  'docs/development.md: npm ci && npm start',
  'docs/development.md: npm test',
  'docs/remote-servers.md: agents server add linear --url https://mcp.linear.app/mcp',
];

const keyOf = (block: ShellBlock) =>
  `${block.page}: ${block.commands[0]?.text.split('#')[0]!.trim() ?? ''}`;

const blocks = documentationPages().flatMap((page) => shellBlocksOf(page));
const runnable = blocks.filter((block) => block.notRunHere === undefined);

/** Output markers around each command, so a failure shows that command's output alone. */
const MARK = '@@docs-command';

function scriptOf(block: ShellBlock, clone: string, results: string): string {
  const lines = [
    `agents() { ${JSON.stringify(process.execPath)} ${JSON.stringify(AGENTS_CLIENT)} "$@"; }`,
    `cd ${JSON.stringify(clone)}`,
  ];
  block.commands.forEach((command: ShellCommand, index) => {
    lines.push(`echo "${MARK} ${index}"; echo "${MARK} ${index}" >&2`);
    if (command.stopsOnCtrlC) lines.push('export AGENTS_DOCS_STOP_WHEN_READY=1');
    lines.push('started=$(date +%s%N)');
    lines.push(command.text);
    lines.push(
      `code=$?; unset AGENTS_DOCS_STOP_WHEN_READY; ` +
        `echo "${index} $code $((($(date +%s%N) - started) / 1000000))" >> ${results}`,
    );
    // Stop at the first surprise: what follows depends on it.
    lines.push(`[ "$code" = ${command.exitCode} ] || exit 0`);
  });
  return lines.join('\n');
}

function outputOf(text: string, index: number): string {
  const start = text.indexOf(`${MARK} ${index}\n`);
  if (start < 0) return '';
  const end = text.indexOf(`${MARK} ${index + 1}\n`);
  return text.slice(start, end < 0 ? undefined : end);
}

describe('the shell blocks of README.md and docs/ (#36)', () => {
  let scratch: string;
  let clone: string;
  let socket: CliSocket;
  const stateDir = process.env['AGENTS_STATE_DIR'];
  const openAiKey = process.env['OPENAI_API_KEY'];
  const git = (...args: string[]) => execFileSync('git', args, { cwd: clone, stdio: 'pipe' });

  beforeAll(async () => {
    scratch = await realpath(await mkdtemp(join(tmpdir(), 'agents-docs-')));
    clone = join(scratch, 'repo');
    execFileSync('git', ['clone', '-q', '--shared', ROOT, clone], { stdio: 'pipe' });
    await symlink(await realpath(join(ROOT, 'node_modules')), join(clone, 'node_modules'));
    git('config', 'user.email', 'docs@example.com');
    git('config', 'user.name', 'Docs');
    socket = await startCliSocket(join(scratch, 'agents.sock'));
    // Offline, as the blocks say: `agents init` picks the scripted model when there is no key.
    delete process.env['OPENAI_API_KEY'];
  }, 60_000);

  afterAll(async () => {
    await socket?.close();
    if (openAiKey !== undefined) process.env['OPENAI_API_KEY'] = openAiKey;
    if (stateDir === undefined) delete process.env['AGENTS_STATE_DIR'];
    else process.env['AGENTS_STATE_DIR'] = stateDir;
    if (scratch !== undefined) await rm(scratch, { recursive: true, force: true });
  });

  it('every shell block is run here or marked with why not, and that list is written out', () => {
    expect(blocks.length).toBeGreaterThan(NOT_RUN_HERE.length);
    const marked = blocks.filter((block) => block.notRunHere !== undefined);
    expect(marked.map(keyOf)).toEqual(NOT_RUN_HERE);
    for (const block of marked) {
      expect(block.notRunHere!.why.length, keyOf(block)).toBeGreaterThan(10);
      // "run by FILE": that test exists and reads this page.
      if (block.notRunHere!.kind === 'run by') {
        const file = join(ROOT, block.notRunHere!.why.split(' ')[0]!);
        expect(existsSync(file), file).toBe(true);
        expect(readFileSync(file, 'utf8')).toContain(block.page.replace('docs/', ''));
      }
    }
  });

  it("the README's alias for a clone reaches the same CLI", { timeout: 60_000 }, () => {
    const alias = blocks
      .flatMap((block) => block.commands)
      .find((command) => command.text.startsWith('alias agents='));
    expect(alias?.text).toContain('npm run -s agents --');
    // Aliases expand only on lines after the one defining them, and only with this option.
    const help = execFileSync(
      'bash',
      ['-c', `shopt -s expand_aliases\n${alias!.text}\nagents --help`],
      { cwd: clone, encoding: 'utf8' },
    );
    expect(help).toMatch(/^\s+init\s/m);
    expect(help).toMatch(/^\s+chat\s/m);
  });

  it.each(runnable.map((block) => [`${block.page}:${block.line}`, block] as const))(
    '%s runs as written',
    { timeout: 120_000 },
    async (_where, block) => {
      // A clean tree and a fresh state folder: each block starts as a new reader would.
      git('reset', '-q', '--hard');
      git('clean', '-ffdxq', '-e', 'node_modules');
      // Branches an earlier block made (`sandbox commit --branch`) would refuse the same name.
      const branches = git('for-each-ref', '--format=%(refname:short)', 'refs/heads/agents/');
      for (const branch of branches.toString().split('\n').filter(Boolean))
        git('branch', '-q', '-D', branch);
      const state = await mkdtemp(join(scratch, 'state-'));
      process.env['AGENTS_STATE_DIR'] = state;
      const results = join(state, 'codes.txt');
      const callsBefore = socket.calls.length;
      const { stdout, stderr } = await new Promise<{ stdout: string; stderr: string }>(
        (resolve) => {
          execFile(
            'bash',
            ['-c', scriptOf(block, clone, results)],
            {
              env: { ...process.env, AGENTS_DOCS_SOCKET: socket.path, NO_COLOR: '1' },
              maxBuffer: 64 * 1024 * 1024,
            },
            (_error, out, err) => resolve({ stdout: out, stderr: err }),
          ).stdin?.end();
        },
      );
      const codes = existsSync(results)
        ? readFileSync(results, 'utf8')
            .trim()
            .split('\n')
            .map((line) => line.split(' ').map(Number))
        : [];
      // DOCS_TIMES=1: how long each command took, to keep the file within its budget.
      if (process.env['DOCS_TIMES'] === '1')
        console.log(
          codes.map(([i, , ms]) => `${ms} ms ${block.commands[i!]!.text.slice(0, 70)}`).join('\n'),
        );
      block.commands.forEach((command, index) => {
        const got = codes.find(([which]) => which === index)?.[1];
        const why =
          `${block.page}:${command.line}: ${command.text}\n` +
          `stdout:\n${outputOf(stdout, index)}\nstderr:\n${outputOf(stderr, index)}`;
        expect(got, why).toBe(command.exitCode);
      });
      // The precondition: the block's `agents` lines reached the CLI (not some other `agents`).
      const agentsLines = block.commands.filter((command) =>
        /(^|[|&;(]\s*)agents /.test(command.text),
      );
      const calls = socket.calls.slice(callsBefore);
      expect(calls.length).toBeGreaterThanOrEqual(agentsLines.length);
      // A command that runs until Ctrl-C was still running when stopped, not ended by itself.
      const stopped = calls.filter((call) => call.stoppedWhileRunning);
      expect(stopped).toHaveLength(block.commands.filter((command) => command.stopsOnCtrlC).length);
    },
  );
});
