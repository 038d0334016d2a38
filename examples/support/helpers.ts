/**
 * Small helpers the examples share: a throwaway git repo ("the user's project"), a fingerprint of
 * a repo's state to prove it was never touched, a file listing, and our live child processes (to
 * prove no server was left running). Nothing here is part of the library.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, relative } from 'node:path';

/** The entry script of `@modelcontextprotocol/server-filesystem` (run it with `process.execPath`). */
export function filesystemServerEntry(): string {
  return createRequire(import.meta.url).resolve(
    '@modelcontextprotocol/server-filesystem/dist/index.js',
  );
}

/** Runs git in `cwd` with a fixed identity and no user/system config, so results are reproducible. */
export function git(cwd: string, ...args: string[]): string {
  return execFileSync('git', ['-c', 'user.name=demo', '-c', 'user.email=demo@localhost', ...args], {
    cwd,
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, GIT_CONFIG_NOSYSTEM: '1', GIT_CONFIG_GLOBAL: '/dev/null' },
  }).trim();
}

/** Makes `dir` a git repo holding `files` (path → content) in one commit on `main`. */
export function makeGitRepo(dir: string, files: Record<string, string>): void {
  mkdirSync(dir, { recursive: true });
  git(dir, 'init', '-q', '-b', 'main');
  for (const [path, content] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, path)), { recursive: true });
    writeFileSync(join(dir, path), content);
  }
  git(dir, 'add', '-A');
  git(dir, 'commit', '-q', '-m', 'initial');
}

/**
 * What a user would notice if their repo changed: HEAD, branches, tags, index and status, file
 * contents. With `includeSandboxTraces`, also every ref and the registered worktrees, where an
 * older sandbox design left traces; a sandbox is now a repository of its own and leaves none.
 */
export function repoState(dir: string, options: { includeSandboxTraces?: boolean } = {}): string {
  const files = listFiles(dir)
    .map((path) => `${path}\n${readFileSync(join(dir, path), 'utf8')}`)
    .join('\n');
  return [
    git(dir, 'rev-parse', 'HEAD'),
    git(dir, 'for-each-ref', '--format=%(refname) %(objectname)', 'refs/heads', 'refs/tags'),
    git(dir, 'ls-files', '--stage'),
    git(dir, 'status', '--porcelain', '--untracked-files=all'),
    options.includeSandboxTraces === true ? git(dir, 'worktree', 'list', '--porcelain') : '',
    options.includeSandboxTraces === true
      ? git(dir, 'for-each-ref', '--format=%(refname) %(objectname)')
      : '',
    files,
  ].join('\n--\n');
}

/** Files under `dir` (relative, sorted), skipping `.git`. */
export function listFiles(dir: string): string[] {
  const out: string[] = [];
  const walk = (folder: string): void => {
    for (const entry of readdirSync(folder, { withFileTypes: true })) {
      if (entry.name === '.git') continue;
      const path = join(folder, entry.name);
      if (entry.isDirectory()) walk(path);
      else out.push(relative(dir, path));
    }
  };
  walk(dir);
  return out.sort();
}

/** Reads every file under `dir` into a map (relative path → content). */
export function readTree(dir: string): Map<string, string> {
  return new Map(listFiles(dir).map((path) => [path, readFileSync(join(dir, path), 'utf8')]));
}

/**
 * Process ids of this process's live children (servers we spawned). Reads `/proc` on Linux and
 * asks `pgrep -P` elsewhere (which never reports itself).
 */
export function childPids(parent: number = process.pid): number[] {
  try {
    const pids: number[] = [];
    for (const name of readdirSync('/proc')) {
      if (!/^\d+$/.test(name)) continue;
      let stat: string;
      try {
        stat = readFileSync(`/proc/${name}/stat`, 'utf8');
      } catch {
        continue; // exited meanwhile
      }
      // Fields after the parenthesised command: state, ppid, ... (the command may hold spaces).
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      if (Number(fields[1]) === parent && fields[0] !== 'Z') pids.push(Number(name));
    }
    return pids;
  } catch {
    try {
      return execFileSync('pgrep', ['-P', String(parent)], { encoding: 'utf8' })
        .split('\n')
        .filter((line) => line.trim() !== '')
        .map(Number);
    } catch {
      return []; // pgrep exits 1 when nothing matches
    }
  }
}

/** True while a process exists. */
export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** A failed self-check: examples throw this and exit non-zero. */
export class ExampleCheckError extends Error {
  override name = 'ExampleCheckError';
}

/** Throws {@link ExampleCheckError} with `message` unless `condition` holds. */
export function check(condition: boolean, message: string): asserts condition {
  if (!condition) throw new ExampleCheckError(message);
}
