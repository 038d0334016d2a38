import { execFileSync } from 'node:child_process';
import { mkdtemp, readdir, readFile, realpath, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { createWorkspaceStore } from '../../src/workspace/store.js';
import type { WorkspaceStore } from '../../src/workspace/workspace-types.js';

const NOTES_SERVER = join(import.meta.dirname, '..', 'fixtures', 'workspace', 'notes-server.mjs');

/** One way a start fails, and the workspace that makes it fail. */
export interface FailedStartCase {
  kind: string;
  /** The error code the start fails with. */
  code: string;
  /** Runs without a first commit in the project. */
  noCommits?: boolean;
  actor: Record<string, unknown>;
  /** Add a server whose command does not exist to the actor's skill. */
  brokenServer?: boolean;
}

/** The five failures of issue 13 item 5. */
export const FAILED_START_CASES: FailedStartCase[] = [
  {
    kind: 'a missing script',
    code: 'CONFIG_NOT_FOUND',
    actor: { model: 'scripted:missing.yaml' },
  },
  {
    kind: 'a missing provider package',
    code: 'CONFIG_INVALID',
    actor: { model: 'anthropic:claude-sonnet-4-5' },
  },
  {
    kind: 'a bad revision',
    code: 'REVISION_NOT_FOUND',
    actor: { sandbox: { revision: 'no-such-branch' } },
  },
  // A repo with no commits no longer fails to start on main (since the shared-store merge), so
  // it is not listed here; `noCommits` stays for a case that needs it.
  {
    kind: 'a server that fails to spawn',
    code: 'SERVER_START_FAILED',
    brokenServer: true,
    actor: {},
  },
];

/**
 * A project (git repo) with a workspace holding actor `bot` set up to fail as `failure` says,
 * with a working server (`notes`, its processes marked by `mark` in their environment) next to
 * the broken one, so a failed start has something to stop.
 */
export async function failingProject(
  failure: FailedStartCase,
  mark: string,
): Promise<{ dir: string; store: WorkspaceStore }> {
  const dir = await realpath(await mkdtemp(join(tmpdir(), 'agents-failed-start-')));
  const git = (...args: string[]) => execFileSync('git', args, { cwd: dir, stdio: 'pipe' });
  git('init', '-q', '-b', 'main');
  git('config', 'user.email', 't@example.com');
  git('config', 'user.name', 'T');
  await writeFile(join(dir, 'README.md'), 'hello\n');
  if (failure.noCommits !== true) {
    git('add', 'README.md');
    git('commit', '-q', '-m', 'init');
  }
  await writeFile(join(dir, 'script.yaml'), '- content: done\n');
  const store = createWorkspaceStore(join(dir, '.agents'));
  await store.put('server', 'notes', {
    transport: 'stdio',
    command: process.execPath,
    args: [NOTES_SERVER],
    env: { AGENTS_FAILED_START_MARK: mark },
  });
  const servers = ['notes'];
  if (failure.brokenServer === true) {
    await store.put('server', 'broken', {
      transport: 'stdio',
      command: join(dir, 'no-such-server-binary'),
      args: [],
    });
    servers.push('broken');
  }
  await store.put('skill', 'notes', { mcpServers: servers });
  await store.put('actor', 'bot', {
    skills: ['notes'],
    model: 'scripted:script.yaml',
    policy: { mode: 'auto' },
    checkpointer: { type: 'sqlite', path: '.agents/checkpoints.sqlite' },
    ...failure.actor,
  });
  return { dir, store };
}

/** Every file and folder under `dir`, relative and sorted (empty folders included). */
export async function listTree(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { recursive: true, withFileTypes: true });
  return entries
    .map((entry) => relative(dir, join(entry.parentPath, entry.name)))
    .sort((a, b) => a.localeCompare(b));
}

/** Pids of live processes whose environment holds `AGENTS_FAILED_START_MARK=mark` (Linux /proc). */
export async function markedProcesses(mark: string): Promise<number[]> {
  const needle = `AGENTS_FAILED_START_MARK=${mark}`;
  const found: number[] = [];
  for (const name of await readdir('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    const environ = await readFile(`/proc/${name}/environ`, 'utf8').catch(() => '');
    if (environ.split('\0').includes(needle)) found.push(Number(name));
  }
  return found;
}
