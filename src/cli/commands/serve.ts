import { Readable, Writable } from 'node:stream';
import { AgentsError, AgentsErrorCode, errorMessage } from '../../errors.js';
import type { ToolMiddleware } from '../../core/tool-middleware.js';
import type { PolicyMode } from '../../config/policy-schema.js';
import type { ToolEntry } from '../../core/tool-descriptor.js';
import type { ServedToolSource } from '../../serving/served-tool-set.js';
import { parseCommandArgs, parsePositiveInteger, usageError } from '../args.js';
import type { Command, CommandContext } from '../command.js';
import { sameDestination } from '../output.js';

/** What `agents serve` was asked to expose. */
export interface ServeTarget {
  kind: 'skill' | 'actor';
  name: string;
}

/** How to activate the target: `--thread`, `--keep-sandbox`, `--policy`. */
export interface ServeTargetOptions {
  /** Open this thread's sandbox (actors only; kept after exit, like `agents actor run --thread`). */
  threadId?: string;
  /** Leave the sandbox folder in place after exit. */
  keepSandbox: boolean;
  /** What a new sandbox starts from (`--from`; default the actor's `sandbox.from`, worktree). */
  from?: string;
  /** Replaces the mode of the target's safety policy (its rules stay). */
  policyMode?: PolicyMode;
}

/** Where a served target's tools write (the stderr banner prints it). */
export interface ServeSandboxInfo {
  /** The sandbox root, or undefined when the target runs without a sandbox. */
  root: string | undefined;
  /** True when the sandbox outlives `agents serve` (a thread's sandbox, or `--keep-sandbox`). */
  kept: boolean;
  /** The thread the sandbox belongs to. */
  threadId?: string;
  /** Why a requested thread got no lasting sandbox (e.g. a memory checkpointer). */
  note?: string;
  /** Where tools work without a sandbox. */
  workDir?: string;
}

/**
 * The tools of an activated skill or actor, ready to serve. `close()` stops whatever the
 * activation started (upstream servers, sandbox); `agents serve` calls it after the MCP side
 * has shut down.
 */
export interface ServeResolution {
  entries: ServedToolSource;
  /** The same middleware chain a graph of this actor uses (path rewrite, change tracking, policy). */
  middleware?: readonly ToolMiddleware[];
  /** Change source for a plain `entries` function (e.g. the server manager's `tools-changed`). */
  subscribe?: (listener: () => void) => () => void;
  /** False hides a tool whose upstream server is down. */
  isAvailable?: (entry: ToolEntry) => boolean;
  /** Server name announced in `initialize` (default `agents-<kind>-<name>`). */
  serverName?: string;
  /** The sandbox the tools work in, printed on stderr at start. */
  sandbox?: ServeSandboxInfo;
  /** The mode of the safety policy in force; `ask` gets a warning at start. */
  policyMode?: PolicyMode;
  /** Running upstream servers (with the pid of stdio ones), printed on stderr at start. */
  upstream?: ReadonlyArray<{ serverName: string; pid?: number }>;
  close(): Promise<void>;
}

/** Activates a skill or actor for serving; throws `SKILL_NOT_FOUND` / `ACTOR_NOT_FOUND`. */
export type ServeTargetResolver = (
  target: ServeTarget,
  context: CommandContext,
  options: ServeTargetOptions,
) => Promise<ServeResolution>;

/** Options of {@link createServeCommand}. */
export interface ServeCommandOptions {
  /** Turns `--skill NAME` / `--actor NAME` into served tools (the actor layer provides it). */
  resolve: ServeTargetResolver;
  /** Reads environment variables (default `process.env`); only `AGENTS_SERVE_TOKEN` is read. */
  env?: Record<string, string | undefined>;
}

/** Parsed `agents serve` options. */
export interface ServeCommandArgs {
  target: ServeTarget;
  transport: 'stdio' | 'http';
  host?: string;
  port?: number;
  token?: string;
  allowRemote: boolean;
  maxBodyBytes?: number;
  maxSessions?: number;
  sessionIdleMs?: number;
  threadId?: string;
  keepSandbox: boolean;
  from?: string;
  policyMode?: PolicyMode;
}

