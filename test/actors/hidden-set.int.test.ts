import { execFileSync } from 'node:child_process';
import { mkdir, mkdtemp, readFile, realpath, rm, writeFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { probeBubblewrap } from '../../src/confinement/bubblewrap.js';
import { createWorkspaceStore } from '../../src/workspace/store.js';
import { agentsProcess } from '../cli/helpers.js';
import { TSX_LOADER } from '../fixtures/fixture-process.js';

const HOSTILE_SERVER = join(import.meta.dirname, '..', 'fixtures', 'hostile-server.mjs');
const MAIN = join(import.meta.dirname, '..', '..', 'src', 'cli', 'main.ts');
const BUBBLEWRAP = probeBubblewrap();
const MUST_CONFINE = process.env['AGENTS_REQUIRE_CONFINEMENT'] === '1';

/**
 * Issue 23, hole 2: what a confined tool can read. Everything lives outside /tmp (private to a
 * confined server anyway, so it would prove nothing): a temp folder in the real home holds a
 * fake $HOME, the state folder ($AGENTS_STATE_DIR) and the project, each planted with a secret.
 */
describe('the hidden set: a confined tool reads its sandbox, not the rest of the user', () => {
  let base: string;
  let home: string;
  let state: string;
  let project: string;
  let env: Record<string, string>;
  const planted: Record<string, string> = {};

  beforeEach(async () => {
    base = await realpath(await mkdtemp(join(homedir(), '.agents-hidden-set-')));
    home = join(base, 'home');
    state = join(base, 'state');
    project = join(base, 'project');
    env = { HOME: home, AGENTS_STATE_DIR: state, XDG_STATE_HOME: join(home, '.local', 'state') };
    const plant = async (key: string, path: string) => {
      await mkdir(join(path, '..'), { recursive: true });
      await writeFile(path, `SECRET-${key}\n`);
      planted[key] = path;
    };
    await plant('oauth', join(state, 'oauth', 'remote-0123456789abcdef.json'));
    await plant(
      'otherSandbox',
      join(
        state,
        'projects',
        'other-0123456789abcdef',
        'sandboxes',
        'agents-sandbox-x',
        't',
        'a.txt',
      ),
    );
    await plant('home', join(home, '.ssh', 'id_rsa'));
    await plant('otherWorkspace', join(home, 'code', 'other', '.agents', 'audit.jsonl'));
    await mkdir(project, { recursive: true });
    const git = (...args: string[]) => execFileSync('git', args, { cwd: project, stdio: 'pipe' });
    git('init', '-q', '-b', 'main');
    git('config', 'user.email', 't@example.com');
    git('config', 'user.name', 'T');
    await writeFile(join(project, 'keep.txt'), 'mine\n');
    git('add', '.');
    git('commit', '-q', '-m', 'init');
    const store = createWorkspaceStore(join(project, '.agents'));
    await store.put('server', 'hostile', {
      transport: 'stdio',
      command: process.execPath,
      args: [HOSTILE_SERVER],
      // peek's `target` stands for an argument rewriting cannot recognise: only the OS stops it.
      overrides: { peek: { pathArguments: [] } },
    });
    await store.put('skill', 'hostile', { mcpServers: ['hostile'] });
    // The workspace's run-time files (git-ignored, so the sandbox has no copy): the audit log.
    await plant('workspace', join(project, '.agents', 'audit.jsonl'));
  });

  afterEach(async () => {
    await rm(base, { recursive: true, force: true });
  });

  /** Targets a tool tries, by key; `run` is this sandbox's private store beside its tree. */
  function targets(): Record<string, string> {
    return {
      own: 'keep.txt',
      run: '../run',
      oauth: planted['oauth']!,
      oauthFolder: join(state, 'oauth'),
      otherSandbox: planted['otherSandbox']!,
      home: planted['home']!,
      otherWorkspace: planted['otherWorkspace']!,
      workspace: planted['workspace']!,
    };
  }

  function expectHidden(results: Record<string, string>): void {
    expect(results['own']).toBe('mine\n');
    for (const key of Object.keys(targets()).filter((name) => name !== 'own')) {
      expect([key, results[key]]).toEqual([key, expect.stringMatching(/^peek: ENOENT$/)]);
    }
  }

  it(
    'through `agents actor run`: OAuth token, other sandbox, run/ store, workspaces and $HOME are unreadable',
    { timeout: 120_000 },
    async () => {
      if (!BUBBLEWRAP.available) {
        expect(MUST_CONFINE).toBe(false);
        return;
      }
      // Unconfined, every planted file is readable: the test can fail.
      for (const path of Object.values(planted))
        expect(await readFile(path, 'utf8')).toMatch(/^SECRET-/);
      const keys = Object.keys(targets());
      const script = [
        ...Object.values(targets()).map((target) => ({
          tool_calls: [{ name: 'peek', args: { target } }],
        })),
        { content: 'done' },
      ];
      await writeFile(join(base, 'script.json'), JSON.stringify(script));
      const store = createWorkspaceStore(join(project, '.agents'));
      await store.put('actor', 'peeker', {
        skills: ['hostile'],
        model: `scripted:${join(base, 'script.json')}`,
        policy: { mode: 'auto' },
        checkpointer: { type: 'memory' },
        sandbox: { confine: 'required' },
      });
      const run = await agentsProcess(
        project,
        ['actor', 'run', 'peeker', '--input', 'go', '--json'],
        undefined,
        env,
      );
      expect(run.code, run.stderr).toBe(0);
      const ends = run.stdout
        .split('\n')
        .filter((line) => line.startsWith('{'))
        .map((line) => JSON.parse(line) as { type: string; name?: string; text?: string })
        .filter((event) => event.type === 'tool-call-end');
      expect(ends).toHaveLength(keys.length);
      expectHidden(Object.fromEntries(keys.map((key, index) => [key, ends[index]!.text!])));
    },
  );

  it(
    'through `agents serve`: the same reads fail for a client calling the tool',
    { timeout: 120_000 },
    async () => {
      if (!BUBBLEWRAP.available) {
        expect(MUST_CONFINE).toBe(false);
        return;
      }
      const store = createWorkspaceStore(join(project, '.agents'));
      await store.put('actor', 'served', {
        skills: ['hostile'],
        model: 'scripted',
        policy: { mode: 'auto' },
        checkpointer: { type: 'memory' },
        sandbox: { confine: 'required' },
      });
      const client = new Client({ name: 'ide', version: '1.0.0' });
      await client.connect(
        new StdioClientTransport({
          command: process.execPath,
          args: ['--import', TSX_LOADER, MAIN, 'serve', '--actor', 'served', '--policy', 'auto'],
          cwd: project,
          env: { ...(process.env as Record<string, string>), ...env },
          stderr: 'pipe',
        }),
      );
      try {
        const results: Record<string, string> = {};
        for (const [key, target] of Object.entries(targets())) {
          const result = await client.callTool({ name: 'peek', arguments: { target } });
          const content = result.content as Array<{ text?: string }>;
          results[key] = content.map((block) => block.text ?? '').join('');
        }
        expectHidden(results);
      } finally {
        await client.close();
      }
    },
  );
});
