/**
 * The reference actor graph behind `graphs/actor.ts` (the module the LangGraph dev server loads),
 * built only from the library's public pieces: a real MCP server (`@modelcontextprotocol/server-filesystem`
 * over stdio) whose tools run in a sandbox (a repository of its own), with path rewriting and change tracking,
 * so every checkpoint records the file state it belongs to (`changeLog`, `sandboxHead`).
 * With the `policy` option (used by `graphs/approvals.ts`) the same graph asks a human before
 * write-class calls: the policy middleware pauses the run with `interrupt(preview)`, which Studio
 * shows, and `Command({ resume })` answers it.
 *
 * Importing this module starts nothing; {@link createStudioActor} does.
 */
import { execFileSync } from 'node:child_process';
import {
  mkdtempSync,
  readFileSync,
  readdirSync,
  realpathSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { AIMessage, ToolMessage, type BaseMessage } from '@langchain/core/messages';
import { fakeModel } from '@langchain/core/testing';
import type { StructuredTool } from '@langchain/core/tools';
import { END, MessagesDeltaValue, START, StateGraph, StateSchema } from '@langchain/langgraph';
import { createToolRegistry } from '../src/index.js';
import {
  createToolPipeline,
  createTrackedToolNode,
  routeToolCallsPerTask,
  sandboxDeltaStateFields,
} from '../src/entries/graph.js';
import {
  createInterruptApprover,
  createMemoryPinStore,
  parsePolicy,
  type PinStore,
  type Policy,
  type PolicyInput,
} from '../src/entries/policy.js';
import { createAgentsRuntime, removeOnClose } from '../src/entries/runtime.js';
import type { RunSandbox } from '../src/entries/sandbox.js';
import type { ManagedServer } from '../src/entries/servers.js';
import type { StudioJanitor } from '../src/studio/index.js';

/** The graph state: chat messages plus the library's sandbox fields (`changeLog`, `sandboxHead`). */
// Delta channels: a checkpoint stores the messages and change records its step added, not the
// whole history again (Studio threads get long).
export const StudioActorState = new StateSchema({
  messages: MessagesDeltaValue,
  ...sandboxDeltaStateFields,
});

/**
 * Where the filesystem server's tools take paths. Listed explicitly so the path-rewrite
 * middleware maps the model's logical paths (`notes.md`) into the sandbox and back.
 */
export const FILESYSTEM_PATH_OVERRIDES: Record<string, { pathArguments: string[] }> = {
  read_file: { pathArguments: ['path'] },
  read_text_file: { pathArguments: ['path'] },
  read_media_file: { pathArguments: ['path'] },
  read_multiple_files: { pathArguments: ['paths[]'] },
  write_file: { pathArguments: ['path'] },
  edit_file: { pathArguments: ['path'] },
  create_directory: { pathArguments: ['path'] },
  list_directory: { pathArguments: ['path'] },
  list_directory_with_sizes: { pathArguments: ['path'] },
  directory_tree: { pathArguments: ['path'] },
  move_file: { pathArguments: ['source', 'destination'] },
  search_files: { pathArguments: ['path'] },
  get_file_info: { pathArguments: ['path'] },
};

/** Name of the MCP server in tool ids (`mcp:fs/write_file`). */
export const STUDIO_SERVER_NAME = 'fs';

/** What the scripted model understands: `write <path>: <content>` (anything else writes notes.md). */
export function parseWriteRequest(text: string): { path: string; content: string } {
  const match = /^\s*write\s+([^\s:]+)\s*:\s*([\s\S]*)$/i.exec(text);
  if (match) return { path: match[1]!, content: match[2]! };
  return { path: 'notes.md', content: text };
}

function messageText(message: BaseMessage | undefined): string {
  return message === undefined ? '' : message.text;
}

/**
 * The deterministic "model": on a user turn it calls `write_file` with a logical path (the
 * path-rewrite middleware maps it into the sandbox); once the tool answered, it replies with
 * what happened. Pure function of the messages, so it works under concurrency and across runs.
 */
export function scriptedReply(
  messages: readonly BaseMessage[],
  writeToolName: string,
): BaseMessage {
  const last = messages.at(-1);
  if (last !== undefined && ToolMessage.isInstance(last)) {
    const call = [...messages]
      .reverse()
      .find(
        (message): message is AIMessage =>
          AIMessage.isInstance(message) && (message.tool_calls?.length ?? 0) > 0,
      );
    const written = call?.tool_calls?.[0]?.args['path'];
    if (last.status === 'error') return new AIMessage(`The write failed: ${last.text}`);
    return new AIMessage(`Wrote ${typeof written === 'string' ? written : 'the file'}.`);
  }
  const request = parseWriteRequest(messageText(last));
  return new AIMessage({
    content: '',
    tool_calls: [
      {
        id: `call_${messages.length}`,
        name: writeToolName,
        args: { ...request },
        type: 'tool_call',
      },
    ],
  });
}

/** Options of {@link createStudioActor}. */
export interface StudioActorOptions {
  /**
   * The git repo the sandbox is made from. Default: a fresh temp repo (with one committed
   * README) made here and removed by `close()`.
   */
  source?: string;
  /** Where the sandbox folder goes (default: next to the temp repo, or `os.tmpdir()`). */
  baseDir?: string;
  /** Sandbox id (its folder and ref names); default random. */
  sandboxId?: string;
  /**
   * A janitor (`createStudioGraph`'s `studio.janitor`, or `startStudioJanitor()`) told about the
   * server, the sandbox and the temp folders, so they go even if this process dies without
   * `close()` (the dev server's way of stopping). Default: none.
   */
  janitor?: StudioJanitor;
  /**
   * A safety policy for the tools (as written in an actor's `policy:` block, e.g.
   * `{ mode: 'ask' }`). When set, the policy middleware wraps the tools outermost (before path
   * rewriting, so the approval preview shows logical paths), approvals are LangGraph interrupts,
   * fingerprints are pinned in memory, and the graph sends each tool call to its own task so a
   * resumed approval does not re-run its siblings. Default: no policy (every call runs).
   */
  policy?: PolicyInput;
  /** The compiled graph's name (default `actor`). */
  name?: string;
  signal?: AbortSignal;
}

/**
 * The dev-server entry modules' settings, from the environment: `$AGENTS_STUDIO_SOURCE` (the git
 * repo to sandbox; default a fresh temp repo), `$AGENTS_STUDIO_BASE_DIR` (where sandbox folders
 * go) and `$AGENTS_STUDIO_SANDBOX_ID` (the sandbox id; tests use these to find the files).
 * Every graph module of one server gets its own sandbox, so a module other than `actor` passes an
 * `idSuffix` that is appended to the id (two sandboxes of one repo cannot share an id).
 */
export function studioOptionsFromEnv(
  env: NodeJS.ProcessEnv = process.env,
  { idSuffix }: { idSuffix?: string } = {},
): Pick<StudioActorOptions, 'source' | 'baseDir' | 'sandboxId'> {
  const read = (name: string): string | undefined => {
    const value = env[name];
    return value === undefined || value === '' ? undefined : value;
  };
  const source = read('AGENTS_STUDIO_SOURCE');
  const baseDir = read('AGENTS_STUDIO_BASE_DIR');
  const id = read('AGENTS_STUDIO_SANDBOX_ID');
  const sandboxId = id === undefined || idSuffix === undefined ? id : `${id}-${idSuffix}`;
  return {
    ...(source === undefined ? {} : { source }),
    ...(baseDir === undefined ? {} : { baseDir }),
    ...(sandboxId === undefined ? {} : { sandboxId }),
  };
}

/** A started reference actor: the graph and everything it owns. */
export interface StudioActor extends AsyncDisposable {
  /** Uncompiled graph, to compile with your own checkpointer. */
  builder: ReturnType<typeof buildGraph>;
  /** Compiled without a checkpointer (the dev server injects its own). */
  graph: ReturnType<ReturnType<typeof buildGraph>['compile']>;
  sandbox: RunSandbox;
  server: ManagedServer;
  tools: StructuredTool[];
  /** The parsed policy when the `policy` option was given. */
  policy: Policy | undefined;
  /** Fingerprints pinned at first approval (in memory), when there is a policy. */
  pins: PinStore | undefined;
  /** Temp folders this actor made (removed by `close()`, or by the janitor if given). */
  tempDirs: string[];
  /** Stops the server, removes the sandbox and temp folders. Idempotent. */
  close(): Promise<void>;
}

const TEMP_PREFIX = 'agents-studio-';
const OWNER_FILE = 'owner.pid';

function isProcessAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * Removes temp folders (repo + sandbox) left by earlier studio processes that were killed before
 * their exit handler ran (the dev server's `tsx` parent SIGKILLs a slow child). Only folders
 * whose owner pid file names a dead process are touched. Returns the removed paths.
 */
export function sweepStaleStudioDirs(baseDir: string = tmpdir()): string[] {
  const removed: string[] = [];
  for (const name of readdirSync(baseDir)) {
    if (!name.startsWith(TEMP_PREFIX)) continue;
    const dir = path.join(baseDir, name);
    let owner: number;
    try {
      owner = Number(readFileSync(path.join(dir, OWNER_FILE), 'utf8'));
    } catch {
      continue; // Not ours, or still being made.
    }
    if (!Number.isInteger(owner) || owner <= 0 || isProcessAlive(owner)) continue;
    rmSync(dir, { recursive: true, force: true });
    removed.push(dir);
  }
  return removed;
}

/**
 * Makes a temp git repo holding one committed README, in a fresh `agents-studio-*` folder that
 * records this process as its owner (see {@link sweepStaleStudioDirs}); returns the repo path.
 */
export function createTempRepo(): string {
  const dir = realpathSync(mkdtempSync(path.join(tmpdir(), TEMP_PREFIX)));
  writeFileSync(path.join(dir, OWNER_FILE), String(process.pid));
  const repo = path.join(dir, 'repo');
  const git = (...args: string[]): void => {
    execFileSync('git', args, {
      cwd: repo,
      stdio: 'ignore',
      env: {
        PATH: process.env['PATH'] ?? '/usr/bin:/bin',
        GIT_AUTHOR_NAME: 'studio',
        GIT_AUTHOR_EMAIL: 'studio@localhost',
        GIT_COMMITTER_NAME: 'studio',
        GIT_COMMITTER_EMAIL: 'studio@localhost',
        GIT_CONFIG_NOSYSTEM: '1',
        HOME: dir,
      },
    });
  };
  execFileSync('git', ['init', '-q', '-b', 'main', repo], { stdio: 'ignore' });
  writeFileSync(path.join(repo, 'README.md'), '# studio sandbox source\n');
  git('add', 'README.md');
  git('commit', '-q', '-m', 'initial');
  return repo;
}

function buildGraph(
  tools: StructuredTool[],
  writeToolName: string,
  sandbox: RunSandbox,
  perTask: boolean,
) {
  async function agent(state: typeof StudioActorState.State): Promise<{ messages: BaseMessage[] }> {
    // A fresh fake per call: a shared queue would run dry across runs of a long-lived server.
    const model = fakeModel()
      .respond((messages: BaseMessage[]) => scriptedReply(messages, writeToolName))
      .bindTools(tools);
    return { messages: [await model.invoke(state.messages)] };
  }
  function route(state: typeof StudioActorState.State): 'tools' | typeof END {
    const last = state.messages.at(-1);
    return last !== undefined && AIMessage.isInstance(last) && (last.tool_calls?.length ?? 0) > 0
      ? 'tools'
      : END;
  }
  return (
    new StateGraph(StudioActorState)
      .addNode('agent', agent)
      .addNode('tools', createTrackedToolNode(tools, { sandbox }))
      .addEdge(START, 'agent')
      // With approvals, one task per call: a paused call re-runs alone on resume (see
      // `routeToolCallsPerTask`); without, the plain edge keeps the classic ToolNode shape.
      .addConditionalEdges('agent', perTask ? routeToolCallsPerTask() : route, ['tools', END])
      .addEdge('tools', 'agent')
  );
}

/**
 * Starts the reference actor on an `AgentsRuntime`: sandbox (a repository of its own made from
 * `source`), the filesystem MCP server rooted at the sandbox (confined like an actor's servers),
 * its tools wrapped with path rewriting + change tracking, and the graph. The caller owns the
 * result and must `close()` it (the runtime's one disposal order). If any step fails, what was
 * started is closed before the error is rethrown.
 */
export async function createStudioActor(options: StudioActorOptions = {}): Promise<StudioActor> {
  const tempDirs: string[] = [];
  const janitor = options.janitor;
  // Git sandbox, servers confined where the host can (auto), no checkpoints: the dev server
  // (or the caller compiling `builder`) brings its own.
  const runtime = await createAgentsRuntime({
    owner: 'the studio actor',
    sandbox: { confine: 'auto' },
    checkpointer: false,
  });
  let closing: Promise<void> | undefined;
  const close = (): Promise<void> => (closing ??= runtime.close('Closing the studio actor'));
  try {
    let source = options.source;
    if (source === undefined) {
      sweepStaleStudioDirs();
      source = createTempRepo();
      tempDirs.push(path.dirname(source));
      // Removed last, after the sandbox made inside it.
      removeOnClose(runtime, path.dirname(source));
      janitor?.trackPath(path.dirname(source));
    }
    const baseDir =
      options.baseDir ?? (options.source === undefined ? path.dirname(source) : undefined);
    const sandbox = await runtime.createSandbox({
      source,
      ...(baseDir === undefined ? {} : { baseDir }),
      ...(options.sandboxId === undefined ? {} : { id: options.sandboxId }),
      ...(options.signal === undefined ? {} : { signal: options.signal }),
    });
    janitor?.trackSandbox(sandbox);
    const sandboxRoot = sandbox.root;
    const require = createRequire(import.meta.url);
    const serverScript = require.resolve('@modelcontextprotocol/server-filesystem/dist/index.js');
    const server = await runtime.startServer(
      {
        name: STUDIO_SERVER_NAME,
        transport: 'stdio',
        command: process.execPath,
        args: [serverScript, sandboxRoot],
        trusted: false,
        overrides: FILESYSTEM_PATH_OVERRIDES,
      },
      {
        cwd: sandboxRoot,
        roots: () => [sandboxRoot],
        ...(options.signal === undefined ? {} : { signal: options.signal }),
        // Every (re)start of the server gets a new process group; the janitor must know each one.
        ...(janitor === undefined ? {} : { beforeStart: (made) => janitor.trackServers(made) }),
      },
    );
    if (server.pid !== undefined) janitor?.trackProcessGroup(server.pid);
    const policy =
      options.policy === undefined ? undefined : parsePolicy(options.policy, 'the studio actor');
    const pins = policy === undefined ? undefined : createMemoryPinStore();
    // The library's one middleware order: the policy outside path rewriting (the human approves
    // the call as the model wrote it, with logical paths; a rejected call never reaches the
    // sandbox), change tracking innermost.
    const pipeline = createToolPipeline({
      ...(policy === undefined
        ? {}
        : {
            policy: {
              policy,
              name: `actor "${options.name ?? 'actor'}"`,
              approve: createInterruptApprover(),
              ...(pins === undefined ? {} : { pins }),
            },
          }),
      sandbox,
    });
    // The live, governed tools: the server's tools (refreshed on its list_changed) through the
    // pipeline.
    const registry = createToolRegistry();
    registry.replaceGroup(server.name, server.entries());
    const stopFollowing = server.on('tools-changed', () =>
      registry.replaceGroup(server.name, server.entries()),
    );
    runtime.defer(stopFollowing);
    const { tools } = await runtime.toolSet({ registry, pipeline });
    const writeTool = server
      .entries()
      .find((entry) => entry.descriptor.originalName === 'write_file');
    if (writeTool === undefined) throw new Error('the filesystem server offers no write_file tool');
    const builder = buildGraph(tools, writeTool.descriptor.name, sandbox, policy !== undefined);
    const graph = builder.compile();
    graph.name = options.name ?? 'actor';
    return {
      builder,
      graph,
      sandbox,
      server,
      tools,
      policy,
      pins,
      tempDirs,
      close,
      [Symbol.asyncDispose]: close,
    };
  } catch (error) {
    await close().catch(() => undefined);
    throw error;
  }
}