const USAGE = `Usage: agents serve (--skill NAME | --actor NAME) [options]

Serves a skill's or an actor's tools as an MCP server, through the same chain a graph uses:
sandbox, path rewriting (clients pass paths relative to the sandbox root), change tracking
(each result that changed files carries the change record), safety policy, audit log, and
capability annotations. An actor runs with its own config; a skill runs like a one-skill actor
with the default settings: a sandbox made from the project folder, the default policy (mode ask).
The upstream MCP servers start in the sandbox root, so writes land in the sandbox, not in the
project (unless the actor turns its sandbox off); the sandbox path is printed on stderr at start.

When the policy wants a call approved (mode ask: every write-class tool), the MCP client is
asked with elicitation/create (approve / reject). A client without elicitation support gets an
error result instead: allow such tools with policy rules or serve with --policy auto.

What an upstream server asks of its client while its tool runs (sampling/createMessage,
elicitation/create) and its log messages go to the MCP client that made the call, when that
client declared the capability; the actor's policy (policy.clientRequests) and audit log see
each request.

Options:
  --skill NAME           serve the tools of this skill
  --actor NAME           serve the tools of this actor (all its skills)
  --thread ID            (--actor) work in this thread's sandbox: made on first use, reopened
                         later, kept after exit (agents sandbox diff|checkpoints --thread ID)
  --from WHAT            what a new sandbox starts from: worktree (default: your files as they
                         are now, uncommitted edits included), head (the last commit), or a
                         branch, tag or sha
  --keep-sandbox         leave the sandbox folder in place after exit (default: a sandbox
                         without --thread is removed on exit)
  --policy MODE          replace the policy mode: read-only, ask or auto (rules stay)
  --transport T          stdio (default; for hosts that spawn the server) or http
  --host H               HTTP interface (default 127.0.0.1)
  --port N               HTTP port (default 0: pick a free one and print the URL)
                         The URL is printed on stderr as "MCP endpoint: URL", and on stdout
                         too unless stdout is a terminal (with --json: {"url": "..."} there)
  --token T              require "Authorization: Bearer T" over HTTP
                         (or set AGENTS_SERVE_TOKEN, which keeps it out of the process list)
  --allow-remote         allow a non-loopback --host (needs a token as well)
  --max-body BYTES       request size cap: an HTTP body (default 4194304; larger gets 413) or
                         one stdio message (default 10485760; larger gets a JSON-RPC error)
  --max-sessions N       HTTP sessions kept at once (default 64); a new client beyond it
                         ends the least recently used idle session (503 only if all are busy)
  --session-idle SECONDS end an HTTP session after this long without a request (default 1800)

Over stdio, stdout carries only JSON-RPC and logs go to stderr; the server exits when stdin
closes. SIGINT/SIGTERM shut down cleanly, stopping upstream servers. Tools of an upstream server
that is down are not listed (clients get notifications/tools/list_changed) until it restarts.
Both MCP revisions are served, on one endpoint: 2025-11-25 (initialize, HTTP sessions) and
2026-07-28 (stateless; approvals and upstream questions come back as input_required).`;

