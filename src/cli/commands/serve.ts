import { Readable, Writable } from 'node:stream';
import { AgentsError, AgentsErrorCode, errorMessage } from '../../errors.js';
import type { ToolMiddleware } from '../../middleware/types.js';
import type { ToolEntry } from '../../registry/tool-descriptor.js';
import { serveEntries } from '../../serve/serve-entries.js';
import type { ServedToolSource } from '../../serve/served-tool-set.js';
import { parseCommandArgs, parsePositiveInteger, usageError } from '../args.js';
import type { Command, CommandContext } from '../command.js';

/** What `agents serve` was asked to expose. */
export interface ServeTarget {
  kind: 'skill' | 'actor';
  name: string;
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
  close(): Promise<void>;
}

/** Activates a skill or actor for serving; throws `SKILL_NOT_FOUND` / `ACTOR_NOT_FOUND`. */
export type ServeTargetResolver = (
  target: ServeTarget,
  context: CommandContext,
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
}

const USAGE = `Usage: agents serve (--skill NAME | --actor NAME) [options]

Serves a skill's or an actor's tools as an MCP server: the same tools, descriptions, schemas,
sandbox, path rewriting and change tracking as in a graph.

Options:
  --skill NAME           serve the tools of this skill
  --actor NAME           serve the tools of this actor (all its skills)
  --transport T          stdio (default; for hosts that spawn the server) or http
  --host H               HTTP interface (default 127.0.0.1)
  --port N               HTTP port (default 0: pick a free one and print the URL)
  --token T              require "Authorization: Bearer T" over HTTP
                         (or set AGENTS_SERVE_TOKEN, which keeps it out of the process list)
  --allow-remote         allow a non-loopback --host (needs a token as well)
  --max-body BYTES       HTTP request body cap (default 4194304)

Over stdio, stdout carries only JSON-RPC and logs go to stderr; the server exits when stdin
closes. SIGINT/SIGTERM shut down cleanly, stopping upstream servers.`;

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
  const token = values.token ?? env['AGENTS_SERVE_TOKEN'];
  const port = parsePositiveInteger(values.port, 'port', USAGE, 0);
  const maxBodyBytes = parsePositiveInteger(values['max-body'], 'max-body', USAGE);
  return {
    target,
    transport,
    allowRemote: values['allow-remote'] === true,
    ...(values.host === undefined ? {} : { host: values.host }),
    ...(port === undefined ? {} : { port }),
    ...(token === undefined || token === '' ? {} : { token }),
    ...(maxBodyBytes === undefined ? {} : { maxBodyBytes }),
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
    summary: "Serve a skill's or an actor's tools as an MCP server (stdio or HTTP)",
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
      const resolution = await options.resolve(args.target, context);
      let closeError: unknown;
      try {
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
          },
          log,
          onListening: ({ url }) => {
            // Over HTTP stdout is free; scripts read the URL from it.
            context.stdout.write(
              context.json
                ? `${JSON.stringify({ url: url.href })}\n`
                : `MCP endpoint: ${url.href}\n`,
            );
          },
          signal: context.signal,
        });
      } finally {
        try {
          await resolution.close();
        } catch (error) {
          closeError = error;
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
