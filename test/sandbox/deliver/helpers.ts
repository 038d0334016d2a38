import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdir, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { dirname, join, relative } from 'node:path';
import { openThreadSandbox, threadSandboxDir } from '../../../src/actors/thread-sandbox.js';
import { mkdtemp, realpath } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { agents, makeProjectRepo, type CliRun } from '../../cli/helpers.js';

export const ACTOR = 'bot';

/** Git in the user's repo, read-only commands never refreshing the index. */
export function userGit(dir: string, ...args: string[]): string {
  return execFileSync('git', args, {
    cwd: dir,
    encoding: 'utf8',
    stdio: 'pipe',
    env: { ...process.env, GIT_OPTIONAL_LOCKS: '0' },
  });
}

/** A user's project: the repo, and a workspace kept outside it (sandboxes must be outside). */
export interface Project {
  dir: string;
  workspace: string;
}

/** `agents --workspace <ws> ...` run in the project folder. */
export function cli(project: Project, ...argv: string[]): Promise<CliRun> {
  return agents(project.dir, '--workspace', project.workspace, ...argv);
}

/**
 * A project repo with an actor whose checkpoints go to SQLite (so `agents` commands can open
 * its threads); `files` are committed on top of README.md.
 */
export async function makeProject(
  prefix: string,
  files: Record<string, string | Buffer> = {},
): Promise<Project> {
  const dir = await makeProjectRepo(prefix);
  const workspace = await realpath(await mkdtemp(join(tmpdir(), `${prefix}ws-`)));
  for (const [path, content] of Object.entries(files)) {
    await mkdir(dirname(join(dir, path)), { recursive: true });
    await writeFile(join(dir, path), content);
  }
  await mkdir(join(workspace, 'actors'), { recursive: true });
  await writeFile(
    join(workspace, 'actors', `${ACTOR}.yaml`),
    'skills: [files]\nmodel: scripted:script.yaml\n',
  );
  // The actor's checkpoint file goes to <project>/.agents/ (relative to the project).
  await writeFile(join(dir, '.gitignore'), '.agents/\n');
  userGit(dir, 'add', '-A');
  userGit(dir, 'commit', '-q', '-m', 'project files');
  return { dir, workspace };
}

/** One edit of the sandbox tree: write (string/Buffer), delete (null), or rename ({ to }). */
export type SandboxEdit = string | Buffer | null | { renameTo: string };

/**
 * Does what a run of thread `threadId` would do to its sandbox: opens (or makes) the thread's
 * sandbox, applies `edits` to its tree and snapshots. Returns the snapshot sha.
 */
export async function editThread(
  { dir, workspace }: Project,
  threadId: string,
  edits: Record<string, SandboxEdit>,
  options: { fromWorktree?: boolean } = {},
): Promise<string> {
  const sandbox = await openThreadSandbox({
    workspaceRoot: workspace,
    actor: ACTOR,
    threadId,
    source: dir,
    revision: 'HEAD',
    projectDir: dir,
    ...(options.fromWorktree === true ? { from: 'worktree' as const } : {}),
  });
  try {
    for (const [path, edit] of Object.entries(edits)) {
      const target = join(sandbox.root, path);
      if (edit === null) await rm(target);
      else if (typeof edit === 'object' && !Buffer.isBuffer(edit)) {
        const to = join(sandbox.root, edit.renameTo);
        await mkdir(dirname(to), { recursive: true });
        await writeFile(to, await readFile(target));
        await rm(target);
      } else {
        await mkdir(dirname(target), { recursive: true });
        await writeFile(target, edit);
      }
    }
    return (await sandbox.snapshot('test edits')).sha;
  } finally {
    await sandbox.close({ remove: false });
  }
}

/** sha256 of every file under the user's `.git`, except `objects/`, by path. */
export async function gitDirFingerprint(dir: string): Promise<Record<string, string>> {
  const gitDir = join(dir, '.git');
  const out: Record<string, string> = {};
  const walk = async (folder: string): Promise<void> => {
    for (const entry of await readdir(folder, { withFileTypes: true })) {
      const path = join(folder, entry.name);
      const rel = relative(gitDir, path);
      if (rel === 'objects') continue;
      if (entry.isDirectory()) await walk(path);
      else
        out[rel] = createHash('sha256')
          .update(await readFile(path))
          .digest('hex');
    }
  };
  await walk(gitDir);
  return out;
}

/** Removes a project's folders. */
export async function removeProject(project: Project | undefined): Promise<void> {
  if (project === undefined) return;
  await rm(project.dir, { recursive: true, force: true });
  await rm(project.workspace, { recursive: true, force: true });
}

/** The tree sha of the thread sandbox's latest snapshot (read from its own store). */
export async function sandboxHeadTree(project: Project, threadId: string): Promise<string> {
  const record = JSON.parse(
    await readFile(
      join(threadSandboxDir(project.workspace, ACTOR, threadId), 'thread.json'),
      'utf8',
    ),
  ) as { sandboxDir: string };
  const runDir = join(record.sandboxDir, 'run');
  const marker = JSON.parse(await readFile(join(runDir, 'sandbox.json'), 'utf8')) as {
    head: string;
  };
  return execFileSync(
    'git',
    ['--git-dir', join(runDir, 'git'), 'rev-parse', `${marker.head}^{tree}`],
    {
      encoding: 'utf8',
    },
  ).trim();
}

/**
 * The tree sha of the user's working tree as it is (tracked and untracked, not ignored), made
 * with a temp index so the user's index stays as it was (objects are written to their store).
 */
export async function worktreeTree(dir: string): Promise<string> {
  const folder = await mkdtemp(join(tmpdir(), 'agents-test-index-'));
  try {
    const env = { ...process.env, GIT_INDEX_FILE: join(folder, 'index') };
    execFileSync('git', ['add', '-A'], { cwd: dir, env, stdio: 'pipe' });
    return execFileSync('git', ['write-tree'], { cwd: dir, env, encoding: 'utf8' }).trim();
  } finally {
    await rm(folder, { recursive: true, force: true });
  }
}
