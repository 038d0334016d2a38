import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  mkdirSync,
  readdirSync,
  readFileSync,
  lstatSync,
  readlinkSync,
  writeFileSync,
} from 'node:fs';
import { dirname, join } from 'node:path';

/** Runs git in a test repo with a fixed identity and no user config. */
export function git(cwd: string, ...args: string[]): string {
  return execFileSync('git', args, {
    cwd,
    encoding: 'utf8',
    env: {
      PATH: process.env['PATH'] ?? '/usr/bin:/bin',
      HOME: cwd,
      GIT_CONFIG_NOSYSTEM: '1',
      GIT_AUTHOR_NAME: 'test',
      GIT_AUTHOR_EMAIL: 'test@example.com',
      GIT_COMMITTER_NAME: 'test',
      GIT_COMMITTER_EMAIL: 'test@example.com',
    },
  });
}

/** Writes files (path → content) under `root`, making folders. */
export function writeFiles(root: string, files: Record<string, string>): void {
  for (const [path, content] of Object.entries(files)) {
    mkdirSync(dirname(join(root, path)), { recursive: true });
    writeFileSync(join(root, path), content);
  }
}

/** Makes a git repo with one commit holding `files`. */
export function makeRepo(dir: string, files: Record<string, string>): void {
  git(dir, 'init', '-q', '-b', 'main');
  writeFiles(dir, files);
  git(dir, 'add', '-A');
  git(dir, 'commit', '-q', '-m', 'initial');
}

/**
 * Hashes a folder tree: names, types, link targets and file bytes (mtimes excluded). `skip`
 * lists top-level entry names to leave out.
 */
export function hashTree(root: string, skip: readonly string[] = []): string {
  const hash = createHash('sha256');
  const walk = (dir: string, rel: string): void => {
    for (const name of readdirSync(dir).sort()) {
      if (rel === '' && skip.includes(name)) continue;
      const path = join(dir, name);
      const relPath = rel === '' ? name : `${rel}/${name}`;
      const stat = lstatSync(path);
      if (stat.isSymbolicLink()) hash.update(`L ${relPath} -> ${readlinkSync(path)}\n`);
      else if (stat.isDirectory()) {
        hash.update(`D ${relPath}\n`);
        walk(path, relPath);
      } else {
        hash.update(`F ${relPath} ${stat.mode.toString(8)}\n`);
        hash.update(readFileSync(path));
      }
    }
  };
  walk(root, '');
  return hash.digest('hex');
}

/** Runs git on a sandbox's private snapshot store (`<runDir>/git`). */
export function storeGit(sandbox: { runDir: string; root: string }, ...args: string[]): string {
  return git(sandbox.root, `--git-dir=${join(sandbox.runDir, 'git')}`, ...args);
}

/**
 * Everything about a user's repo that a sandbox must never change, as one comparable record:
 * the working tree, the `.git` folder minus `objects/` and `logs/` (index, HEAD, refs,
 * packed-refs, config, hooks, info, worktree records), and what git itself reports for refs,
 * tags, stash, worktrees and status. `.git` is hashed first and git runs with optional locks
 * off, so taking the fingerprint never changes what it measures.
 */
export function repoFingerprint(
  repo: string,
  options: { skip?: readonly string[] } = {},
): Record<string, string> {
  const skip = options.skip ?? [];
  const dotGit = hashTree(join(repo, '.git'), ['objects', 'logs']);
  const read = (...args: string[]) =>
    execFileSync('git', args, {
      cwd: repo,
      encoding: 'utf8',
      env: {
        PATH: process.env['PATH'] ?? '/usr/bin:/bin',
        HOME: repo,
        GIT_CONFIG_NOSYSTEM: '1',
        GIT_OPTIONAL_LOCKS: '0',
        // A repo owned by another user (the unprivileged variants of the confinement tests).
        GIT_CONFIG_COUNT: '1',
        GIT_CONFIG_KEY_0: 'safe.directory',
        GIT_CONFIG_VALUE_0: '*',
      },
    });
  return {
    dotGit,
    workingTree: hashTree(repo, ['.git', ...skip]),
    refs: read('for-each-ref', '--format=%(refname) %(objectname)'),
    stash: read('stash', 'list', '--format=%H %gs'),
    worktrees: read('worktree', 'list', '--porcelain'),
    config: readFileSync(join(repo, '.git', 'config'), 'utf8'),
    status: read(
      'status',
      '--porcelain=v1',
      '--untracked-files=all',
      '--ignored',
      '--',
      '.',
      ...skip.map((name) => `:(exclude)${name}`),
    ),
  };
}
