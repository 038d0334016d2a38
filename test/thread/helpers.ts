import { execFileSync } from 'node:child_process';
import { mkdir, mkdtemp, readdir, readFile, rm, unlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { AIMessage } from '@langchain/core/messages';
import type { BaseMessage } from '@langchain/core/messages';
import type { StructuredTool } from '@langchain/core/tools';
import { END, MessagesValue, START, StateGraph, StateSchema } from '@langchain/langgraph';
import type { BaseCheckpointSaver } from '@langchain/langgraph';
import { toolsCondition } from '@langchain/langgraph/prebuilt';
import { sandboxStateFields } from '../../src/thread/state.js';
import { createTrackedToolNode } from '../../src/pipeline/tool-node.js';
import { toStructuredTool } from '../../src/mcp/structured-tool.js';
import { createChangeTrackingMiddleware } from '../../src/pipeline/change-tracking.js';
import { composeMiddleware } from '../../src/core/tool-middleware.js';
import type { ToolCallHandler } from '../../src/core/tool-middleware.js';
import type { Capabilities, ToolDescriptor } from '../../src/core/tool-descriptor.js';
import type { Sandbox } from '../../src/sandbox/types.js';
import { createSandbox, type LocalSandbox } from '../../src/sandbox/git/local-sandbox.js';
import { createCheckpointer } from '../../src/checkpoint/backends.js';
import type { Checkpointer } from '../../src/checkpoint/backend.js';

/** Capabilities of a read-only or a writing tool, as the registry would infer them. */
export function capabilities(readOnly: boolean): Capabilities {
  return {
    readOnly: { value: readOnly, source: 'override', reason: 'test' },
    writes: { value: !readOnly, source: 'override', reason: 'test' },
    destructive: { value: false, source: 'default', reason: 'test' },
    openWorld: { value: false, source: 'default', reason: 'test' },
    disagreements: [],
  };
}

/** A descriptor for a local test tool. */
export function descriptor(
  name: string,
  readOnly: boolean,
  properties: Record<string, unknown>,
): ToolDescriptor {
  return {
    id: `custom:${name}`,
    name,
    originalName: name,
    source: 'custom',
    description: `test tool ${name}`,
    inputSchema: { type: 'object', properties },
    capabilities: capabilities(readOnly),
    pathArguments: ['path'],
    fingerprint: name,
  };
}

function text(value: string, isError = false): CallToolResult {
  return { content: [{ type: 'text', text: value }], ...(isError ? { isError: true } : {}) };
}

function argString(args: Record<string, unknown>, key: string): string {
  const value = args[key];
  if (typeof value !== 'string') throw new Error(`argument ${key} must be a string`);
  return value;
}

/** Local file tools over a sandbox root; `delayMs` lets tests force overlap of parallel calls. */
export function fileHandlers(
  root: () => string,
): Record<string, { descriptor: ToolDescriptor; handler: ToolCallHandler }> {
  const pathProps = { path: { type: 'string' } };
  return {
    write_file: {
      descriptor: descriptor('write_file', false, {
        ...pathProps,
        content: { type: 'string' },
        delayMs: { type: 'number' },
      }),
      handler: async ({ args }) => {
        const path = join(root(), argString(args, 'path'));
        if (typeof args['delayMs'] === 'number')
          await new Promise((resolve) => setTimeout(resolve, args['delayMs'] as number));
        await mkdir(dirname(path), { recursive: true });
        await writeFile(path, argString(args, 'content'));
        return text(`wrote ${argString(args, 'path')}`);
      },
    },
    delete_file: {
      descriptor: descriptor('delete_file', false, pathProps),
      handler: async ({ args }) => {
        await unlink(join(root(), argString(args, 'path')));
        return text(`deleted ${argString(args, 'path')}`);
      },
    },
    read_file: {
      descriptor: descriptor('read_file', true, pathProps),
      handler: async ({ args }) =>
        text(await readFile(join(root(), argString(args, 'path')), 'utf8')),
    },
    /** Writes a partial file, then throws (a crashed tool). */
    crash_write: {
      descriptor: descriptor('crash_write', false, pathProps),
      handler: async ({ args }) => {
        await writeFile(join(root(), argString(args, 'path')), 'half');
        throw new Error('disk on fire');
      },
    },
    /** Writes a partial file, then returns an error result. */
    fail_write: {
      descriptor: descriptor('fail_write', false, pathProps),
      handler: async ({ args }) => {
        await writeFile(join(root(), argString(args, 'path')), 'partial');
        return text('quota exceeded', true);
      },
    },
  };
}

/** The file tools as LangChain tools, each handler composed with change tracking. */
export function trackedFileTools(sandbox: Sandbox): StructuredTool[] {
  const tracking = createChangeTrackingMiddleware(sandbox);
  return Object.values(fileHandlers(() => sandbox.root)).map(({ descriptor: d, handler }) =>
    toStructuredTool(d, composeMiddleware([tracking], handler)),
  );
}

/** A temp git repo with one commit (README.md, src/main.txt). */
export async function makeRepo(): Promise<{ dir: string; cleanup: () => Promise<void> }> {
  const dir = await mkdtemp(join(tmpdir(), 'agents-cp-repo-'));
  await writeFile(join(dir, 'README.md'), '# readme\n');
  await mkdir(join(dir, 'src'));
  await writeFile(join(dir, 'src', 'main.txt'), 'main v1\n');
  const git = (...args: string[]): void => {
    execFileSync('git', args, {
      cwd: dir,
      env: {
        ...process.env,
        GIT_AUTHOR_NAME: 't',
        GIT_AUTHOR_EMAIL: 't@t',
        GIT_COMMITTER_NAME: 't',
        GIT_COMMITTER_EMAIL: 't@t',
      },
      stdio: 'ignore',
    });
  };
  git('init', '-q', '-b', 'main');
  git('add', '-A');
  git('commit', '-q', '-m', 'init');
  return { dir, cleanup: () => rm(dir, { recursive: true, force: true }) };
}

/** Every file under `root` (except .git) with its content, sorted by path. */
export async function readTree(root: string): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  async function walk(dir: string): Promise<void> {
    for (const entry of await readdir(dir, { withFileTypes: true })) {
      if (entry.name === '.git') continue;
      const full = join(dir, entry.name);
      if (entry.isDirectory()) await walk(full);
      else out[relative(root, full)] = await readFile(full, 'utf8');
    }
  }
  await walk(root);
  return Object.fromEntries(Object.entries(out).sort(([a], [b]) => a.localeCompare(b)));
}

