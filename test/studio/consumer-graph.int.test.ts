/**
 * `createStudioGraph()` as a user's project gets it: a consumer project outside the repo whose
 * graph files import only the public entry points (`@agents/langgraph-mcp/studio` and the
 * package root), served by the real LangGraph dev server. The README's example (langgraph.json
 * + graph.ts serving a workspace actor) is taken from the README itself; a second, hand-built
 * graph uses `studio.sandbox()`, `studio.server()` and `studio.tempDir()`.
 *
 * Stopping the dev server with SIGTERM (its graph process is SIGKILLed by its `tsx` parent when
 * slow, so nothing in-process can be relied on) must leave no sandbox, no temp folder, no MCP
 * server and no janitor running.
 *
 * The package is the repo's `src/`, transpiled file by file with TypeScript into the package's
 * `dist/` layout (the exports map of the real package.json picks the files); the typechecked
 * build and `npm pack` are covered by `test/package/consumer.int.test.ts`.
 */
import { execFileSync } from 'node:child_process';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  realpathSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { Client } from '@langchain/langgraph-sdk';
import ts from 'typescript';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isAlive, startDevServer, type DevServer } from '../helpers/dev-server.js';

const ROOT = path.resolve(import.meta.dirname, '..', '..');
const require = createRequire(import.meta.url);
const FILESYSTEM_SERVER = require.resolve('@modelcontextprotocol/server-filesystem/dist/index.js');

/** The fenced block of `lang` that follows `heading` in docs/studio.md (the n-th one). */
function readmeBlock(heading: string, lang: string, nth = 0): string {
  const readme = readFileSync(path.join(ROOT, 'docs', 'studio.md'), 'utf8');
  let at = readme.indexOf(heading);
  if (at < 0) throw new Error(`docs/studio.md: no "${heading}"`);
  for (let index = 0; index <= nth; index++) {
    at = readme.indexOf(`\`\`\`${lang}\n`, at + 1);
    if (at < 0) throw new Error(`docs/studio.md: no ${lang} block ${nth} under "${heading}"`);
  }
  const start = at + lang.length + 4;
  return readme.slice(start, readme.indexOf('```', start));
}

/** `src/**\/*.ts` → `<out>/**\/*.js`, transpiled (no typecheck: tsc covers that elsewhere). */
function transpileSources(source: string, out: string): void {
  for (const entry of readdirSync(source, { withFileTypes: true })) {
    const from = path.join(source, entry.name);
    if (entry.isDirectory()) {
      transpileSources(from, path.join(out, entry.name));
    } else if (entry.name.endsWith('.ts') && !entry.name.endsWith('.d.ts')) {
      const { outputText } = ts.transpileModule(readFileSync(from, 'utf8'), {
        fileName: from,
        compilerOptions: {
          module: ts.ModuleKind.ESNext,
          target: ts.ScriptTarget.ES2022,
          verbatimModuleSyntax: true,
        },
      });
      mkdirSync(out, { recursive: true });
      writeFileSync(path.join(out, entry.name.replace(/\.ts$/, '.js')), outputText);
    }
  }
}

function git(cwd: string, ...args: string[]): void {
  execFileSync('git', args, {
    cwd,
    stdio: 'ignore',
    env: {
      PATH: process.env['PATH'] ?? '/usr/bin:/bin',
      HOME: cwd,
      GIT_AUTHOR_NAME: 'test',
      GIT_AUTHOR_EMAIL: 'test@localhost',
      GIT_COMMITTER_NAME: 'test',
      GIT_COMMITTER_EMAIL: 'test@localhost',
    },
  });
}

function cmdline(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').replaceAll('\0', ' ');
  } catch {
    return '';
  }
}

/** Sandbox folders (`agents-sandbox-*`, holding a `run/` dir) anywhere under `dir`. */
function sandboxFolders(dir: string): string[] {
  const found: string[] = [];
  const walk = (at: string, depth: number): void => {
    if (depth > 6 || !existsSync(at)) return;
    for (const entry of readdirSync(at, { withFileTypes: true })) {
      if (!entry.isDirectory()) continue;
      const full = path.join(at, entry.name);
      if (entry.name.startsWith('agents-sandbox-') && existsSync(path.join(full, 'run')))
        found.push(full);
      else walk(full, depth + 1);
    }
  };
  walk(dir, 0);
  return found;
}

