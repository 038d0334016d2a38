import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  realpathSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, normalize, relative, sep } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { AgentsError } from '../../src/errors.js';
import { createPathMap, type SandboxPathMap } from '../../src/sandbox/path-map.js';
import { hashTree, writeFiles } from './helpers.js';

// Layout (all under one mkdtemp scratch dir):
//   repo/            the user's real repo (alias), with a .git folder
//   repo-backup/     prefix-collision twin of repo
//   run-1/           the sandbox root (a worktree: .git is a file)
//   run-10/, run-1_evil/   prefix-collision twins of the root
//   outside/         canary: must never change
//   root-link -> run-1     the root seen through a symlink
let scratch: string;
let repo: string;
let root: string;
let outside: string;
let map: SandboxPathMap;

beforeAll(() => {
  scratch = realpathSync(mkdtempSync(join(tmpdir(), 'path-map-')));
  repo = join(scratch, 'repo');
  root = join(scratch, 'run-1');
  outside = join(scratch, 'outside');
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
  map = createPathMap(root, { aliases: [repo] });
});

afterAll(() => {
  rmSync(scratch, { recursive: true, force: true });
});

function refused(path: string): AgentsError {
  try {
    map.toSandbox(path);
  } catch (error) {
    if (AgentsError.isInstance(error)) return error;
    throw error;
  }
  throw new Error(`expected ${JSON.stringify(path)} to be refused`);
}

describe('createPathMap: accepted paths', () => {
  it('maps logical, repo-absolute and sandbox-absolute paths to the same sandbox path', () => {
    const target = join(root, 'src/a.ts');
    expect(map.toSandbox('src/a.ts')).toBe(target);
    expect(map.toSandbox('./src/a.ts')).toBe(target);
    expect(map.toSandbox('src/../src/./a.ts')).toBe(target);
    expect(map.toSandbox(join(repo, 'src/a.ts'))).toBe(target);
    expect(map.toSandbox(target)).toBe(target);
    expect(map.toSandbox(join(scratch, 'root-link', 'src/a.ts'))).toBe(target);
    expect(map.toSandbox(pathToFileURL(join(repo, 'src/a.ts')).href)).toBe(target);
    expect(map.toSandbox(`file://localhost${join(repo, 'src/a.ts')}`)).toBe(target);
    expect(map.toSandbox('.')).toBe(root);
    expect(map.toSandbox(repo)).toBe(root);
    expect(map.toSandbox('src/')).toBe(join(root, 'src'));
    expect(map.toSandbox('new/dir/file.txt')).toBe(join(root, 'new/dir/file.txt'));
  });

  it('allows names that merely start with .git and links that stay inside the root', () => {
    expect(map.toSandbox('.gitignore')).toBe(join(root, '.gitignore'));
    expect(map.toSandbox('.github/ci.yml')).toBe(join(root, '.github/ci.yml'));
    expect(map.toSandbox('inlink/a.ts')).toBe(join(root, 'inlink/a.ts'));
    expect(map.toSandbox('inlink/new.ts')).toBe(join(root, 'inlink/new.ts'));
  });

  it('exposes the realpath root and the aliases', () => {
    const viaLink = createPathMap(join(scratch, 'root-link'), { aliases: [repo] });
    expect(viaLink.root).toBe(root);
    expect(viaLink.toSandbox(join(scratch, 'root-link', 'src'))).toBe(join(root, 'src'));
    expect(map.aliases).toEqual([repo]);
    expect(map.isInside(join(root, 'x'))).toBe(true);
    expect(map.isInside(join(scratch, 'run-10', 'x'))).toBe(false);
  });
});

