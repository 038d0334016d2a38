import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  realpathSync,
  rmSync,
  symlinkSync,
} from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { ListRootsRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import type { CallToolResult, Tool } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPathRewriteMiddleware } from '../../src/pipeline/path-rewrite.js';
import { composeMiddleware, type ToolCallHandler } from '../../src/core/tool-middleware.js';
import type { ToolDescriptor } from '../../src/core/tool-descriptor.js';
import { createSandbox, type LocalSandbox } from '../../src/sandbox/git/local-sandbox.js';
import { detectPathArguments, KNOWN_PATH_ARGUMENTS } from '../../src/mcp/path-arguments.js';
import { sandboxRoots } from '../../src/sandbox/sandbox-roots.js';
import { git, hashTree, makeRepo, writeFiles } from './helpers.js';

const require = createRequire(import.meta.url);
const serverEntry = join(
  dirname(require.resolve('@modelcontextprotocol/server-filesystem/package.json')),
  'dist/index.js',
);

let scratch: string;
let repo: string;
let outside: string;
let sandbox: LocalSandbox;
let client: Client;
let tools: Map<string, Tool>;
let call: ToolCallHandler;
let repoBefore: { tree: string; status: string; git: string };
let rootsRequests = 0;

beforeAll(async () => {
  scratch = realpathSync(mkdtempSync(join(tmpdir(), 'fs-server-')));
  repo = join(scratch, 'repo');
  outside = join(scratch, 'outside');
  mkdirSync(repo);
  makeRepo(repo, { 'README.md': '# demo\n', 'src/main.py': 'print("hi")\n' });
  writeFiles(outside, { 'secret.txt': 'secret\n' });
  repoBefore = {
    tree: hashTree(repo, ['.git']),
    status: git(repo, 'status', '--porcelain'),
    git: hashTree(join(repo, '.git'), ['objects', 'refs', 'worktrees']),
  };
  sandbox = await createSandbox({ source: repo, baseDir: scratch, id: 'fs' });
  symlinkSync(outside, join(sandbox.root, 'escape-link'));

  client = new Client(
    { name: 'fs-test', version: '1.0.0' },
    { capabilities: { roots: { listChanged: true } } },
  );
  client.setRequestHandler(ListRootsRequestSchema, () => {
    rootsRequests++;
    return { roots: sandboxRoots(sandbox) };
  });
  await client.connect(
    new StdioClientTransport({
      command: process.execPath,
      args: [serverEntry, sandbox.root],
      cwd: sandbox.root,
      env: { PATH: process.env['PATH'] ?? '/usr/bin:/bin' },
      stderr: 'ignore',
    }),
  );
  tools = new Map((await client.listTools()).tools.map((tool) => [tool.name, tool as Tool]));
  const handler = composeMiddleware(
    [createPathRewriteMiddleware(sandbox.paths)],
    async (request) =>
      (await client.callTool({
        name: request.descriptor.originalName,
        arguments: request.args,
      })) as CallToolResult,
  );
  call = handler;
});

afterAll(async () => {
  await client?.close();
  await sandbox?.close();
  rmSync(scratch, { recursive: true, force: true });
});

function descriptor(name: string): ToolDescriptor {
  const tool = tools.get(name);
  if (tool === undefined) throw new Error(`the filesystem server has no tool ${name}`);
  const verdict = { value: false, source: 'default' as const, reason: 'test' };
  return {
    id: `mcp:fs/${name}`,
    name,
    originalName: name,
    source: 'mcp',
    description: tool.description ?? '',
    inputSchema: tool.inputSchema,
    capabilities: {
      readOnly: verdict,
      writes: verdict,
      destructive: verdict,
      openWorld: verdict,
      disagreements: [],
    },
    pathArguments: detectPathArguments(tool.inputSchema),
    fingerprint: name,
  };
}

async function run(name: string, args: Record<string, unknown>): Promise<CallToolResult> {
  return call({ descriptor: descriptor(name), args, context: {} });
}

function text(result: CallToolResult): string {
  return result.content.map((item) => (item.type === 'text' ? item.text : '')).join('\n');
}

