import { mkdirSync, mkdtempSync, realpathSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { writeFiles } from './helpers.js';

/**
 * The escape-corpus layout (all under one mkdtemp scratch dir):
 *   repo/            the user's real repo (alias), with a .git folder
 *   repo-backup/     prefix-collision twin of repo
 *   run-1/           the sandbox root (a worktree: .git is a file)
 *   run-10/, run-1_evil/   prefix-collision twins of the root
 *   outside/         canary: must never change
 *   root-link -> run-1     the root seen through a symlink
 */
export interface EscapeLayout {
  scratch: string;
  repo: string;
  root: string;
  outside: string;
}

/** Makes the layout, with the links a hostile repo could ship inside the root. */
export function makeEscapeLayout(prefix: string): EscapeLayout {
  const scratch = realpathSync(mkdtempSync(join(tmpdir(), prefix)));
  const repo = join(scratch, 'repo');
  const root = join(scratch, 'run-1');
  const outside = join(scratch, 'outside');
  writeFiles(repo, {
    '.git/config': '[core]\n',
    '.git/HEAD': 'ref: refs/heads/main\n',
    'src/a.ts': 'a\n',
  });
  writeFiles(join(scratch, 'repo-backup'), { x: 'backup\n' });
  writeFiles(root, {
    '.git': 'gitdir: /elsewhere/.git/worktrees/run-1\n',
    'src/a.ts': 'a\n',
    'src/main.py': 'print()\n',
    '.gitignore': '*.log\n',
    '.github/ci.yml': 'on: push\n',
  });
  writeFiles(join(scratch, 'run-10'), { x: 'ten\n' });
  writeFiles(join(scratch, 'run-1_evil'), { x: 'evil\n' });
  writeFiles(outside, { 'secret.txt': 'secret\n', 'dir/inner.txt': 'inner\n' });
  mkdirSync(join(root, 'docs'));
  // Links a hostile repo could ship (made at test time, never committed as links).
  symlinkSync('/etc', join(root, 'docs/link'));
  symlinkSync(join(outside, 'secret.txt'), join(root, 'leak'));
  symlinkSync(outside, join(root, 'anc'));
  symlinkSync('../outside', join(root, 'relanc'));
  symlinkSync(join(root, 'loop2'), join(root, 'loop1'));
  symlinkSync(join(root, 'loop1'), join(root, 'loop2'));
  symlinkSync(join(outside, 'pwned'), join(root, 'out'));
  symlinkSync('src', join(root, 'inlink'));
  symlinkSync('.git', join(root, 'gitlink'));
  symlinkSync('missing-inside', join(root, 'dangling-inside'));
  symlinkSync(root, join(scratch, 'root-link'));
  return { scratch, repo, root, outside };
}

/** The escape corpus: every entry must be refused, and nothing outside may change. */
export function hostileCorpus(layout: EscapeLayout): string[] {
  const { scratch, repo, root, outside } = layout;
  const targets = [
    'etc/passwd',
    'outside/secret.txt',
    'outside/new.txt',
    '.ssh/id_rsa',
    'repo/.git/config',
  ];
  const corpus = new Set<string>();
  for (const target of targets) {
    for (let depth = 1; depth <= 6; depth++) {
      corpus.add(`${'../'.repeat(depth)}${target}`);
      corpus.add(`src/${'../'.repeat(depth + 1)}${target}`);
      corpus.add(`./${'../'.repeat(depth)}${target}`);
      corpus.add(`${'%2e%2e/'.repeat(depth)}${target}`);
      corpus.add(`${'..%2f'.repeat(depth)}${target}`);
      corpus.add(`${'%2E%2E%2F'.repeat(depth)}${target}`);
      corpus.add(`${'..\\'.repeat(depth)}${target.replace(/\//g, '\\')}`);
    }
    corpus.add(`${'a/..'.repeat(5000)}/../${target}`);
    corpus.add(`/${target}`);
    corpus.add(`~/${target}`);
    corpus.add(`~root/${target}`);
    corpus.add(`$HOME/${target}`);
    corpus.add(`\${HOME}/${target}`);
    corpus.add(`%USERPROFILE%/${target}`);
    corpus.add(`file:///${target}`);
    corpus.add(`file://evil.example/${target}`);
    corpus.add(`C:\\repo\\..\\${target}`);
    corpus.add(`\\\\host\\share\\${target}`);
    corpus.add(`${target}\u0000.txt`);
  }
  const absolute = [
    '/etc/passwd',
    '/root/.ssh/id_rsa',
    '/',
    join(outside, 'secret.txt'),
    join(outside, 'pwned'),
    join(scratch, 'run-10', 'x'),
    join(scratch, 'run-1_evil', 'x'),
    join(scratch, 'run-1', '..', 'run-10', 'x'),
    join(scratch, 'repo-backup', 'x'),
    `${root}0/x`,
    `${repo}-backup/x`,
    scratch,
    `${root}/../outside/secret.txt`,
    `${repo}/../outside/secret.txt`,
  ];
  for (const path of absolute) {
    corpus.add(path);
    corpus.add(`${path}/`);
    corpus.add(pathToFileURL(path).href);
    corpus.add(`file://localhost${path}`);
  }
  const inside = [
    '.git',
    '.git/config',
    '.git/hooks/post-checkout',
    '.GIT/config',
    '.Git/HEAD',
    'src/.git/config',
    'src/../.git/config',
    'gitlink',
    'gitlink/config',
    'docs/link',
    'docs/link/passwd',
    'docs/link/new-file',
    'leak',
    'anc',
    'anc/secret.txt',
    'anc/new.txt',
    'anc/dir/inner.txt',
    'relanc/secret.txt',
    'relanc/new/deeper.txt',
    'loop1',
    'loop1/x',
    'loop2/x/y',
    'out',
    'out/x',
    'dangling-inside',
    'src/a.ts\u0000',
    'x'.repeat(5000),
  ];
  for (const path of inside) {
    corpus.add(path);
    corpus.add(`./${path}`);
    corpus.add(join(root, path));
    corpus.add(join(repo, path));
  }
  // Raw only: "./https://x" is a legal relative path (a folder named "https:") inside the root.
  corpus.add('');
  corpus.add('https://example.com/src/a.ts');
  corpus.add('http://127.0.0.1/etc/passwd');
  corpus.add(`ftp://host${repo}/src/a.ts`);
  return [...corpus];
}
