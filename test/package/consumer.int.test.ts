/**
 * The package as a consumer gets it: `npm pack` on a copy of the repo without `dist/` (as on a
 * clean clone, so `prepack` must build), the tarball unpacked into a consumer project whose
 * node_modules holds ONLY the package's dependencies and its required peers, then the README's
 * hand-built-graph snippet run as ESM and typechecked with `skipLibCheck: false`.
 *
 * No network: the dependencies are symlinked from this checkout's node_modules. Node resolves a
 * symlinked package's own imports from where it really lives, but the unpacked package is a real
 * folder, so its imports see only what the consumer has: an import of an optional peer or of an
 * undeclared package from the root fails here.
 */
import { execFile } from 'node:child_process';
import { cp, mkdir, mkdtemp, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, normalize } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const ROOT = join(import.meta.dirname, '..', '..');
const run = promisify(execFile);
const TSC = join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc');
const EVERYTHING = join(ROOT, 'node_modules', '@modelcontextprotocol', 'server-everything');
/** What the README's first snippet spawns, and what it runs here instead (no `npx` download). */
const README_TRANSPORT = `{ command: 'npx', args: ['-y', '@modelcontextprotocol/server-everything'] }`;
const LOCAL_TRANSPORT = `{ command: process.execPath, args: [${JSON.stringify(join(EVERYTHING, 'dist', 'index.js'))}, 'stdio'] }`;
/** The README's first snippet is this file (test/examples/snippets.test.ts keeps them equal). */
const SNIPPET = join(ROOT, 'examples', 'snippets', 'hand-built-graph.ts');
const CLOSE = 'await client.close();';

interface PackedFile {
  path: string;
}
interface PackResult {
  filename: string;
  size: number;
  unpackedSize: number;
  files: PackedFile[];
}
interface PackageJson {
  name: string;
  dependencies?: Record<string, string>;
  peerDependencies?: Record<string, string>;
  peerDependenciesMeta?: Record<string, { optional?: boolean }>;
}

let stage: string;
let consumer: string;
let packed: PackResult;
let manifest: PackageJson;
const timings: Record<string, number> = {};

async function timed<T>(label: string, work: () => Promise<T>): Promise<T> {
  const started = performance.now();
  try {
    return await work();
  } finally {
    timings[label] = Math.round(performance.now() - started);
  }
}

/** Puts `name` from this checkout's node_modules into the consumer's, as a symlink. */
async function provide(name: string): Promise<void> {
  const target = join(consumer, 'node_modules', name);
  await mkdir(dirname(target), { recursive: true });
  await symlink(join(ROOT, 'node_modules', name), target, 'dir');
}

async function node(file: string) {
  try {
    const { stdout, stderr } = await run(process.execPath, [file], { cwd: consumer });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const failed = error as { code?: number; stdout?: string; stderr?: string };
    return { code: failed.code ?? -1, stdout: failed.stdout ?? '', stderr: failed.stderr ?? '' };
  }
}

/** The snippet, its `client.close()` (its last statement) left for the caller to append. */
async function readmeSnippet(): Promise<string> {
  const text = await readFile(SNIPPET, 'utf8');
  const close = text.lastIndexOf(CLOSE);
  if (close < 0) throw new Error(`${SNIPPET}: no ${CLOSE}`);
  return text.slice(0, close);
}

