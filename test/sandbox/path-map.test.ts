import { existsSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, normalize, relative, sep } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { AgentsError } from '../../src/errors.js';
import { createPathMap, type SandboxPathMap } from '../../src/sandbox/path-map.js';
import { hashTree } from './helpers.js';
import { hostileCorpus, makeEscapeLayout } from './escape-corpus.js';

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
  ({ scratch, repo, root, outside } = makeEscapeLayout('path-map-'));
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

describe('createPathMap: escape corpus', () => {
  it('has at least 200 hostile paths', () => {
    expect(hostileCorpus({ scratch, repo, root, outside }).length).toBeGreaterThanOrEqual(200);
  });

  it('refuses every hostile path with PATH_OUTSIDE_SANDBOX, and nothing outside the sandbox changes', async () => {
    const corpus = hostileCorpus({ scratch, repo, root, outside });
    const { composeMiddleware } = await import('../../src/core/tool-middleware.js');
    const { createPathRewriteMiddleware } = await import('../../src/pipeline/path-rewrite.js');
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
