/**
 * Issue 23, hole 1: the host never executes anything a tool can write. A tool (confined by
 * bubblewrap where it is available) makes a nested git repository in its sandbox and points
 * a program-naming config key of it at a script it wrote; the script, if the host ever ran it,
 * would append to the user's keep.txt, delete the user's branch `feature` and drop markers in
 * `$HOME` and beside the repo. The host's snapshots, rollback, later runs, `agents serve`,
 * `sandbox diff|apply|commit --branch` must never run it: the user's repo state is identical
 * and no marker appears.
 */
import { execFileSync } from 'node:child_process';
import {
  readFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  realpathSync,
  writeFileSync,
} from 'node:fs';
import { rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { probeBubblewrap } from '../../src/confinement/bubblewrap.js';
import { createWorkspaceStore } from '../../src/workspace/store.js';
import { agents } from '../cli/helpers.js';
import { repoFingerprint } from '../sandbox/helpers.js';
import { spawnServe } from '../serving/cli-helpers.js';

const SERVER = join(import.meta.dirname, '..', 'fixtures', 'isolation-server.mjs');
const BUBBLEWRAP = probeBubblewrap();
const MUST_CONFINE = process.env['AGENTS_REQUIRE_CONFINEMENT'] === '1';

let scratch: string;
let project: string;
let home: string;
let savedHome: string | undefined;

function git(...args: string[]): string {
  return execFileSync('git', args, { cwd: project, encoding: 'utf8', stdio: 'pipe' });
}

/** The user's repo state, leaving out the workspace's own local state (checkpoints, audit log). */
function fingerprint(): Record<string, string> {
  return repoFingerprint(project, { skip: ['.agents', 'script.yaml'] });
}

/** Marker files only a process running on the host, unconfined, could write. */
function markers(): string[] {
  return [join(home, 'pwned'), join(scratch, 'pwned-beside')].filter((path) => existsSync(path));
}

/** What the tool's script does if the host ever runs it. */
function payload(): string {
  return [
    '#!/bin/sh',
    `echo "ran: $0 $*" >> '${join(home, 'pwned')}'`,
    `echo ran >> '${join(scratch, 'pwned-beside')}'`,
    `echo escaped >> '${join(project, 'keep.txt')}'`,
    `git -C '${project}' branch -D feature`,
    'exit 0',
  ].join('\n');
}

/** A shell line that writes the payload to `path` (in the sandbox) and makes it executable. */
function writePayload(path: string): string {
  return `mkdir -p "$(dirname ${path})" && cat > ${path} <<'EOF'\n${payload()}\nEOF\nchmod +x ${path}`;
}

function writeScript(calls: readonly string[]): void {
  const yaml = [
    ...calls.map(
      (script) => `- tool_calls: [${JSON.stringify({ name: 'run_shell', args: { script } })}]`,
    ),
    '- content: all done',
  ].join('\n');
  writeFileSync(join(project, 'script.yaml'), `${yaml}\n`);
}

async function setUpWorkspace(): Promise<void> {
  if (MUST_CONFINE) expect(BUBBLEWRAP.available, JSON.stringify(BUBBLEWRAP)).toBe(true);
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
    sandbox: { confine: BUBBLEWRAP.available ? 'required' : 'auto' },
  });
}

beforeEach(() => {
  scratch = realpathSync(mkdtempSync(join(tmpdir(), 'agents-host-git-')));
  project = join(scratch, 'project');
  home = join(scratch, 'home');
  mkdirSync(project);
  mkdirSync(home);
  // git, the CLI and every child read HOME: the markers' home is a temp folder.
  savedHome = process.env['HOME'];
  process.env['HOME'] = home;
  git('init', '-q', '-b', 'main');
  git('config', 'user.email', 't@example.com');
  git('config', 'user.name', 'T');
  writeFileSync(join(project, 'README.md'), 'hello\n');
  writeFileSync(join(project, 'keep.txt'), 'committed\n');
  writeFileSync(join(project, '.gitignore'), '/.agents/\n/script.yaml\n');
  git('add', '-A');
  git('commit', '-q', '-m', 'init');
  git('branch', 'feature');
  writeFileSync(join(project, 'README.md'), 'stashed work\n');
  git('stash', '-q');
  writeFileSync(join(project, 'keep.txt'), 'uncommitted edit\n');
});

afterEach(async () => {
  if (savedHome === undefined) delete process.env['HOME'];
  else process.env['HOME'] = savedHome;
  await rm(scratch, { recursive: true, force: true });
});

