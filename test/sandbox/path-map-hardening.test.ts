import { linkSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AgentsError } from '../../src/errors.js';
import { createPathRewriteMiddleware } from '../../src/pipeline/path-rewrite.js';
import { composeMiddleware } from '../../src/core/tool-middleware.js';
import type { ToolDescriptor } from '../../src/core/tool-descriptor.js';
import { createPathMap, type SandboxPathMap } from '../../src/sandbox/path-map.js';
import { isGitComponent } from '../../src/sandbox/path-spelling.js';
import { writeFiles } from './helpers.js';

let scratch: string;
let root: string;
let repo: string;
let outside: string;
let map: SandboxPathMap;

beforeAll(() => {
  scratch = realpathSync(mkdtempSync(join(tmpdir(), 'path-hardening-')));
  root = join(scratch, 'sandbox');
  repo = join(scratch, 'project');
  outside = join(scratch, 'outside');
  writeFiles(root, { 'src/a.ts': 'a\n', 'alone.txt': 'one name\n', 'twin-1.txt': 'twins\n' });
  writeFiles(repo, { 'src/a.ts': 'a\n' });
  writeFiles(outside, { 'secret.txt': 'secret\n' });
  // A tool with shell access can `ln` a file from outside into the sandbox.
  linkSync(join(outside, 'secret.txt'), join(root, 'hardlink.txt'));
  linkSync(join(root, 'twin-1.txt'), join(root, 'twin-2.txt'));
  map = createPathMap(root, { aliases: [repo] });
});

afterAll(() => {
  rmSync(scratch, { recursive: true, force: true });
});

function refusal(path: string): AgentsError {
  try {
    map.toSandbox(path);
  } catch (error) {
    if (AgentsError.hasCode(error, 'PATH_OUTSIDE_SANDBOX')) return error;
    throw error;
  }
  throw new Error(`expected ${JSON.stringify(path)} to be refused`);
}

describe('names git treats as .git', () => {
  const spellings = [
    '.git',
    '.GIT',
    '.Git',
    '.git.',
    '.git..',
    '.git ',
    '.git . ',
    '.git::$INDEX_ALLOCATION',
    '.git:$DATA',
    '.GIT::$index_allocation',
    'GIT~1',
    'git~1',
    'GIT~12',
    '.g\u200cit',
    '.gi\ufefft',
  ];

  it('recognises every platform spelling, and not names that merely look alike', () => {
    expect(spellings.filter((name) => !isGitComponent(name))).toEqual([]);
    const harmless = ['.gitignore', '.github', 'git', '.git-blame-ignore-revs', 'git~x', '.gitx'];
    expect(harmless.filter((name) => isGitComponent(name))).toEqual([]);
  });

  it('refuses each spelling as a path component, at the top and deeper', () => {
    for (const name of spellings) {
      // A "$" is refused earlier (never expanded); the rest for being ".git".
      const reason = name.includes('$') ? /\.git|not expanded/ : /\.git/;
      expect(refusal(name).details['reason']).toMatch(reason);
      expect(refusal(`src/${name}/config`).details['reason']).toMatch(reason);
    }
    expect(isGitComponent('.git::$INDEX_ALLOCATION')).toBe(true);
    expect(map.toSandbox('.gitignore')).toBe(join(root, '.gitignore'));
  });
});

describe('encoded forms', () => {
  it('refuses paths that are still encoded after one decoding', () => {
    const hostile = [
      '%252e%252e/%252e%252e/etc/passwd',
      'src/%252fetc%252fpasswd',
      '%25252e%25252e/x',
      `file://${root}/%252e%252e/%252e%252e/etc/passwd`,
      '%c0%ae%c0%ae/etc/passwd',
      '%C0%AF..%C0%AFetc',
      '%e0%80%ae%e0%80%ae/x',
      '\uff0e\uff0e\uff0fetc\uff0fpasswd',
      'src\uff0f\uff0e\uff0e\uff0f\uff0e\uff0e\uff0fx',
      '\u2024\u2024/x',
    ];
    for (const path of hostile) expect(() => map.toSandbox(path), path).toThrow(/refused/);
    expect(refusal('%252e%252e/x').details['reason']).toMatch(/encoded more than once/);
  });

  it('keeps accepting plain non-ASCII names', () => {
    expect(map.toSandbox('docs/résumé.md')).toBe(join(root, 'docs/résumé.md'));
    expect(map.toSandbox('docs/日本語.txt')).toBe(join(root, 'docs/日本語.txt'));
    expect(map.toSandbox('100%.txt')).toBe(join(root, '100%.txt'));
  });
});