/** Parses `agents serve` arguments; throws `INVALID_ARGUMENTS` (exit code 2) with the usage on a mistake. */
export function parseServeArgs(
  argv: readonly string[],
  env: Record<string, string | undefined> = {},
): ServeCommandArgs {
  const values = parseCommandArgs(
    argv,
    {
      skill: { type: 'string' },
      actor: { type: 'string' },
      transport: { type: 'string' },
      host: { type: 'string' },
      port: { type: 'string' },
      token: { type: 'string' },
      'allow-remote': { type: 'boolean' },
      'max-body': { type: 'string' },
      'max-sessions': { type: 'string' },
      'session-idle': { type: 'string' },
      thread: { type: 'string' },
      'keep-sandbox': { type: 'boolean' },
      from: { type: 'string' },
      policy: { type: 'string' },
    },
    USAGE,
  );
  if ((values.skill === undefined) === (values.actor === undefined)) {
    throw usageError('Give exactly one of --skill NAME or --actor NAME.', USAGE);
  }
  const target: ServeTarget =
    values.skill !== undefined
      ? { kind: 'skill', name: values.skill }
      : { kind: 'actor', name: values.actor! };
  const transport = values.transport ?? 'stdio';
  if (transport !== 'stdio' && transport !== 'http') {
    throw usageError(`--transport must be stdio or http, got "${transport}".`, USAGE);
  }
  if (transport === 'stdio' && (values.port !== undefined || values.host !== undefined)) {
    throw usageError('--port and --host apply to --transport http only.', USAGE);
  }
  if (values.thread !== undefined && target.kind !== 'actor') {
    throw usageError(
      '--thread applies to --actor only: a served skill has no thread; use --keep-sandbox to keep its sandbox.',
      USAGE,
    );
  }
  if (values.thread === '') throw usageError('--thread needs a non-empty ID.', USAGE);
  if (values.from === '') throw usageError('--from needs worktree, head or a revision.', USAGE);
  let policyMode: PolicyMode | undefined;
  if (values.policy !== undefined) {
    // PolicyModeSchema's values, checked without zod (this runs at start-up).
    const modes: readonly PolicyMode[] = ['read-only', 'ask', 'auto'];
    const mode = modes.find((item) => item === values.policy);
    if (mode === undefined) {
      throw usageError(`--policy must be read-only, ask or auto, got "${values.policy}".`, USAGE);
    }
    policyMode = mode;
  }
  const token = values.token ?? env['AGENTS_SERVE_TOKEN'];
  // An empty token used to turn authentication off without a word; whoever set it meant it on.
  if (token !== undefined && token.trim() === '') {
    throw usageError(
      values.token !== undefined
        ? '--token is empty: give a non-empty token, or leave --token out to serve without authentication.'
        : 'AGENTS_SERVE_TOKEN is set but empty: set it to a non-empty token, or unset it to serve without authentication.',
      USAGE,
    );
  }
  const port = parsePositiveInteger(values.port, 'port', USAGE, 0);
  const maxBodyBytes = parsePositiveInteger(values['max-body'], 'max-body', USAGE);
  const maxSessions = parsePositiveInteger(values['max-sessions'], 'max-sessions', USAGE);
  const sessionIdleSeconds = parsePositiveInteger(values['session-idle'], 'session-idle', USAGE);
  if (transport === 'stdio' && (maxSessions !== undefined || sessionIdleSeconds !== undefined)) {
    throw usageError('--max-sessions and --session-idle apply to --transport http only.', USAGE);
  }
  return {
    target,
    transport,
    allowRemote: values['allow-remote'] === true,
    keepSandbox: values['keep-sandbox'] === true,
    ...(values.from === undefined ? {} : { from: values.from }),
    ...(values.thread === undefined ? {} : { threadId: values.thread }),
    ...(policyMode === undefined ? {} : { policyMode }),
    ...(values.host === undefined ? {} : { host: values.host }),
    ...(port === undefined ? {} : { port }),
    ...(token === undefined ? {} : { token }),
    ...(maxBodyBytes === undefined ? {} : { maxBodyBytes }),
    ...(maxSessions === undefined ? {} : { maxSessions }),
    ...(sessionIdleSeconds === undefined ? {} : { sessionIdleMs: sessionIdleSeconds * 1000 }),
  };
}

/**
 * Builds the `agents serve` command around a resolver that activates the skill or actor. The
 * command serves until stdin EOF (stdio) or SIGINT/SIGTERM (`context.signal`), then closes the
 * MCP side and calls the resolution's `close()` to stop upstream servers. Returns exit code 0.
 */