/** The reproduction of the issue, step by step, as three tool calls. */
const fsmonitorEscape = () => [
  'git init -q nested && cd nested && echo n > n.txt && git add n.txt && ' +
    'git -c user.name=t -c user.email=t@example.com commit -qm n && echo dirty >> n.txt',
  `${writePayload('nested/.git/p.sh')}\ngit -C nested config core.fsmonitor "$(realpath nested/.git/p.sh)"`,
  // One more write: the snapshot after it meets the nested repo already in its index.
  'echo later > later.txt && echo dirtier >> nested/n.txt',
];

describe('a nested repo whose core.fsmonitor names a tool-written script (issue 23, hole 1)', () => {
  it(
    'never runs on snapshots, rollback, a second run of the thread, or through agents serve; the nested repo is recorded as skipped',
    { timeout: 300_000 },
    async () => {
      writeScript(fsmonitorEscape());
      await setUpWorkspace();
      const before = fingerprint();

      const run = await agents(project, 'actor', 'run', 'bot', '--input', 'go', '--thread', 't1');
      expect(run.code, run.stderr).toBe(0);
      expect(run.stdout).toContain('all done');
      expect(run.stdout).toContain('changed: A later.txt');
      // The change record names the nested repo as not captured (a link only).
      expect(run.stdout).toMatch(/not captured[^\n]*nested \(a nested git repository/);
      expect(markers()).toEqual([]);
      expect(fingerprint()).toEqual(before);

      const listed = await agents(project, 'checkpoints', '--thread', 't1', '--json');
      expect(listed.code, listed.stderr).toBe(0);
      const checkpoints = JSON.parse(listed.stdout) as Array<{
        checkpointId: string;
        changed: unknown[];
      }>;
      const first = checkpoints.filter((entry) => entry.changed.length > 0).at(-1)!;
      const rolled = await agents(
        project,
        'rollback',
        '--thread',
        't1',
        '--to',
        first.checkpointId,
      );
      expect(rolled.code, rolled.stderr).toBe(0);
      expect(markers()).toEqual([]);
      expect(fingerprint()).toEqual(before);
      const undone = await agents(project, 'rollback', '--thread', 't1', '--undo');
      expect(undone.code, undone.stderr).toBe(0);
      expect(markers()).toEqual([]);
      expect(fingerprint()).toEqual(before);

      // A later run of the same thread reopens the sandbox with the nested repo in its index.
      writeScript(['echo again >> later.txt && echo again >> nested/n.txt']);
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
      expect(markers()).toEqual([]);
      expect(fingerprint()).toEqual(before);

      // Through `agents serve`: a client's call that writes snapshots the same sandbox.
      const served = spawnServe(project, ['--actor', 'bot', '--thread', 't1', '--policy', 'auto']);
      try {
        const client = new Client({ name: 'ide', version: '1.0.0' });
        await client.connect(new StdioServerTransport(served.child.stdout, served.child.stdin));
        try {
          const called = await client.callTool({
            name: 'run_shell',
            arguments: { script: 'echo served >> later.txt && echo served >> nested/n.txt' },
          });
          expect(called.isError, JSON.stringify(called)).not.toBe(true);
          const change = (called._meta as Record<string, { changed?: unknown[] }> | undefined)?.[
            'agents/change'
          ];
          expect(change?.changed).toEqual([{ status: 'M', path: 'later.txt' }]);
        } finally {
          await client.close();
        }
      } finally {
        await served.stop();
      }
      expect(markers()).toEqual([]);
      expect(fingerprint()).toEqual(before);
      expect(git('branch', '--list', 'feature').trim()).toBe('feature');
    },
  );
});

/**
 * A nested repo (and the sandbox's own `.git`, the tool's too) whose config names a program in
 * every key that can, a `.gitattributes` in the sandbox naming a filter, diff and merge driver
 * of that name, and a `.git` file pointing at the user's own repository.
 */
const everyProgramKey = () => {
  const keys = [
    'core.fsmonitor',
    'core.sshCommand',
    'core.pager',
    'core.editor',
    'sequence.editor',
    'diff.external',
    'filter.evil.clean',
    'filter.evil.smudge',
    'filter.evil.process',
    'diff.evil.textconv',
    'diff.evil.command',
    'merge.evil.driver',
    'credential.helper',
    'gpg.program',
  ];
  const configure = (dir: string) =>
    [
      ...keys.map((key) => `git -C ${dir} config ${key} "$P"`),
      `git -C ${dir} config filter.evil.required true`,
      `git -C ${dir} config core.hooksPath "$H"`,
    ].join(' && ');
  return [
    'git init -q n2 && cd n2 && echo n > n.txt && git add n.txt && ' +
      'git -c user.name=t -c user.email=t@example.com commit -qm n && echo dirty >> n.txt',
    [
      writePayload('n2/.git/p.sh'),
      'mkdir -p n2/.git/evil-hooks',
      ...[
        'pre-commit',
        'post-checkout',
        'post-index-change',
        'reference-transaction',
        'pre-push',
      ].map((hook) => `cp n2/.git/p.sh n2/.git/evil-hooks/${hook}`),
      'P="$(realpath n2/.git/p.sh)" H="$(realpath n2/.git/evil-hooks)"',
      `${configure('n2')} && ${configure('.')}`,
      "printf '* filter=evil diff=evil merge=evil\\n' > .gitattributes",
      "printf '* filter=evil diff=evil merge=evil\\n' > n2/.gitattributes",
    ].join('\n'),
    `mkdir -p pointer && printf 'gitdir: %s\\n' '${join(project, '.git')}' > pointer/.git`,
    'echo later > later.txt && echo dirtier >> n2/n.txt && echo edited >> README.md',
  ];
};

describe('program-naming keys of nested repos and the sandbox (issue 23, hole 1)', () => {
  it(
    'none runs on snapshots, sandbox diff, rollback, commit --branch or apply',
    { timeout: 300_000 },
    async () => {
      writeScript(everyProgramKey());
      await setUpWorkspace();
      const before = fingerprint();
      const run = await agents(project, 'actor', 'run', 'bot', '--input', 'go', '--thread', 't2');
      expect(run.code, run.stderr).toBe(0);
      expect(run.stdout).toContain('all done');
      expect(run.stdout).toMatch(/changed: .*A later\.txt/);
      expect(markers()).toEqual([]);
      expect(fingerprint()).toEqual(before);

      for (const flags of [[], ['--patch'], ['--stat']]) {
        const diff = await agents(project, 'sandbox', 'diff', '--thread', 't2', ...flags);
        expect(diff.code, diff.stderr).toBe(0);
        expect(diff.stdout).toContain('later.txt');
      }
      expect(markers()).toEqual([]);
      expect(fingerprint()).toEqual(before);

      const listed = await agents(project, 'checkpoints', '--thread', 't2', '--json');
      const checkpoints = JSON.parse(listed.stdout) as Array<{
        checkpointId: string;
        changed: unknown[];
      }>;
      const first = checkpoints.filter((entry) => entry.changed.length > 0).at(-1)!;
      const rolled = await agents(
        project,
        'rollback',
        '--thread',
        't2',
        '--to',
        first.checkpointId,
      );
      expect(rolled.code, rolled.stderr).toBe(0);
      const undone = await agents(project, 'rollback', '--thread', 't2', '--undo');
      expect(undone.code, undone.stderr).toBe(0);
      expect(markers()).toEqual([]);
      expect(fingerprint()).toEqual(before);

      const branched = await agents(
        project,
        'sandbox',
        'commit',
        '--thread',
        't2',
        '--branch',
        'agents/t2',
      );
      expect(branched.code, branched.stderr).toBe(0);
      expect(markers()).toEqual([]);
      const afterCommit = fingerprint();
      // Only the new branch is new: the working tree, index, stash, config are as they were.
      expect({ ...afterCommit, refs: '', dotGit: '' }).toEqual({ ...before, refs: '', dotGit: '' });
      expect(git('branch', '--format=%(refname:short)').split('\n')).toEqual(
        expect.arrayContaining(['agents/t2', 'feature', 'main']),
      );

      const applied = await agents(project, 'sandbox', 'apply', '--thread', 't2');
      expect(applied.code, applied.stderr).toBe(0);
      expect(markers()).toEqual([]);
      expect(git('show', 'HEAD:keep.txt')).toBe('committed\n');
      expect(readFileSync(join(project, 'keep.txt'), 'utf8')).toBe('uncommitted edit\n');
      expect(readFileSync(join(project, 'later.txt'), 'utf8')).toBe('later\n');
      expect(git('branch', '--list', 'feature').trim()).toBe('feature');
      // The nested repos were never delivered as folders of files or `.git` entries.
      expect(existsSync(join(project, 'n2', '.git'))).toBe(false);
      expect(existsSync(join(project, 'pointer', '.git'))).toBe(false);
      expect(afterCommit.stash).toBe(fingerprint().stash);
    },
  );
});