describe('hard links', () => {
  it('treats a file with a second name like a symlink that leads outside', () => {
    expect(refusal('hardlink.txt').details['reason']).toMatch(/hard-linked/);
    expect(refusal(join(repo, 'hardlink.txt')).details['reason']).toMatch(/hard-linked/);
    // Even two names inside the sandbox: which one is outside cannot be told cheaply.
    expect(refusal('twin-2.txt').details['reason']).toMatch(/hard-linked/);
    expect(map.toSandbox('alone.txt')).toBe(join(root, 'alone.txt'));
    expect(readFileSync(join(outside, 'secret.txt'), 'utf8')).toBe('secret\n');
  });
});

describe('host paths never reach the model', () => {
  it('refusals name neither the project nor the sandbox folder', () => {
    for (const path of ['../x', join(outside, 'secret.txt'), '.git/config', 'hardlink.txt']) {
      const message = refusal(path).message;
      expect(message).not.toContain(`${repo} `);
      expect(message).not.toContain(`${repo}.`);
      expect(message).not.toContain(root);
    }
  });

  it('maps project paths in text back to logical ones, like sandbox paths', () => {
    expect(map.fromSandbox(`wrote ${repo}/src/a.ts and ${root}/b.ts`)).toBe(
      'wrote src/a.ts and b.ts',
    );
    expect(map.fromSandbox(`in ${repo}`)).toBe('in .');
    expect(map.fromSandbox(`${repo}-backup/x`)).toBe(`${repo}-backup/x`);
  });

  it('maps the message of an error in place, keeping its type and code', () => {
    const error = new AgentsError(
      'TOOL_CALL_FAILED',
      `ENOENT: no such file or directory, open '${root}/missing.txt'`,
    );
    const mapped = map.rewriteError(error);
    expect(mapped).toBe(error);
    expect(mapped.message).toBe(`ENOENT: no such file or directory, open 'missing.txt'`);
    expect(mapped.code).toBe('TOOL_CALL_FAILED');
    expect(map.rewriteError('not an error')).toBe('not an error');
  });

  it('path-rewrite middleware maps a thrown error (a JSON-RPC error) back', async () => {
    const descriptor = {
      id: 'mcp:fs/read',
      name: 'read',
      originalName: 'read',
      source: 'mcp',
      serverName: 'fs',
      description: '',
      inputSchema: { type: 'object' },
      capabilities: {
        readOnly: { value: true, source: 'override', reason: 'test' },
        writes: { value: false, source: 'override', reason: 'test' },
        destructive: { value: false, source: 'default', reason: 'test' },
        openWorld: { value: false, source: 'default', reason: 'test' },
        disagreements: [],
      },
      pathArguments: ['path'],
      fingerprint: 'x',
    } as unknown as ToolDescriptor;
    const write = { ...descriptor, capabilities: { ...descriptor.capabilities } };
    write.capabilities.readOnly = { value: false, source: 'override', reason: 'test' };
    write.capabilities.writes = { value: true, source: 'override', reason: 'test' };
    const handler = composeMiddleware([createPathRewriteMiddleware(map)], (request) =>
      Promise.reject(new Error(`MCP error -32602: stat '${String(request.args['path'])}'`)),
    );
    for (const tool of [descriptor, write]) {
      await expect(
        handler({ descriptor: tool, args: { path: 'nope.txt' }, context: {} }),
      ).rejects.toThrow(`MCP error -32602: stat 'nope.txt'`);
    }
    writeFileSync(join(root, 'seen.txt'), 'x');
  });
});