/** The escape corpus: every entry must be refused, and nothing outside may change. */
function hostileCorpus(): string[] {
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

describe('createPathMap: escape corpus', () => {
  it('has at least 200 hostile paths', () => {
    expect(hostileCorpus().length).toBeGreaterThanOrEqual(200);
  });

  it('refuses every hostile path with PATH_OUTSIDE_SANDBOX, and nothing outside the sandbox changes', async () => {
    const corpus = hostileCorpus();
    const { composeMiddleware } = await import('../../src/middleware/types.js');
    const { createPathRewriteMiddleware } = await import('../../src/middleware/path-rewrite.js');
    const canaryBefore = hashTree(outside);
    const repoGitBefore = hashTree(join(repo, '.git'));
    const twinsBefore = [hashTree(join(scratch, 'run-10')), hashTree(join(scratch, 'repo-backup'))];
    const escapedTo: string[] = [];
    // A handler that behaves like a filesystem server: writes where the rewritten path points,
    // but only inside the scratch dir, so a bug here can never touch the real system.
    const handler = composeMiddleware([createPathRewriteMiddleware(map)], async (request) => {
      const target = String(request.args['path']);
      escapedTo.push(target);
      if (target.startsWith(scratch + sep)) {
        mkdirSync(dirname(target), { recursive: true });
        writeFileSync(target, 'pwned');
      }
      return { content: [{ type: 'text', text: `wrote ${target}` }] };
    });
    const descriptor = descriptorWith(['path']);
    const notRefused: string[] = [];
    for (const path of corpus) {
      let error: unknown;
      try {
        map.toSandbox(path);
      } catch (caught) {
        error = caught;
      }
      if (!AgentsError.hasCode(error, 'PATH_OUTSIDE_SANDBOX')) notRefused.push(path);
      const result = await handler({ descriptor, args: { path, content: 'x' }, context: {} });
      if (result.isError !== true) notRefused.push(`(middleware) ${path}`);
    }
    expect(notRefused).toEqual([]);
    expect(escapedTo).toEqual([]);
    expect(hashTree(outside)).toBe(canaryBefore);
    expect(existsSync(join(outside, 'pwned'))).toBe(false);
    expect(hashTree(join(repo, '.git'))).toBe(repoGitBefore);
    expect([hashTree(join(scratch, 'run-10')), hashTree(join(scratch, 'repo-backup'))]).toEqual(
      twinsBefore,
    );
  });

  it('gives the model a message it can act on, without saying whether a target exists', () => {
    const error = refused('../../etc/passwd');
    expect(error.message).toContain('"../../etc/passwd"');
    expect(error.message).toContain('relative to the project root');
    // The model works with logical paths: no host folder is named.
    expect(error.message).not.toContain(repo);
    expect(error.message).not.toContain(root);
    expect(refused('anc/secret.txt').message).not.toMatch(/secret\.txt"? (exists|does not exist)/);
    expect(refused('$HOME/.aws/credentials').details['reason']).toMatch(/not expanded/);
    expect(refused('out').details['reason']).toMatch(/symbolic link that cannot be resolved/);
  });
});

describe('createPathMap: properties', () => {
  // Deterministic PRNG so a failure is reproducible.
  let seed = 0x5eed;
  const random = (): number => {
    seed = (seed * 1103515245 + 12345) & 0x7fffffff;
    return seed / 0x7fffffff;
  };
  const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)]!;
  const names = [
    'a',
    'src',
    'b c',
    'ünï',
    'caf\u00e9',
    'cafe\u0301',
    'x.y',
    '...',
    '.hidden',
    'run-1',
    'repo',
    'z_9',
    '-dash',
  ];

  it('round-trips: fromSandbox(toSandbox(p)) is the normalized logical path', () => {
    for (let index = 0; index < 500; index++) {
      const parts = Array.from({ length: 1 + Math.floor(random() * 5) }, () => pick(names));
      const logical = parts.join('/');
      expect(map.fromSandbox(map.toSandbox(logical))).toBe(normalize(logical));
      expect(map.fromSandbox(map.toSandbox(join(repo, logical)))).toBe(normalize(logical));
    }
  });

  it('with random ".." components, the result is inside the root or refused', () => {
    const withDots = [...names, '..', '..', '.'];
    for (let index = 0; index < 1000; index++) {
      const parts = Array.from({ length: 1 + Math.floor(random() * 7) }, () => pick(withDots));
      const path = (random() < 0.3 ? `${pick([root, repo, scratch])}/` : '') + parts.join('/');
      let mapped: string | undefined;
      try {
        mapped = map.toSandbox(path);
      } catch (error) {
        expect(AgentsError.hasCode(error, 'PATH_OUTSIDE_SANDBOX')).toBe(true);
      }
      if (mapped !== undefined) {
        const rel = relative(root, mapped);
        expect(rel.split(sep)[0]).not.toBe('..');
      }
    }
  });

  it('leaves strings without a sandbox or project path untouched (same string)', () => {
    for (let index = 0; index < 300; index++) {
      const text = Array.from({ length: 1 + Math.floor(random() * 6) }, () =>
        pick([
          ...names,
          '/etc/passwd',
          `${root}0/x`,
          `${root}_evil`,
          `${repo}-backup`,
          'https://host/run-1/x',
          ' ',
          '\n',
        ]),
      ).join(pick(['/', ' ', '']));
      expect(map.fromSandbox(text)).toBe(text);
    }
  });
});