/** The hand-built graph: a sandbox, the filesystem server in it, and a scratch folder. */
const FILES_GRAPH = `
import { AIMessage } from '@langchain/core/messages';
import { END, MessagesValue, START, StateGraph, StateSchema } from '@langchain/langgraph';
import { createStudioGraph } from '@agents/langgraph-mcp/studio';

const made = await createStudioGraph(async (studio) => {
  const scratch = studio.tempDir('consumer-scratch-');
  const sandbox = await studio.sandbox({ source: process.cwd(), baseDir: process.env.FILES_SANDBOX_BASE });
  const server = await studio.server(
    { name: 'fs', command: process.execPath, args: [${JSON.stringify(FILESYSTEM_SERVER)}, sandbox.root] },
    { cwd: sandbox.root, roots: () => [sandbox.root] },
  );
  const graph = new StateGraph(new StateSchema({ messages: MessagesValue }))
    .addNode('count', () => ({
      messages: [new AIMessage(\`\${server.entries().length} tools; scratch \${scratch}\`)],
    }))
    .addEdge(START, 'count')
    .addEdge('count', END)
    .compile();
  return { graph };
});
export const graph = made.graph;
`;

describe('createStudioGraph in a consumer project under the LangGraph dev server', () => {
  let temp: string;
  let project: string;
  let stateDir: string;
  let filesBase: string;
  let server: DevServer | undefined;
  let client: Client;
  /** The hand-built graph's scratch folder, as it reported it. */
  let scratch = '';

  beforeAll(async () => {
    temp = realpathSync(mkdtempSync(path.join(tmpdir(), 'agents-studio-consumer-')));
    project = path.join(temp, 'project');
    stateDir = path.join(temp, 'state');
    filesBase = path.join(temp, 'files-sandboxes');
    mkdirSync(filesBase, { recursive: true });

    // node_modules: the package as a real folder (package.json + dist/), everything else linked.
    const modules = path.join(project, 'node_modules');
    const installed = path.join(modules, '@agents', 'langgraph-mcp');
    mkdirSync(installed, { recursive: true });
    writeFileSync(
      path.join(installed, 'package.json'),
      readFileSync(path.join(ROOT, 'package.json')),
    );
    transpileSources(path.join(ROOT, 'src'), path.join(installed, 'dist'));
    const shared = realpathSync(path.join(ROOT, 'node_modules'));
    for (const name of readdirSync(shared)) {
      if (name === '@agents' || name.startsWith('.')) continue;
      symlinkSync(path.join(shared, name), path.join(modules, name), 'dir');
    }

    // The project: the README's files, a workspace with the actor, a git repo to sandbox.
    writeFileSync(
      path.join(project, 'package.json'),
      JSON.stringify({ name: 'consumer', private: true, type: 'module' }),
    );
    const langgraphJson = JSON.parse(readmeBlock('### Your own graphs in Studio', 'json')) as {
      graphs: Record<string, string>;
    };
    expect(langgraphJson.graphs).toEqual({ coder: './graph.ts:graph' });
    langgraphJson.graphs['files'] = './files.ts:graph';
    writeFileSync(path.join(project, 'langgraph.json'), JSON.stringify(langgraphJson));
    writeFileSync(
      path.join(project, 'graph.ts'),
      readmeBlock('### Your own graphs in Studio', 'ts'),
    );
    writeFileSync(path.join(project, 'files.ts'), FILES_GRAPH);
    const agents = path.join(project, '.agents');
    mkdirSync(path.join(agents, 'actors'), { recursive: true });
    mkdirSync(path.join(agents, 'skills'), { recursive: true });
    writeFileSync(
      path.join(agents, 'skills', 'files.yaml'),
      [
        'description: Edit files.',
        'mcpServers:',
        '  - name: fs',
        '    transport: stdio',
        `    command: ${JSON.stringify(process.execPath)}`,
        `    args: [${JSON.stringify(FILESYSTEM_SERVER)}]`,
        '',
      ].join('\n'),
    );
    writeFileSync(
      path.join(agents, 'actors', 'coder.yaml'),
      [
        'skills: [files]',
        'instructions: Write what you are asked to.',
        'model: scripted:.agents/actors/coder.script.yaml',
        'policy: { mode: auto }',
        '',
      ].join('\n'),
    );
    writeFileSync(
      path.join(agents, 'actors', 'coder.script.yaml'),
      [
        '- tool_calls:',
        '    - name: write_file',
        '      args: { path: hello.md, content: hi from studio }',
        '- content: Wrote hello.md.',
        '',
      ].join('\n'),
    );
    writeFileSync(path.join(project, '.gitignore'), 'node_modules/\n.langgraph_api\n');
    writeFileSync(path.join(project, 'README.md'), '# consumer\n');
    git(project, 'init', '-q', '-b', 'main');
    git(project, 'add', '-A');
    git(project, 'commit', '-q', '-m', 'initial');

    server = await startDevServer({
      cwd: project,
      env: { AGENTS_STATE_DIR: stateDir, FILES_SANDBOX_BASE: filesBase },
    });
    client = new Client({ apiUrl: server.url });
  }, 150_000);

  afterAll(async () => {
    await server?.stop();
    if (temp !== undefined) rmSync(temp, { recursive: true, force: true });
  }, 30_000);

  it('serves both graphs: the README actor runs a tool call in its sandbox', async () => {
    expect(await client.assistants.search({ graphId: 'coder' })).toHaveLength(1);
    expect(await client.assistants.search({ graphId: 'files' })).toHaveLength(1);
    const result = (await client.runs.wait(null, 'coder', {
      input: { messages: [{ role: 'user', content: 'write hello.md' }] },
    })) as { messages: Array<{ content: unknown }> };
    expect(result.messages.at(-1)?.content).toBe('Wrote hello.md.');
    const sandboxes = sandboxFolders(stateDir);
    expect(sandboxes).toHaveLength(1);
    const tree = readdirSync(sandboxes[0]!).find((name) => name !== 'run')!;
    expect(readFileSync(path.join(sandboxes[0]!, tree, 'hello.md'), 'utf8')).toBe('hi from studio');
    expect(existsSync(path.join(project, 'hello.md'))).toBe(false);

    const counted = (await client.runs.wait(null, 'files', {
      input: { messages: [{ role: 'user', content: 'count' }] },
    })) as { messages: Array<{ content: unknown }> };
    const reply = String(counted.messages.at(-1)?.content);
    expect(reply).toMatch(/^\d+ tools; scratch \//);
    expect(Number(reply.split(' ')[0])).toBeGreaterThan(5);
    scratch = reply.slice(reply.indexOf('scratch ') + 'scratch '.length);
    expect(existsSync(scratch)).toBe(true);
  });

  it('SIGTERM to the dev server leaves no sandbox, temp folder, MCP server or janitor', async () => {
    const pids = server!.treePids();
    const mcpServers = pids.filter((pid) => cmdline(pid).includes('server-filesystem'));
    const janitors = pids.filter((pid) => cmdline(pid).includes("'use strict'"));
    // One server per graph; the actor's runs confined (bubblewrap in front of node) when it can.
    const serverNodes = mcpServers.filter((pid) => cmdline(pid).startsWith(process.execPath));
    expect(serverNodes.map((pid) => `${pid} ${cmdline(pid)}`)).toHaveLength(2);
    expect(janitors).toHaveLength(2);
    const sandboxes = [...sandboxFolders(stateDir), ...sandboxFolders(filesBase)];
    expect(sandboxes).toHaveLength(2);
    expect(scratch).not.toBe('');

    process.kill(-server!.pid, 'SIGTERM');
    const exited = Date.now() + 10_000;
    while (isAlive(server!.pid) && Date.now() < exited)
      await new Promise((resolve) => setTimeout(resolve, 50));
    await server!.stop();
    const watched = [...pids, ...mcpServers, ...janitors];
    const deadline = Date.now() + 10_000;
    while (watched.some(isAlive) && Date.now() < deadline)
      await new Promise((resolve) => setTimeout(resolve, 100));
    expect(watched.filter(isAlive).map((pid) => `${pid} ${cmdline(pid)}`)).toEqual([]);
    for (const folder of [...sandboxes, scratch]) expect(existsSync(folder), folder).toBe(false);
  }, 30_000);
});