describe('@modelcontextprotocol/server-filesystem inside the sandbox', () => {
  it('detects the path arguments of every filesystem tool the known table lists', () => {
    const known = KNOWN_PATH_ARGUMENTS['@modelcontextprotocol/server-filesystem']!;
    for (const [name, expected] of Object.entries(known)) {
      if (!tools.has(name)) continue;
      expect([name, detectPathArguments(tools.get(name)!.inputSchema).sort()]).toEqual([
        name,
        [...expected].sort(),
      ]);
    }
    expect(tools.has('write_file')).toBe(true);
  });

  it('writes with logical paths into the sandbox, never the user repo, and answers with logical paths', async () => {
    const content = `names ${repo}/src and ${sandbox.root}/src verbatim\n`;
    expect(text(await run('create_directory', { path: 'notes' }))).toBe(
      'Successfully created directory notes',
    );
    const written = await run('write_file', { path: 'notes/hello.md', content });
    expect(text(written)).toBe('Successfully wrote to notes/hello.md');
    expect(written.isError).toBeFalsy();
    expect(text(written)).toBe('Successfully wrote to notes/hello.md');
    expect(readFileSync(join(sandbox.root, 'notes/hello.md'), 'utf8')).toBe(content);
    expect(existsSync(join(repo, 'notes'))).toBe(false);

    const viaRepoPath = await run('write_file', {
      path: join(repo, 'src/new.py'),
      content: 'x = 2\n',
    });
    expect(text(viaRepoPath)).toBe('Successfully wrote to src/new.py');
    expect(readFileSync(join(sandbox.root, 'src/new.py'), 'utf8')).toBe('x = 2\n');
    expect(existsSync(join(repo, 'src/new.py'))).toBe(false);

    // On disk the content is byte-identical; what the model reads back has sandbox paths mapped
    // to logical ones (by design: the model never sees the sandbox location).
    expect(text(await run('read_text_file', { path: 'notes/hello.md' }))).toBe(
      content.replace(`${sandbox.root}/`, '').replace(`${repo}/`, ''),
    );
    const both = text(
      await run('read_multiple_files', { paths: ['notes/hello.md', 'src/main.py'] }),
    );
    expect(both).toContain('notes/hello.md:');
    expect(both).toContain('src/main.py:\nprint("hi")');
    expect(both).not.toContain(sandbox.root + '/');

    const moved = await run('move_file', {
      source: 'notes/hello.md',
      destination: 'notes/moved.md',
    });
    expect(text(moved)).toBe('Successfully moved notes/hello.md to notes/moved.md');
    expect(text(await run('list_directory', { path: 'notes' }))).toBe('[FILE] moved.md');

    const info = text(await run('get_file_info', { path: 'src/main.py' }));
    expect(info).not.toContain(sandbox.root);
    expect(text(await run('list_allowed_directories', {}))).toBe('Allowed directories:\n.');
  });

  it('refuses escapes before the server sees them, and nothing outside changes', async () => {
    const outsideBefore = hashTree(outside);
    for (const path of [
      '../../outside/pwned.txt',
      join(outside, 'pwned.txt'),
      'escape-link/pwned.txt',
      '.git/config',
      '~/pwned',
    ]) {
      const result = await run('write_file', { path, content: 'pwned' });
      expect([path, result.isError]).toEqual([path, true]);
      expect(text(result)).toContain('was refused');
    }
    const moved = await run('move_file', {
      source: 'src/main.py',
      destination: '../../outside/stolen.py',
    });
    expect(moved.isError).toBe(true);
    expect(existsSync(join(sandbox.root, 'src/main.py'))).toBe(true);
    expect(hashTree(outside)).toBe(outsideBefore);
  });

  it('leaves the user repo untouched while the sandbox records the writes', async () => {
    const snapshot = await sandbox.snapshot('after filesystem calls');
    expect(snapshot.changed.map((change) => `${change.status} ${change.path}`)).toEqual(
      expect.arrayContaining(['A notes/moved.md', 'A src/new.py']),
    );
    expect(hashTree(repo, ['.git'])).toBe(repoBefore.tree);
    expect(git(repo, 'status', '--porcelain')).toBe(repoBefore.status);
    expect(hashTree(join(repo, '.git'), ['objects', 'refs', 'worktrees'])).toBe(repoBefore.git);
  });

  it('answers roots/list with exactly the sandbox root', async () => {
    expect(rootsRequests).toBeGreaterThanOrEqual(1);
    expect(sandboxRoots(sandbox)).toEqual([{ uri: `file://${sandbox.root}`, name: 'sandbox fs' }]);
  });
});