const State = new StateSchema({ messages: MessagesValue, ...sandboxStateFields });

export type ScriptedCall = { name: string; args: Record<string, unknown> };

/** The model's turns: turn N answers with the calls in SCRIPT[N], then a final text. */
const SCRIPT: ScriptedCall[][] = [
  [{ name: 'write_file', args: { path: 'a.txt', content: 'A1' } }],
  [
    { name: 'write_file', args: { path: 'b.txt', content: 'B1', delayMs: 40 } },
    { name: 'write_file', args: { path: 'src/main.txt', content: 'main v2\n' } },
  ],
  [
    { name: 'delete_file', args: { path: 'README.md' } },
    { name: 'crash_write', args: { path: 'half.txt' } },
  ],
  [{ name: 'read_file', args: { path: 'a.txt' } }],
];

/** A hand-built StateGraph: a scripted agent node and the tracked ToolNode. */
export function buildGraph(
  tools: StructuredTool[],
  sandbox: Sandbox,
  saver: BaseCheckpointSaver,
  script: ScriptedCall[][] = SCRIPT,
) {
  // Deterministic "model": the turn is the number of AI messages so far, so replays and forks
  // continue the script from where the state is.
  const agent = (state: { messages: BaseMessage[] }) => {
    const turn = state.messages.filter((message) => AIMessage.isInstance(message)).length;
    const calls = script[turn];
    if (calls === undefined) return { messages: [new AIMessage('done')] };
    return {
      messages: [
        new AIMessage({
          content: '',
          tool_calls: calls.map((call, index) => ({
            id: `t${turn}-${index}`,
            name: call.name,
            args: call.args,
            type: 'tool_call' as const,
          })),
        }),
      ],
    };
  };
  return new StateGraph(State)
    .addNode('agent', agent)
    .addNode('tools', createTrackedToolNode(tools, { sandbox }))
    .addEdge(START, 'agent')
    .addConditionalEdges('agent', toolsCondition, ['tools', END])
    .addEdge('tools', 'agent')
    .compile({ checkpointer: saver });
}

/** A user repo, its sandbox and a SQLite checkpointer in a temp folder: a thread's parts. */
export interface ThreadParts {
  sandbox: LocalSandbox;
  checkpointer: Checkpointer;
  /** A new checkpointer on the same SQLite file (a later process). */
  openCheckpointer(): Promise<Checkpointer>;
  /** Closes both and removes the repo and the SQLite folder. */
  cleanup(checkpointer: Checkpointer): Promise<void>;
}

/** Makes {@link ThreadParts}: `makeRepo`, `createSandbox` (default options), a SQLite file. */
export async function makeThreadParts(): Promise<ThreadParts> {
  const repo = await makeRepo();
  const sandbox = await createSandbox({ source: repo.dir });
  const dbDir = await mkdtemp(join(tmpdir(), 'agents-thread-db-'));
  const openCheckpointer = () =>
    createCheckpointer({ type: 'sqlite', path: join(dbDir, 'cp.sqlite') });
  return {
    sandbox,
    checkpointer: await openCheckpointer(),
    openCheckpointer,
    async cleanup(checkpointer) {
      await checkpointer.close();
      await sandbox.close();
      await repo.cleanup();
      await rm(dbDir, { recursive: true, force: true });
    },
  };
}
