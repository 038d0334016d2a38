/**
 * The reference actor graph behind `graphs/actor.ts` (the module the LangGraph dev server loads),
 * built only from the library's public pieces: a real MCP server (`@modelcontextprotocol/server-filesystem`
 * over stdio) whose tools run in a git-worktree sandbox, with path rewriting and change tracking,
 * so every checkpoint records the file state it belongs to (`changeLog`, `sandboxHead`).
 *
 * Importing this module starts nothing; {@link createStudioActor} does.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { AIMessage, ToolMessage, type BaseMessage } from '@langchain/core/messages';
import { fakeModel } from '@langchain/core/testing';
import type { StructuredTool } from '@langchain/core/tools';
import { END, MessagesValue, START, StateGraph, StateSchema } from '@langchain/langgraph';
import { toStructuredTool } from '../src/mcp/structured-tool.js';
import { createChangeTrackingMiddleware } from '../src/middleware/change-tracking.js';
import { createPathRewriteMiddleware } from '../src/middleware/path-rewrite.js';
import { sandboxStateFields } from '../src/middleware/state.js';
import { createTrackedToolNode } from '../src/middleware/tool-node.js';
import { composeMiddleware } from '../src/middleware/types.js';
import { createSandbox, type LocalSandbox } from '../src/sandbox/local-sandbox.js';
import { createManagedServer, type ManagedServer } from '../src/servers/managed-server.js';

/** The graph state: chat messages plus the library's sandbox fields (`changeLog`, `sandboxHead`). */
export const StudioActorState = new StateSchema({ messages: MessagesValue, ...sandboxStateFields });

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
export function scriptedReply(messages: readonly BaseMessage[], writeToolName: string): BaseMessage {
  const last = messages.at(-1);
  if (last !== undefined && ToolMessage.isInstance(last)) {
    const call = [...messages]
      .reverse()
      .find((message): message is AIMessage => AIMessage.isInstance(message) && (message.tool_calls?.length ?? 0) > 0);
    const written = call?.tool_calls?.[0]?.args['path'];
    if (last.status === 'error') return new AIMessage(`The write failed: ${last.text}`);
    return new AIMessage(`Wrote ${typeof written === 'string' ? written : 'the file'}.`);
  }
  const request = parseWriteRequest(messageText(last));
  return new AIMessage({
    content: '',
    tool_calls: [
      { id: `call_${messages.length}`, name: writeToolName, args: { ...request }, type: 'tool_call' },
    ],
  });
}

/** Options of {@link createStudioActor}. */
export interface StudioActorOptions {
  /**
   * The git repo the sandbox is a worktree of. Default: a fresh temp repo (with one committed
   * README) made here and removed by `close()`.
   */
  source?: string;
  /** Where the sandbox folder goes (default: next to the temp repo, or `os.tmpdir()`). */
  baseDir?: string;
  /** Sandbox id (its folder and ref names); default random. */
  sandboxId?: string;
  signal?: AbortSignal;
}

/** A started reference actor: the graph and everything it owns. */
export interface StudioActor extends AsyncDisposable {
  /** Uncompiled graph, to compile with your own checkpointer. */
  builder: ReturnType<typeof buildGraph>;
  /** Compiled without a checkpointer (the dev server injects its own). */
  graph: ReturnType<ReturnType<typeof buildGraph>['compile']>;
  sandbox: LocalSandbox;
  server: ManagedServer;
  tools: StructuredTool[];
  /** Temp folders this actor made (removed by `close()`, and by `closeSync()`). */
  tempDirs: string[];
  /** Stops the server, removes the sandbox and temp folders. Idempotent. */
  close(): Promise<void>;
  /**
   * Best-effort synchronous cleanup for `process.on('exit')`, where nothing async can run: removes
   * the sandbox worktree, its private refs and folder (as `sandbox.close()` would) and the temp
   * folders. The server's process group is killed by the stdio transport's own exit hook.
   */
  closeSync(): void;
}

