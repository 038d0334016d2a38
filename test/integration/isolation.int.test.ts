/**
 * The four reproductions of the "Sandbox isolation" issue, end to end: a real MCP server
 * (test/fixtures/isolation-server.mjs) whose tools move files, run git in the sandbox and spawn
 * a child that writes, driven by a scripted model through `agents actor run` and through
 * `createActor`. What is asserted is what the sandbox's own repository and path rewriting
 * guarantee without OS confinement: the user's repo (working tree, index, refs, stash, tags,
 * config, hooks, worktree list, `.git/` minus objects and logs) is byte-identical after the run,
 * a canary folder beside the repo is untouched, and snapshots keep recording.
 */
import { execFileSync } from 'node:child_process';
import {
  chmodSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  realpathSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createActor } from '../../src/actors/actor.js';
import type { ActorRunEvent } from '../../src/actors/actor-types.js';
import { createWorkspaceStore } from '../../src/workspace/store.js';
import { agents } from '../cli/helpers.js';
import { hashTree, repoFingerprint } from '../sandbox/helpers.js';

const SERVER = join(import.meta.dirname, '..', 'fixtures', 'isolation-server.mjs');

/** One scripted tool call per model turn, then a final answer. */
const SCRIPT = [
  // 1. An argument not recognised as a path climbs out of the sandbox by a fixed depth.
  { name: 'move', args: { from: 'other.txt', to: '../../../../../../keep.txt' } },
  // 2. git in the sandbox, aimed at the user's refs; then a commit of the tool's own.
  { name: 'run_git', args: { argv: ['branch', '-D', 'feature'] } },
  { name: 'run_git', args: { argv: ['stash', 'drop'] } },
  { name: 'run_git', args: { argv: ['tag', '-f', 'v1', 'HEAD'] } },
  { name: 'spawn_writer', args: { path: 'README.md' } },
  { name: 'run_git', args: { argv: ['commit', '-q', '-am', 'tool commit'] } },
  // 4. A nested repository with no commit, and a name git refuses (path rewriting may refuse
  // it first; either way later snapshots must keep recording).
  { name: 'run_git', args: { argv: ['init', '-q', 'nested'] } },
  { name: 'move', args: { from: 'README.md', to: '.git ' } },
  // A child process aimed at the canary folder beside the repo: refused by path rewriting.
  { name: 'spawn_writer', args: { path: '../canary/pwned.txt' } },
  { name: 'spawn_writer', args: { path: 'later.txt' } },
];

function scriptYaml(): string {
  return [
    ...SCRIPT.map((call) => `- tool_calls: [${JSON.stringify(call)}]`),
    '- content: all done',
  ].join('\n');
}

let scratch: string;
let project: string;
let canary: string;

function git(...args: string[]): string {
  return execFileSync('git', args, { cwd: project, encoding: 'utf8', stdio: 'pipe' });
}

/** The user's repo state, leaving out the workspace's own local state (checkpoints, audit log). */
function fingerprint(): Record<string, string> {
  return repoFingerprint(project, { skip: ['.agents'] });
}

beforeEach(() => {
  scratch = realpathSync(mkdtempSync(join(tmpdir(), 'agents-isolation-')));
  project = join(scratch, 'project');
  canary = join(scratch, 'canary');
  mkdirSync(project);
  mkdirSync(canary);
  writeFileSync(join(canary, 'secret.txt'), 'do not touch\n');
  git('init', '-q', '-b', 'main');
  git('config', 'user.email', 't@example.com');
  git('config', 'user.name', 'T');
  writeFileSync(join(project, 'README.md'), 'hello\n');
  writeFileSync(join(project, 'keep.txt'), 'committed\n');
  writeFileSync(join(project, 'other.txt'), 'other\n');
  writeFileSync(join(project, 'script.yaml'), `${scriptYaml()}\n`);
  writeFileSync(join(project, '.gitignore'), '/.agents/\n');
  git('add', '-A');
  git('commit', '-q', '-m', 'init');
  git('branch', 'feature');
  git('tag', 'v1');
  writeFileSync(join(project, 'README.md'), 'stashed work\n');
  git('stash', '-q');
  // The user's only copy of this edit: uncommitted.
  writeFileSync(join(project, 'keep.txt'), 'uncommitted edit\n');
});

afterEach(() => {
  rmSync(scratch, { recursive: true, force: true });
});