describe('rewriteArgs', () => {
  it('rewrites only the declared locations, in lists and nested objects, and never mutates the input', () => {
    const content = `config for ${repo}/src and ${root}/src, ../../etc/passwd\u0000 ~ $HOME`;
    const args = {
      path: 'src/a.ts',
      paths: ['src/a.ts', `${repo}/src/main.py`],
      edits: [
        { file: 'src/a.ts', newText: `${repo}/x` },
        { file: pathToFileURL(join(repo, 'b.ts')).href },
      ],
      content,
      message: `see ${repo}/src`,
      url: `https://host${repo}/x`,
      count: 3,
    };
    const snapshot = structuredClone(args);
    const out = map.rewriteArgs(args, [
      'path',
      'paths[]',
      'edits[].file',
      'missing',
      'nested.deep[]',
    ]);
    expect(args).toEqual(snapshot);
    expect(out).toEqual({
      ...snapshot,
      path: join(root, 'src/a.ts'),
      paths: [join(root, 'src/a.ts'), join(root, 'src/main.py')],
      edits: [
        { file: join(root, 'src/a.ts'), newText: `${repo}/x` },
        { file: pathToFileURL(join(root, 'b.ts')).href },
      ],
    });
    expect(out['content']).toBe(content);
  });

  it('returns the same object when there is nothing to rewrite, and names the argument on refusal', () => {
    const args = { query: 'x' };
    expect(map.rewriteArgs(args, ['path'])).toBe(args);
    try {
      map.rewriteArgs({ edits: [{ file: 'ok.ts' }, { file: '../x' }] }, ['edits[].file']);
      expect.unreachable();
    } catch (error) {
      expect(AgentsError.hasCode(error, 'PATH_OUTSIDE_SANDBOX')).toBe(true);
      expect((error as AgentsError).details['argument']).toBe('edits[].file');
      expect((error as AgentsError).message).toContain('argument "edits[].file"');
    }
  });

  it('does not treat inherited keys as arguments', () => {
    const args = JSON.parse('{"__proto__": {"path": "../../etc/passwd"}}') as Record<
      string,
      unknown
    >;
    expect(() => map.rewriteArgs(args, ['__proto__.path'])).toThrow(AgentsError);
    expect(map.rewriteArgs({ a: 1 }, ['toString'])).toEqual({ a: 1 });
  });
});

describe('rewriteResult', () => {
  it('maps sandbox paths back in text, resource URIs and structuredContent; leaves outside paths alone', () => {
    const result: CallToolResult = {
      content: [
        {
          type: 'text',
          text: `Wrote ${root}/src/a.ts; root is ${root}. Also ${root}0/x and /home/u/.ssh and ${root}/`,
        },
        { type: 'resource_link', uri: pathToFileURL(join(root, 'src/a.ts')).href, name: 'a.ts' },
        { type: 'resource', resource: { uri: 'file:///etc/passwd', text: 'root:x:0:0' } },
        { type: 'image', data: 'AAAA', mimeType: 'image/png' },
      ],
      structuredContent: {
        files: [`${root}/src/a.ts`, '/etc/hosts'],
        count: 2,
        nested: { dir: root },
      },
      _meta: { raw: root },
    };
    expect(map.rewriteResult(result)).toEqual({
      content: [
        {
          type: 'text',
          text: `Wrote src/a.ts; root is .. Also ${root}0/x and /home/u/.ssh and ./`,
        },
        { type: 'resource_link', uri: pathToFileURL(join(repo, 'src/a.ts')).href, name: 'a.ts' },
        { type: 'resource', resource: { uri: 'file:///etc/passwd', text: 'root:x:0:0' } },
        { type: 'image', data: 'AAAA', mimeType: 'image/png' },
      ],
      structuredContent: { files: ['src/a.ts', '/etc/hosts'], count: 2, nested: { dir: '.' } },
      _meta: { raw: root },
    });
  });

  it('returns the very same object when the result holds no sandbox path', () => {
    const result: CallToolResult = {
      content: [{ type: 'text', text: 'hello /etc/passwd' }],
      structuredContent: { a: 'b' },
    };
    expect(map.rewriteResult(result)).toBe(result);
  });

  it('maps the lexical (symlinked) form of the root too', () => {
    const viaLink = createPathMap(join(scratch, 'root-link'));
    expect(viaLink.fromSandbox(`${join(scratch, 'root-link')}/src/a.ts and ${root}/b`)).toBe(
      'src/a.ts and b',
    );
    // Without an alias, file:// URIs into the sandbox stay absolute (still inside the sandbox).
    const uri = pathToFileURL(join(root, 'a')).href;
    expect(viaLink.fromSandbox(uri)).toBe(uri);
  });
});

function descriptorWith(pathArguments: string[]) {
  return {
    id: 'mcp:fs/write_file',
    name: 'write_file',
    originalName: 'write_file',
    source: 'mcp' as const,
    description: 'write',
    inputSchema: { type: 'object' },
    capabilities: {
      readOnly: { value: false, source: 'default' as const, reason: 'test' },
      writes: { value: true, source: 'default' as const, reason: 'test' },
      destructive: { value: false, source: 'default' as const, reason: 'test' },
      openWorld: { value: false, source: 'default' as const, reason: 'test' },
      disagreements: [],
    },
    pathArguments,
    fingerprint: 'x',
  };
}