describe('the packed package in a consumer project with only the required peers', () => {
  beforeAll(async () => {
    stage = await mkdtemp(join(tmpdir(), 'agents-consumer-'));
    const repo = join(stage, 'repo');
    // What a clean clone has for a build: sources and configs, no dist/.
    for (const entry of [
      'package.json',
      'tsconfig.json',
      'tsconfig.build.json',
      'README.md',
      // `npm run build` makes the bin executable with it.
      join('scripts', 'bin-executable.mjs'),
    ]) {
      await cp(join(ROOT, entry), join(repo, entry));
    }
    for (const folder of ['src', 'schemas']) {
      await cp(join(ROOT, folder), join(repo, folder), { recursive: true });
    }
    await symlink(join(ROOT, 'node_modules'), join(repo, 'node_modules'), 'dir');
    manifest = JSON.parse(await readFile(join(repo, 'package.json'), 'utf8')) as PackageJson;

    const { stdout } = await timed('pack (prepack build + tarball)', () =>
      run('npm', ['pack', '--json', '--pack-destination', stage], {
        cwd: repo,
        maxBuffer: 64 * 1024 * 1024,
      }),
    );
    // Lifecycle scripts print their banners on stdout too: the JSON is the last array.
    const json = stdout.slice(stdout.lastIndexOf('\n[') + 1);
    packed = (JSON.parse(json) as PackResult[])[0]!;

    consumer = join(stage, 'consumer');
    const installed = join(consumer, 'node_modules', ...manifest.name.split('/'));
    await mkdir(installed, { recursive: true });
    await writeFile(
      join(consumer, 'package.json'),
      JSON.stringify({ name: 'consumer', private: true, type: 'module' }),
    );
    await run('tar', [
      '-xzf',
      join(stage, packed.filename),
      '-C',
      installed,
      '--strip-components=1',
    ]);
    const optional = manifest.peerDependenciesMeta ?? {};
    const requiredPeers = Object.keys(manifest.peerDependencies ?? {}).filter(
      (name) => optional[name]?.optional !== true,
    );
    for (const name of [
      ...Object.keys(manifest.dependencies ?? {}),
      ...requiredPeers,
      '@types/node', // the consumer's own, for the typecheck
    ]) {
      await provide(name);
    }
  }, 400_000);

  afterAll(async () => {
    console.log(
      `[consumer] ${packed === undefined ? '' : `tarball ${(packed.size / 1024).toFixed(0)} KB (unpacked ${(packed.unpackedSize / 1024).toFixed(0)} KB, ${packed.files.length} files); `}` +
        Object.entries(timings)
          .map(([label, ms]) => `${label} ${(ms / 1000).toFixed(1)} s`)
          .join(', '),
    );
    if (stage !== undefined) await rm(stage, { recursive: true, force: true });
  });

  it('ships the build (made by prepack), the schemas, and the sources the maps point at', async () => {
    const files = new Set(packed.files.map((file) => file.path));
    for (const path of [
      'dist/index.js',
      'dist/index.d.ts',
      'dist/langchain.js',
      'dist/langchain.d.ts',
      'dist/testing/index.js',
      'dist/serving/index.js',
      'dist/cli/main.js',
      'schemas/actor.schema.json',
      'src/index.ts',
      'package.json',
      'README.md',
    ]) {
      expect(files, path).toContain(path);
    }
    expect([...files].filter((path) => /^(test|examples|graphs|bench)\//.test(path))).toEqual([]);
    // Every source map (JS and declaration) names files that are in the tarball.
    const maps = [...files].filter((path) => path.endsWith('.map'));
    expect(maps.length).toBeGreaterThan(10);
    const missing: string[] = [];
    for (const map of maps) {
      const { sources } = JSON.parse(
        await readFile(join(consumer, 'node_modules', ...manifest.name.split('/'), map), 'utf8'),
      ) as { sources: string[] };
      for (const source of sources) {
        const path = normalize(join(dirname(map), source));
        if (!files.has(path)) missing.push(`${map} -> ${source}`);
      }
    }
    expect(missing).toEqual([]);
  });

  it('runs the README hand-built-graph snippet against the root (ESM)', async () => {
    const snippet = await readmeSnippet();
    expect(snippet).toContain(`from '${manifest.name}'`);
    expect(snippet).toContain(README_TRANSPORT);
    const program =
      snippet.replace(README_TRANSPORT, LOCAL_TRANSPORT) +
      `\nconsole.log(JSON.stringify({ tools: toolNode.tools.map((tool) => tool.name), toolNode: toolNode.constructor.name }));\nawait client.close();\n`;
    await writeFile(join(consumer, 'snippet.mjs'), program);
    const result = await timed('README snippet', () => node('snippet.mjs'));
    expect(result.stderr).not.toContain('ERR_MODULE_NOT_FOUND');
    expect(result.code).toBe(0);
    const out = JSON.parse(result.stdout.trim().split('\n').at(-1)!) as {
      tools: string[];
      toolNode: string;
    };
    expect(out.tools).toContain('echo');
    expect(out.toolNode).toBe('ToolNode');
  });

  it('typechecks the snippet and every entry with skipLibCheck: false', async () => {
    const snippet = await readmeSnippet();
    await writeFile(
      join(consumer, 'snippet.ts'),
      `${snippet.replace(README_TRANSPORT, LOCAL_TRANSPORT)}\n` +
        `import * as root from '${manifest.name}';\nimport * as testing from '${manifest.name}/testing';\n` +
        `import * as serve from '${manifest.name}/serve';\n` +
        `const entries: object[] = [root, testing, serve, toolNode];\nconsole.log(entries.length);\n${CLOSE}\n`,
    );
    await writeFile(
      join(consumer, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: {
          target: 'ES2022',
          module: 'NodeNext',
          moduleResolution: 'NodeNext',
          strict: true,
          skipLibCheck: false,
          noEmit: true,
          types: ['node'],
        },
        files: ['snippet.ts'],
      }),
    );
    // Checks every library's .d.ts too: about 25 s of CPU, minutes on a loaded machine.
    const result = await timed('tsc --noEmit (skipLibCheck false)', () =>
      run(process.execPath, [TSC, '-p', 'tsconfig.json'], { cwd: consumer }).then(
        () => '',
        (error: { stdout?: string; message: string }) => error.stdout || error.message,
      ),
    );
    expect(result).toBe('');
  }, 400_000);

  it('exports the curated API from the built root: public names in, internals out', async () => {
    // The internals the root used to export; a program has no use for them (see src/index.ts).
    const internals = [
      'createClientCaller',
      'listAllTools',
      'fingerprintTool',
      'markRunActive',
      'sandboxRoots',
      'resolveToolNames',
      'inferCapabilities',
      'detectPathArguments',
      'createScriptedModel',
      'createMcpServer',
    ];
    await writeFile(
      join(consumer, 'surface.mjs'),
      `import * as root from '${manifest.name}';\n` +
        `import * as serve from '${manifest.name}/serve';\n` +
        `import * as testing from '${manifest.name}/testing';\n` +
        `console.log(JSON.stringify({ root: Object.keys(root), serve: Object.keys(serve), testing: Object.keys(testing) }));\n`,
    );
    const result = await node('surface.mjs');
    expect(result.stderr).toBe('');
    const surface = JSON.parse(result.stdout) as Record<'root' | 'serve' | 'testing', string[]>;
    expect(surface.root.filter((name) => internals.includes(name))).toEqual([]);
    for (const name of ['createActor', 'createMcpToolAdapter', 'createToolRegistry', 'AgentsError'])
      expect(surface.root, name).toContain(name);
    for (const name of ['createMcpServer', 'serveHttp', 'createServedToolSet'])
      expect(surface.serve, name).toContain(name);
    for (const name of ['createScriptedModel', 'buildToolDescriptor', 'buildToolEntry'])
      expect(surface.testing, name).toContain(name);
  });

  it('builds descriptors in /testing that the root policy reads like a real MCP tool', async () => {
    await writeFile(
      join(consumer, 'descriptor.mjs'),
      `import { decide, parsePolicy } from '${manifest.name}/policy';\n` +
        `import { buildToolDescriptor } from '${manifest.name}/testing';\n` +
        `const writer = buildToolDescriptor({ name: 'write_file', server: 'fs', inputSchema: { type: 'object', properties: { path: { type: 'string' } } } });\n` +
        `const reader = buildToolDescriptor({ name: 'read_file', server: 'fs' });\n` +
        `const policy = parsePolicy({ mode: 'read-only' });\n` +
        `console.log(JSON.stringify({ id: writer.id, paths: writer.pathArguments, writer: decide(writer, policy).decision, reader: decide(reader, policy).decision }));\n`,
    );
    const result = await node('descriptor.mjs');
    expect(result.stderr).toBe('');
    expect(JSON.parse(result.stdout)).toEqual({
      id: 'mcp:fs/write_file',
      paths: ['path'],
      writer: 'deny',
      reader: 'allow',
    });
  });

  it('needs no native module: SQLite is an optional peer, named with its install line until installed', async () => {
    expect(manifest.dependencies?.['better-sqlite3']).toBeUndefined();
    expect(manifest.peerDependenciesMeta?.['better-sqlite3']?.optional).toBe(true);
    await writeFile(
      join(consumer, 'sqlite.mjs'),
      `import { createCheckpointer } from '${manifest.name}/graph';\n` +
        `try {\n` +
        `  const opened = await createCheckpointer({ type: 'sqlite', path: 'cp.sqlite' });\n` +
        `  console.log('opened', opened.type);\n` +
        `  await opened.close();\n` +
        `} catch (error) {\n` +
        `  console.log(JSON.stringify({ code: error.code, message: error.message }));\n` +
        `}\n`,
    );
    const without = await node('sqlite.mjs');
    const refused = JSON.parse(without.stdout.trim()) as { code: string; message: string };
    expect(refused.code).toBe('CONFIG_INVALID');
    expect(refused.message).toContain(
      'checkpointer type "sqlite" needs the package @langchain/langgraph-checkpoint-sqlite, which is not installed',
    );
    expect(refused.message).toContain(
      'npm install @langchain/langgraph-checkpoint-sqlite better-sqlite3',
    );
    await provide('better-sqlite3');
    await provide('@langchain/langgraph-checkpoint-sqlite');
    const withIt = await node('sqlite.mjs');
    expect(withIt.stdout.trim()).toBe('opened sqlite');
  });

  it('loads /testing and the agents binary without optional peers, and /langchain once langchain is installed', async () => {
    await writeFile(
      join(consumer, 'testing.mjs'),
      `import { createScriptedModel } from '${manifest.name}/testing';\nconsole.log(typeof createScriptedModel);\n`,
    );
    expect((await node('testing.mjs')).stdout.trim()).toBe('function');
    const bin = join(
      consumer,
      'node_modules',
      ...manifest.name.split('/'),
      'dist',
      'cli',
      'main.js',
    );
    const help = await run(process.execPath, [bin, '--help'], { cwd: consumer });
    expect(help.stdout).toContain('Usage: agents');

    await writeFile(
      join(consumer, 'langchain.mjs'),
      `import { createSandboxAgentMiddleware } from '${manifest.name}/langchain';\nconsole.log(typeof createSandboxAgentMiddleware);\n`,
    );
    // The subpath needs the optional peer: without it, node names the missing package.
    const without = await node('langchain.mjs');
    expect(without.code).not.toBe(0);
    expect(without.stderr).toMatch(/Cannot find package 'langchain'/);
    await provide('langchain');
    const withIt = await node('langchain.mjs');
    expect(withIt.stderr).toBe('');
    expect(withIt.stdout.trim()).toBe('function');
  });
});
