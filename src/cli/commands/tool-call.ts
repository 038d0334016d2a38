import { readFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { AgentsError, AgentsErrorCode } from '../../errors.js';
import type { ToolResult } from '../../core/tool-descriptor.js';
import type { Confinement } from '../../confinement/confinement.js';
import { parseCommandLine, requirePositional, storeOf, usageError } from '../args.js';
import type { Command, CommandContext } from '../command.js';
import { printJson, println } from '../output.js';
import { ExitCode } from '../exit-codes.js';
import { ResultMetaKey } from '../../core/tool-descriptor.js';
import { PATH_REFUSED_META_KEY } from '../../pipeline/path-rewrite.js';
import { createProgress } from '../progress.js';
import { describeServerStart } from '../../servers/server-start-line.js';

const USAGE = `Usage: agents tool call SERVER/TOOL [--args JSON] [--policy ask|auto|read-only]

Calls one tool of a registered server by hand (as MCP Inspector does), through the same policy
and audit log as an actor's calls: a write-class tool asks for approval on this terminal in
ask mode, and the call is recorded in <workspace>/audit.jsonl (\`agents audit\` shows it).
The server runs confined (bubblewrap) with the project as its working folder and only writable
place: a write lands in the project; the project's .git and the workspace are hidden, as are the
state folder and your home folder. To work on a copy instead, run an actor (its own sandbox).

Options:
  --args JSON     the tool's arguments, one JSON object (default {}); see them with
                  \`agents tool show mcp:SERVER/TOOL\`
  --policy MODE   ask (default), auto or read-only
  --json          print the whole result (content, structuredContent, _meta) as JSON

Exit code 6 when the tool answered with an error, 8 when the policy or the person refused the
call, 7 when an argument named a path outside the project.`;

/**
 * The documented exit code of a call's result: refused by the policy or the person (8), a path
 * refused by the sandbox (7), an error answer of the tool (6), else 0.
 */
export function exitCodeOfResult(result: ToolResult): ExitCode {
  if (result.isError !== true) return ExitCode.Ok;
  const policy = result._meta?.[ResultMetaKey.Policy] as { outcome?: string } | undefined;
  if (policy?.outcome === 'rejected' || policy?.outcome === 'denied') return ExitCode.Policy;
  if (result._meta?.[PATH_REFUSED_META_KEY] !== undefined) return ExitCode.Sandbox;
  return ExitCode.Tool;
}

/**
 * The confinement of a server called by hand: confined like any server (nothing starts
 * unconfined), the project writable since the person asked for this call on it, and everything a
 * tool could use against the host hidden: the project's `.git` (config, hooks), the workspace,
 * the state folder and the home folder.
 */
async function toolCallConfinement(
  store: ReturnType<typeof storeOf>,
  context: CommandContext,
): Promise<Confinement> {
  const [
    { resolveConfinement, reportUnconfinedOnce },
    { confinementScope },
    { inspectionConfineMode },
  ] = await Promise.all([
    import('../../confinement/confinement.js'),
    import('../../runtime/confinement-scope.js'),
    import('../../actors/inspection-servers.js'),
  ]);
  const scope = confinementScope({
    sandboxRoot: store.projectDir,
    projectDir: store.projectDir,
    workspaceRoot: store.root,
  });
  // The project's git folders: `.git`, and in a linked worktree (`.git` a gitfile) also the
  // folders it names, the worktree's git dir and the main repository's (issue 35, item 8).
  const gitFolders = [join(store.projectDir, '.git'), ...(await linkedGitDirs(store.projectDir))];
  const confinement = resolveConfinement(
    { mode: await inspectionConfineMode(store) },
    {
      ...scope,
      hidden: [...(scope.hidden ?? []), ...gitFolders],
      guarded: [...(scope.guarded ?? []), ...gitFolders],
    },
  );
  const { warnTo } = await import('./server.js');
  reportUnconfinedOnce(confinement, warnTo(context.stderr));
  return confinement;
}

/**
 * The git dir and common dir a linked worktree's `.git` file names (`gitdir: PATH`, and that
 * folder's `commondir`), or none when `.git` is not such a file. Read, never run: no git here.
 */
async function linkedGitDirs(projectDir: string): Promise<string[]> {
  const gitfile = await readFile(join(projectDir, '.git'), 'utf8').catch(() => undefined);
  const match = gitfile === undefined ? null : /^gitdir: (.+)$/m.exec(gitfile);
  if (match === null) return [];
  const gitDir = resolve(projectDir, match[1]!.trim());
  const common = await readFile(join(gitDir, 'commondir'), 'utf8').catch(() => undefined);
  return common === undefined ? [gitDir] : [gitDir, resolve(gitDir, common.trim())];
}

/** The actor name audit entries of hand-made calls carry. */
const AUDIT_ACTOR = 'agents tool call';

function parseTarget(value: string): { server: string; tool: string } {
  const match = /^(?:mcp:)?([^/]+)\/(.+)$/.exec(value);
  if (!match) throw usageError(`"${value}" is not SERVER/TOOL (e.g. fs/read_file).`, USAGE);
  return { server: match[1]!, tool: match[2]! };
}

function parseJsonArgs(text: string | undefined): Record<string, unknown> {
  if (text === undefined) return {};
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    throw usageError(
      `--args is not JSON (${(error as Error).message}); quote it for the shell: --args '{"path":"a.txt"}'.`,
      USAGE,
      error,
    );
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed))
    throw usageError('--args must be one JSON object, e.g. \'{"path":"a.txt"}\'.', USAGE);
  return parsed as Record<string, unknown>;
}

