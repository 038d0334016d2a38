import { mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { AgentsError, AgentsErrorCode } from '../../src/errors.js';
import { createPathMap, type SandboxPathMap } from '../../src/sandbox/path-map.js';

// Layout: scratch/wt (the sandbox root, with dir/file.txt), scratch/repo (an alias),
// scratch/outside (must never be reachable), scratch/wt-link -> wt (the root through a link).
let scratch: string;
let root: string;
let repo: string;
let outside: string;

beforeEach(() => {
  scratch = realpathSync(mkdtempSync(join(tmpdir(), 'path-map-fast-')));
  root = join(scratch, 'wt');
  repo = join(scratch, 'repo');
  outside = join(scratch, 'outside');
  mkdirSync(join(root, 'dir'), { recursive: true });
  mkdirSync(repo);
  mkdirSync(join(outside, 'dir'), { recursive: true });
  writeFileSync(join(root, 'dir', 'file.txt'), 'inside\n');
  writeFileSync(join(outside, 'dir', 'file.txt'), 'secret\n');
  symlinkSync(root, join(scratch, 'wt-link'));
});

afterEach(() => {
  rmSync(scratch, { recursive: true, force: true });
});

function outcome(map: SandboxPathMap, input: string): string {
  try {
    return map.toSandboxArgument(input, 'path');
  } catch (error) {
    if (error instanceof AgentsError) return `refused: ${error.message}`;
    throw error;
  }
}

describe('createPathMap: answers reused between writes', () => {
  it('gives the same answers, refusals included, whether or not they are cached', () => {
    const inputs = [
      'dir/file.txt',
      './dir/file.txt',
      'dir/',
      '.',
      'dir/new.txt',
      join(root, 'dir', 'file.txt'),
      join(repo, 'dir', 'file.txt'),
      pathToFileURL(join(repo, 'dir', 'file.txt')).href,
      `FILE://${join(root, 'dir')}`,
      join(scratch, 'wt-link', 'dir', 'file.txt'),
      'file.txt',
      'files:/x',
      '../outside/dir/file.txt',
      join(outside, 'dir', 'file.txt'),
      '.git/config',
      '~/x',
      'https://example.com/x',
    ];
    const untracked = createPathMap(root, { aliases: [repo] });
    const tracked = createPathMap(root, { aliases: [repo] });
    tracked.trackWrites();
    const expected = inputs.map((input) => outcome(untracked, input));
    for (let pass = 0; pass < 3; pass++) {
      expect(inputs.map((input) => outcome(tracked, input))).toEqual(expected);
    }
    expect(expected.slice(0, 4)).toEqual([
      join(root, 'dir', 'file.txt'),
      join(root, 'dir', 'file.txt'),
      join(root, 'dir'),
      root,
    ]);
    expect(expected[7]).toBe(pathToFileURL(join(root, 'dir', 'file.txt')).href);
    expect(expected[8]).toBe(pathToFileURL(join(root, 'dir')).href);
    expect(expected[10]).toBe(join(root, 'file.txt'));
    expect(expected[11]).toBe(join(root, 'files:', 'x'));
    expect(expected.slice(12).every((answer) => answer.startsWith('refused: '))).toBe(true);
  });

  it('names the argument of each refusal, also for an input accepted and cached before', () => {
    const map = createPathMap(root);
    map.trackWrites();
    expect(map.toSandbox('dir/file.txt')).toBe(join(root, 'dir', 'file.txt'));
    const end = map.beginWrite();
    rmSync(join(root, 'dir'), { recursive: true });
    symlinkSync(join(outside, 'dir'), join(root, 'dir'));
    end();
    try {
      map.toSandboxArgument('dir/file.txt', 'edits[].file');
      expect.unreachable();
    } catch (error) {
      expect(AgentsError.hasCode(error, AgentsErrorCode.PathOutsideSandbox)).toBe(true);
      expect((error as AgentsError).details['argument']).toBe('edits[].file');
    }
  });

  it('does not reuse an answer that rests on a link outside the root (another spelling of it)', () => {
    const map = createPathMap(root);
    map.trackWrites();
    const viaLink = join(scratch, 'wt-link', 'dir', 'file.txt');
    expect(map.toSandbox(viaLink)).toBe(join(root, 'dir', 'file.txt'));
    // The link lives outside the sandbox, so no write call announces this change.
    rmSync(join(scratch, 'wt-link'));
    symlinkSync(outside, join(scratch, 'wt-link'));
    expect(() => map.toSandbox(viaLink)).toThrow(/outside the project/);
  });
});

describe('rewriteArgs and rewriteResult fast paths', () => {
  it('rewrites an own "__proto__" argument as a plain property and leaves the prototype alone', () => {
    const map = createPathMap(root);
    const args = JSON.parse('{"__proto__": "dir/file.txt", "other": 1}') as Record<string, unknown>;
    const out = map.rewriteArgs(args, ['__proto__']);
    expect(Object.getPrototypeOf(out)).toBe(Object.prototype);
    expect(Object.getOwnPropertyDescriptor(out, '__proto__')?.value).toBe(
      join(root, 'dir', 'file.txt'),
    );
    expect(out['other']).toBe(1);
    expect(Object.getOwnPropertyDescriptor(args, '__proto__')?.value).toBe('dir/file.txt');
  });

  it('maps back file:// URIs of a root whose name a URI percent-encodes', () => {
    const spaced = join(scratch, 'my root');
    mkdirSync(spaced);
    const map = createPathMap(spaced, { aliases: [repo] });
    const uri = pathToFileURL(join(spaced, 'a.txt')).href;
    expect(uri).toContain('my%20root');
    expect(map.fromSandbox(`see ${uri}`)).toBe(`see ${pathToFileURL(join(repo, 'a.txt')).href}`);
    expect(map.fromSandbox(`${spaced}/a.txt`)).toBe('a.txt');
    const plain = 'nothing to map here';
    expect(map.fromSandbox(plain)).toBe(plain);
  });
});