/** Makes a temp git repo holding one committed README; returns its realpath. */
export function createTempRepo(): string {
  const dir = realpathSync(mkdtempSync(path.join(tmpdir(), 'agents-studio-')));
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

function gitSync(cwd: string, args: string[], input?: string): string {
  return execFileSync('git', args, {
    cwd,
    encoding: 'utf8',
    stdio: ['pipe', 'pipe', 'ignore'],
    env: { PATH: process.env['PATH'] ?? '/usr/bin:/bin', GIT_TERMINAL_PROMPT: '0' },
    ...(input === undefined ? {} : { input }),
  });
}

/**
 * Synchronous twin of `sandbox.close()` for exit handlers (the dev server exits through
 * `process.exit` right after SIGINT, so an async close would be cut short).
 * TODO: move into the sandbox module as `closeSync()` so graphs need no git of their own.
 */
function removeSandboxSync(sandbox: LocalSandbox): void {
  const attempt = (work: () => void): void => {
    try {
      work();
    } catch {
      // Best effort: `pruneSandboxes()` removes whatever is left.
    }
  };
  // Files first: it is quick and needs no child process, so it completes even when the process
  // is killed moments later; the git bookkeeping after it is a bonus.
  attempt(() => rmSync(path.dirname(sandbox.runDir), { recursive: true, force: true }));
  if (sandbox.kind === 'worktree') {
    attempt(() => void gitSync(sandbox.source, ['worktree', 'prune']));
    attempt(() => {
      const refs = gitSync(sandbox.source, ['for-each-ref', '--format=delete %(refname)', `refs/agents/${sandbox.id}/`]);
      if (refs.trim() !== '') gitSync(sandbox.source, ['update-ref', '--stdin'], refs);
    });
  }
}

function buildGraph(tools: StructuredTool[], writeToolName: string, sandbox: LocalSandbox) {
  async function agent(state: typeof StudioActorState.State): Promise<{ messages: BaseMessage[] }> {
    // A fresh fake per call: a shared queue would run dry across runs of a long-lived server.
    const model = fakeModel()
      .respond((messages: BaseMessage[]) => scriptedReply(messages, writeToolName))
      .bindTools(tools);
    return { messages: [await model.invoke(state.messages)] };
  }
  function route(state: typeof StudioActorState.State): 'tools' | typeof END {
    const last = state.messages.at(-1);
    return last !== undefined && AIMessage.isInstance(last) && (last.tool_calls?.length ?? 0) > 0 ? 'tools' : END;
  }
  return new StateGraph(StudioActorState)
    .addNode('agent', agent)
    .addNode('tools', createTrackedToolNode(tools, { sandbox }))
    .addEdge(START, 'agent')
    .addConditionalEdges('agent', route, ['tools', END])
    .addEdge('tools', 'agent');
}

/**
 * Starts the reference actor: sandbox (a detached worktree of `source`), the filesystem MCP
 * server rooted at the sandbox, its tools wrapped with path rewriting + change tracking, and the
 * graph. The caller owns the result and must `close()` it. If any step fails, what was started
 * is closed before the error is rethrown.
 */
export async function createStudioActor(options: StudioActorOptions = {}): Promise<StudioActor> {
  const tempDirs: string[] = [];
  let sandbox: LocalSandbox | undefined;
  let server: ManagedServer | undefined;
  let closedSync = false;
  const closeSync = (): void => {
    if (closedSync) return;
    closedSync = true;
    if (sandbox !== undefined && closing === undefined) removeSandboxSync(sandbox);
    for (const dir of tempDirs) rmSync(dir, { recursive: true, force: true });
  };
  let closing: Promise<void> | undefined;
  const close = (): Promise<void> => {
    closing ??= (async () => {
      const failures: unknown[] = [];
      for (const step of [() => server?.close(), () => sandbox?.close()]) {
        try {
          await step();
        } catch (error) {
          failures.push(error);
        }
      }
      closedSync = true;
      for (const dir of tempDirs) rmSync(dir, { recursive: true, force: true });
      if (failures.length > 0) throw new AggregateError(failures, 'closing the studio actor failed');
    })();
    return closing;
  };
  try {
    let source = options.source;
    if (source === undefined) {
      source = createTempRepo();
      tempDirs.push(path.dirname(source));
    }
    const baseDir = options.baseDir ?? (options.source === undefined ? path.dirname(source) : undefined);
    sandbox = await createSandbox({
      source,
      ...(baseDir === undefined ? {} : { baseDir }),
      ...(options.sandboxId === undefined ? {} : { id: options.sandboxId }),
      ...(options.signal === undefined ? {} : { signal: options.signal }),
    });
    const sandboxRoot = sandbox.root;
    const require = createRequire(import.meta.url);
    const serverScript = require.resolve('@modelcontextprotocol/server-filesystem/dist/index.js');
    server = createManagedServer(
      {
        name: STUDIO_SERVER_NAME,
        transport: 'stdio',
        command: process.execPath,
        args: [serverScript, sandboxRoot],
        trusted: false,
        overrides: FILESYSTEM_PATH_OVERRIDES,
      },
      { cwd: sandboxRoot, roots: () => [sandboxRoot] },
    );
    await server.start(options.signal === undefined ? {} : { signal: options.signal });
    const middleware = [createPathRewriteMiddleware(sandbox.paths), createChangeTrackingMiddleware(sandbox)];
    const tools = server.entries().map((entry) =>
      toStructuredTool(
        entry.descriptor,
        composeMiddleware(middleware, (request) => entry.execute(request.args, request.context)),
      ),
    );
    const writeTool = server.entries().find((entry) => entry.descriptor.originalName === 'write_file');
    if (writeTool === undefined) throw new Error('the filesystem server offers no write_file tool');
    const builder = buildGraph(tools, writeTool.descriptor.name, sandbox);
    const graph = builder.compile();
    graph.name = 'actor';
    return {
      builder,
      graph,
      sandbox,
      server,
      tools,
      tempDirs,
      close,
      closeSync,
      [Symbol.asyncDispose]: close,
    };
  } catch (error) {
    await close().catch(() => undefined);
    throw error;
  }
}