function textOf(result: ToolResult): string {
  return result.content
    .map((block) => (block.type === 'text' ? block.text : `[${block.type}]`))
    .join('\n');
}

/** `agents tool call SERVER/TOOL --args JSON`: one governed call by hand. */
export const toolCallCommand: Command = {
  path: ['tool', 'call'],
  usage: USAGE,
  async run(context: CommandContext) {
    const { values, positionals } = parseCommandLine(
      context.argv,
      { args: { type: 'string' }, policy: { type: 'string' }, json: { type: 'boolean' } },
      USAGE,
    );
    const { server: serverName, tool: toolName } = parseTarget(
      requirePositional(positionals, 'SERVER/TOOL', USAGE),
    );
    const args = parseJsonArgs(values.args);
    const mode = values.policy ?? 'ask';
    if (mode !== 'ask' && mode !== 'auto' && mode !== 'read-only')
      throw usageError(`--policy takes ask, auto or read-only, got "${mode}".`, USAGE);
    const json = context.json || values.json === true;
    const store = storeOf(context);
    const config = await store.get('server', serverName);
    // Loaded on use: the server, registry and pipeline bring the SDK and LangChain.
    const [
      { createAgentsRuntime },
      { createServerSkillRegistry },
      { createToolPipeline },
      { auditLogPath, createAuditLog },
      { parsePolicy },
      { createPinStore, DEFAULT_PIN_FILE },
      { promptForApproval },
    ] = await Promise.all([
      import('../../runtime/agents-runtime.js'),
      import('../../skills/skill-registry.js'),
      import('../../pipeline/tool-pipeline.js'),
      import('../../policy/audit-log.js'),
      import('../../config/policy-schema.js'),
      import('../../policy/pins.js'),
      import('../../policy/terminal-approval.js'),
    ]);
    const confinement = await toolCallConfinement(store, context);
    // The one assembly (see `runtime/`): closing it stops the server.
    await using runtime = await createAgentsRuntime({
      owner: `server "${config.name}"`,
      checkpointer: false,
    });
    const auditLog = createAuditLog(auditLogPath(context.workspace));
    try {
      const server = await createProgress(context.stderr).step(
        `starting ${describeServerStart(config)} and listing its tools`,
        () =>
          runtime.startServer(config, {
            cwd: store.projectDir,
            confinement,
            signal: context.signal,
          }),
      );
      const registry = await createServerSkillRegistry(
        config,
        server,
        { kind: 'server', skill: 'tool-call', serverName },
        store.projectDir,
      );
      try {
        const entry = registry
          .entries()
          .find((candidate) => candidate.descriptor.originalName === toolName);
        if (!entry) {
          const names = registry.entries().map((candidate) => candidate.descriptor.originalName);
          throw new AgentsError(
            AgentsErrorCode.ToolNotFound,
            `Server "${serverName}" has no tool "${toolName}"; it has: ${names.join(', ') || 'none'}.`,
            { details: { serverName, toolName } },
          );
        }
        const pipeline = createToolPipeline({
          audit: { log: auditLog, actor: AUDIT_ACTOR },
          policy: {
            policy: parsePolicy({ mode }, '--policy'),
            name: AUDIT_ACTOR,
            pins: await createPinStore(join(store.root, DEFAULT_PIN_FILE)),
            // The person who typed the command answers, on this terminal.
            approve: (preview) =>
              promptForApproval(preview, {
                input: context.stdin,
                output: context.stderr,
                signal: context.signal,
              }),
          },
        });
        const result = await pipeline.wrap(entry)({
          descriptor: entry.descriptor,
          args,
          context: { signal: context.signal },
        });
        if (json) printJson(context.stdout, result);
        else println(context.stdout, textOf(result));
        return exitCodeOfResult(result);
      } finally {
        await registry.close();
      }
    } finally {
      await auditLog[Symbol.asyncDispose]();
    }
  },
};