describe('isolation through `agents actor run`', () => {
  it(
    "leaves the user repo and a canary folder untouched whatever the tools do; snapshots keep recording; the user's own git edits between runs are kept",
    { timeout: 180_000 },
    async () => {
      const setup = [
        ['server', 'add', 'iso', '--', process.execPath, SERVER],
        ['skill', 'add', 'iso', '--server', 'iso'],
        [
          'actor',
          'add',
          'bot',
          '--skill',
          'iso',
          '--model',
          'scripted:script.yaml',
          '--policy',
          'auto',
        ],
      ];
      for (const argv of setup) {
        const done = await agents(project, ...argv);
        expect(done.code, done.stderr).toBe(0);
      }
      const before = fingerprint();
      const canaryBefore = hashTree(canary);

      const run = await agents(project, 'actor', 'run', 'bot', '--input', 'go', '--thread', 't1');
      expect(run.code, run.stderr).toBe(0);
      expect(run.stdout).toContain('changed: M README.md');
      expect(run.stdout).toContain('changed: A later.txt');
      expect(run.stdout).toContain('all done');
      // Reproduction 1: under OS confinement the move fails; without it (no bubblewrap) the
      // escape lands outside the project, in the state folder. Either way not on keep.txt.
      expect(readFileSync(join(project, 'keep.txt'), 'utf8')).toBe('uncommitted edit\n');
      // Reproduction 2 and 4: the user's branch, stash and tag, and everything else, as before.
      expect(fingerprint()).toEqual(before);
      expect(git('stash', 'list').trim().split('\n')).toHaveLength(1);
      expect(hashTree(canary)).toBe(canaryBefore);

      const diff = await agents(project, 'sandbox', 'diff', '--thread', 't1');
      expect(diff.code, diff.stderr).toBe(0);
      expect(diff.stdout).toContain('A later.txt');
      expect(diff.stdout).not.toMatch(/\.git /);

      // Reproduction 3: the user edits their git config, remotes and hooks between runs of the
      // thread; the next run (same sandbox, reopened) keeps them.
      git('config', 'user.name', 'Someone Else');
      git('remote', 'add', 'origin', 'https://example.com/repo.git');
      const hook = join(project, '.git', 'hooks', 'pre-commit');
      writeFileSync(hook, '#!/bin/sh\nexit 0\n');
      chmodSync(hook, 0o755);
      const edited = fingerprint();
      const again = await agents(
        project,
        'actor',
        'run',
        'bot',
        '--input',
        'again',
        '--thread',
        't1',
      );
      expect(again.code, again.stderr).toBe(0);
      expect(again.stdout).toContain('all done');
      expect(fingerprint()).toEqual(edited);

      const removed = await agents(project, 'sandbox', 'remove', '--thread', 't1');
      expect(removed.code, removed.stderr).toBe(0);
      expect(fingerprint()).toEqual(edited);
    },
  );
});

describe('isolation through createActor (a graph)', () => {
  it(
    'keeps the user repo byte-identical and records every write, across git commands and odd names',
    { timeout: 120_000 },
    async () => {
      const store = createWorkspaceStore(join(project, '.agents'));
      await store.put('server', 'iso', {
        transport: 'stdio',
        command: process.execPath,
        args: [SERVER],
      });
      await store.put('skill', 'iso', { mcpServers: ['iso'] });
      await store.put('actor', 'bot', {
        skills: ['iso'],
        model: 'scripted:script.yaml',
        policy: { mode: 'auto' },
        checkpointer: { type: 'memory' },
      });
      const before = fingerprint();
      const canaryBefore = hashTree(canary);
      const changed: string[] = [];
      {
        await using actor = await createActor({ name: 'bot', workspace: store });
        await actor.activate();
        const root = actor.sandbox!.root;
        expect(root.startsWith(project)).toBe(false);
        const events: ActorRunEvent[] = [];
        for await (const event of actor.run('go')) events.push(event);
        for (const event of events)
          if (event.type === 'tool-call-end')
            changed.push(
              ...(event.change?.changed ?? []).map((item) => `${item.status} ${item.path}`),
            );
        // git in the sandbox acted on the sandbox's own repository.
        const inSandbox = (...args: string[]) =>
          execFileSync('git', args, { cwd: root, encoding: 'utf8' });
        expect(inSandbox('branch', '--format=%(refname:short)').trim()).toBe('main');
        expect(inSandbox('log', '-1', '--format=%s').trim()).toBe('tool commit');
      }
      expect(changed).toContain('M README.md');
      expect(changed).toContain('A later.txt');
      expect(readFileSync(join(project, 'keep.txt'), 'utf8')).toBe('uncommitted edit\n');
      expect(fingerprint()).toEqual(before);
      expect(hashTree(canary)).toBe(canaryBefore);
    },
  );
});
