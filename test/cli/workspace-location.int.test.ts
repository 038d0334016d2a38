import { execFileSync } from 'node:child_process';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  realpathSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { locateWorkspace } from '../../src/workspace/locate-workspace.js';
import { agents } from './helpers.js';

const NOTES_SERVER = join(import.meta.dirname, '..', 'fixtures', 'workspace', 'notes-server.mjs');

let scratch: string;
beforeEach(() => {
  scratch = realpathSync(mkdtempSync(join(tmpdir(), 'agents-ws-location-')));
});
afterEach(() => {
  rmSync(scratch, { recursive: true, force: true });
});

/** A project folder with a workspace holding one actor that writes a note. */
async function makeProject(dir: string): Promise<void> {
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'README.md'), 'hello\n');
  writeFileSync(
    join(dir, 'script.yaml'),
    '- tool_calls: [{ name: write_note, args: { path: out.md, text: "x" } }]\n- content: done\n',
  );
  const workspace = join(dir, '.agents');
  for (const argv of [
    ['server', 'add', 'notes', '--', process.execPath, NOTES_SERVER],
    ['skill', 'add', 'notes', '--server', 'notes'],
    [
      'actor',
      'add',
      'bot',
      '--skill',
      'notes',
      '--model',
      'scripted:script.yaml',
      '--policy',
      'auto',
    ],
  ]) {
    const done = await agents(dir, '--workspace', workspace, ...argv);
    expect(done.code, done.stderr).toBe(0);
  }
}

describe('locateWorkspace', () => {
  it('finds .agents from subfolders upward, stops at the repo top and below the home folder', () => {
    const repo = join(scratch, 'home', 'repo');
    mkdirSync(join(repo, 'a', 'b'), { recursive: true });
    mkdirSync(join(repo, '.git'));
    mkdirSync(join(repo, '.agents'));
    expect(locateWorkspace(join(repo, 'a', 'b'), join(scratch, 'home'))).toBe(
      join(repo, '.agents'),
    );
    rmSync(join(repo, '.agents'), { recursive: true });
    // Above the repo top: not searched.
    mkdirSync(join(scratch, 'home', '.agents'));
    expect(locateWorkspace(join(repo, 'a'), join(scratch, 'home'))).toBeUndefined();
    // No repo: the search stops below the home folder (~/.agents belongs to other tools).
    const plain = join(scratch, 'home', 'plain', 'sub');
    mkdirSync(plain, { recursive: true });
    expect(locateWorkspace(plain, join(scratch, 'home'))).toBeUndefined();
    mkdirSync(join(scratch, 'home', 'plain', '.agents'));
    expect(locateWorkspace(plain, join(scratch, 'home'))).toBe(
      join(scratch, 'home', 'plain', '.agents'),
    );
  });
});

describe('the project folder is the folder holding the workspace', () => {
  it(
    'runs `--workspace /p/.agents` from another folder against /p, writing nothing in the current folder',
    { timeout: 120_000 },
    async () => {
      const project = join(scratch, 'project');
      await makeProject(project);
      execFileSync('git', ['init', '-q', '-b', 'main'], { cwd: project });
      execFileSync('git', ['add', '-A'], { cwd: project });
      execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@e', 'commit', '-qm', 'init'], {
        cwd: project,
      });
      const elsewhere = join(scratch, 'elsewhere');
      mkdirSync(elsewhere);
      const run = await agents(
        elsewhere,
        '--workspace',
        join(project, '.agents'),
        'actor',
        'run',
        'bot',
        '--input',
        'go',
        '--thread',
        't1',
      );
      expect(run.code, run.stderr).toBe(0);
      expect(run.stdout).toContain('changed: A out.md');
      expect(readdirSync(elsewhere)).toEqual([]);
      expect(existsSync(join(project, '.agents', 'checkpoints.sqlite'))).toBe(true);
      expect(existsSync(join(project, 'out.md'))).toBe(false);
      expect(
        execFileSync('git', ['worktree', 'list'], { cwd: project, encoding: 'utf8' })
          .trim()
          .split('\n'),
      ).toHaveLength(1);
      // From a subfolder, without --workspace, the same thread is found.
      const sub = join(project, 'docs');
      mkdirSync(sub);
      const listed = await agents(sub, 'checkpoints', '--thread', 't1');
      expect(listed.code, listed.stderr).toBe(0);
    },
  );

  it(
    'works in a plain folder (no git) that holds its own .agents/',
    { timeout: 120_000 },
    async () => {
      const project = join(scratch, 'plain');
      await makeProject(project);
      const run = await agents(project, 'actor', 'run', 'bot', '--input', 'go', '--thread', 't1');
      expect(run.code, run.stderr).toBe(0);
      expect(run.stdout).toContain('changed: A out.md');
      expect(existsSync(join(project, 'out.md'))).toBe(false);
      expect(existsSync(join(project, '.git'))).toBe(false);
      const diff = await agents(project, 'sandbox', 'diff', '--thread', 't1');
      expect(diff.stdout).toBe('A out.md\n');
    },
  );
});