export function createServeCommand(options: ServeCommandOptions): Command {
  const env = options.env ?? process.env;
  return {
    path: ['serve'],
    usage: USAGE,
    async run(context) {
      const args = parseServeArgs(context.argv, env);
      const log = (line: string): void => {
        context.stderr.write(`${line}\n`);
      };
      if (
        args.transport === 'stdio' &&
        !(context.stdin instanceof Readable && context.stdout instanceof Writable)
      ) {
        throw new AgentsError(
          AgentsErrorCode.ConfigInvalid,
          'agents serve over stdio needs real stdin/stdout streams.',
        );
      }
      const resolution = await options.resolve(args.target, context, {
        keepSandbox: args.keepSandbox,
        ...(args.from === undefined ? {} : { from: args.from }),
        ...(args.threadId === undefined ? {} : { threadId: args.threadId }),
        ...(args.policyMode === undefined ? {} : { policyMode: args.policyMode }),
      });
      for (const line of describeResolution(args, resolution)) log(line);
      let closeError: unknown;
      try {
        // Loaded on use: the MCP server and HTTP parts of the SDK.
        const { serveEntries } = await import('../../serving/serve-entries.js');
        await serveEntries({
          entries: resolution.entries,
          ...(resolution.middleware === undefined ? {} : { middleware: resolution.middleware }),
          ...(resolution.subscribe === undefined ? {} : { subscribe: resolution.subscribe }),
          ...(resolution.isAvailable === undefined ? {} : { isAvailable: resolution.isAvailable }),
          name: resolution.serverName ?? `agents-${args.target.kind}-${args.target.name}`,
          transport: args.transport,
          ...(args.transport === 'stdio'
            ? { stdio: { stdin: context.stdin as Readable, stdout: context.stdout as Writable } }
            : {}),
          http: {
            allowNonLoopback: args.allowRemote,
            ...(args.host === undefined ? {} : { host: args.host }),
            ...(args.port === undefined ? {} : { port: args.port }),
            ...(args.token === undefined ? {} : { token: args.token }),
            ...(args.maxBodyBytes === undefined ? {} : { maxBodyBytes: args.maxBodyBytes }),
            ...(args.maxSessions === undefined ? {} : { maxSessions: args.maxSessions }),
            ...(args.sessionIdleMs === undefined ? {} : { sessionIdleMs: args.sessionIdleMs }),
          },
          ...(args.maxBodyBytes === undefined ? {} : { maxStdioMessageBytes: args.maxBodyBytes }),
          approval: {
            noElicitationHint:
              args.target.kind === 'actor'
                ? `allow the tool with a policy rule (policy.tools or policy.rules of actor "${args.target.name}") or serve with --policy auto`
                : 'serve with --policy auto (or serve an actor whose policy rules allow the tool)',
          },
          log,
          onListening: ({ url }) => {
            // Beside the banner on stderr, where a person (or a script watching stderr) looks;
            // and on stdout for scripts that read it, unless stdout is that same terminal.
            // Once when both go to the same place (a terminal, `2>&1`, one log file).
            log(`MCP endpoint: ${url.href}`);
            if (context.json) context.stdout.write(`${JSON.stringify({ url: url.href })}\n`);
            else if (
              (context.stdout as { isTTY?: boolean }).isTTY !== true &&
              !sameDestination(context.stdout, context.stderr)
            )
              context.stdout.write(`MCP endpoint: ${url.href}\n`);
          },
          signal: context.signal,
        });
      } finally {
        try {
          await resolution.close();
        } catch (error) {
          closeError = error;
        }
        const sandbox = resolution.sandbox;
        if (closeError === undefined && sandbox?.root !== undefined && sandbox.kept) {
          log(
            `sandbox kept: ${sandbox.root}` +
              (sandbox.threadId === undefined
                ? ''
                : ` (see its changes: agents sandbox diff --thread ${sandbox.threadId})`),
          );
        }
      }
      if (closeError !== undefined) {
        throw new AgentsError(
          AgentsErrorCode.ServerUnavailable,
          `agents serve stopped, but shutting down the upstream servers failed: ${errorMessage(closeError)}`,
          { cause: closeError },
        );
      }
      return 0;
    },
  };
}

/** The stderr banner: what is served, where its tools write, its upstream servers, policy warnings. */
function describeResolution(args: ServeCommandArgs, resolution: ServeResolution): string[] {
  const what = `${args.target.kind} "${args.target.name}"`;
  const lines = [`serving ${what} over ${args.transport}`];
  const sandbox = resolution.sandbox;
  if (sandbox !== undefined) {
    if (sandbox.root === undefined) {
      lines.push(
        `no sandbox: tools work in ${sandbox.workDir ?? 'the project folder'} (the ${args.target.kind}'s sandbox is disabled)`,
      );
    } else {
      const how = sandbox.kept
        ? sandbox.threadId === undefined
          ? 'kept after exit'
          : `thread ${sandbox.threadId}; kept after exit`
        : 'temporary: removed on exit; keep it with --keep-sandbox' +
          (args.target.kind === 'actor' ? ' or --thread ID' : '');
      lines.push(`sandbox: ${sandbox.root} (${how})`);
      if (sandbox.note !== undefined) lines.push(`note: ${sandbox.note}`);
    }
  }
  for (const upstream of resolution.upstream ?? []) {
    lines.push(
      `upstream server "${upstream.serverName}"${upstream.pid === undefined ? '' : ` (pid ${upstream.pid})`}`,
    );
  }
  if (resolution.policyMode === 'ask') {
    lines.push(
      `warning: the policy of ${what} is in mode ask: write-class tools need approval; MCP clients with elicitation support are asked, others get an error result. ${args.target.kind === 'actor' ? 'Allow tools with policy rules or serve' : 'Serve'} with --policy auto to run them unasked.`,
    );
  }
  return lines;
}
