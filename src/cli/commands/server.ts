import type {
  NamedServerConfig,
  ServerConfig,
  ServerConfigInput,
} from '../../config/server-schema.js';
import { missingProjectFiles } from '../../workspace/server-paths.js';
import type { WorkspaceStore } from '../../workspace/workspace-types.js';
import { AgentsError, AgentsErrorCode } from '../../errors.js';
import type { ToolDescriptor } from '../../core/tool-descriptor.js';
import type { ManagedServer } from '../../servers/managed-server.js';
import { parseCommandLine, parsePairs, requirePositional, storeOf, usageError } from '../args.js';
import { createRemoveCommand, usersOfServer } from '../remove-command.js';
import { createProgress } from '../progress.js';
import { describeServerStart } from '../../servers/server-start-line.js';
import type { Command, CommandContext } from '../command.js';
import { serverImportCommand } from './server-import.js';
import { serverLoginCommands } from './server-login.js';
import { createListCommand } from '../list-command.js';
import { formatTable, printJson, println } from '../output.js';

/** What starting a server once tells about it. */
export interface ServerProbe {
  serverName: string;
  protocolVersion: string | undefined;
  serverInfo: { name: string; version: string } | undefined;
  tools: ToolDescriptor[];
}

/**
 * Starts a server (spawn or connect), runs the handshake, lists every tool page, hands it to
 * `use` and stops it: the check behind `server add`, `server test`, `tool add`, `tool show` and
 * `tool trust`. A stdio server runs confined as a run confines it (`confine: required` of any
 * actor of the workspace applies), in an empty throwaway sandbox folder, never in the user's
 * project: a server that cannot run confined fails here, and nothing it writes as it starts
 * reaches the project. Throws the server's typed error (`SERVER_START_FAILED` with phase and
 * stderr).
 */
export async function inspectServer<T>(
  config: NamedServerConfig,
  store: WorkspaceStore,
  context: Pick<CommandContext, 'signal' | 'stderr'>,
  use: (server: ManagedServer) => Promise<T> | T,
): Promise<T> {
  const { createAgentsRuntime } = await import('../../runtime/agents-runtime.js');
  const { inspectionSandbox } = await import('../../actors/inspection-servers.js');
  // The one assembly (see `runtime/`): closing it stops the server, then removes the folder.
  await using runtime = await createAgentsRuntime({
    owner: `server "${config.name}"`,
    checkpointer: false,
  });
  const sandbox = await inspectionSandbox({
    store,
    servers: [config],
    report: warnTo(context.stderr),
  });
  runtime.defer(() => sandbox.dispose());
  // Starting includes the handshake and tools/list: a first `npx` download takes a while.
  const server = await createProgress(context.stderr).step(
    `starting ${describeServerStart(config)} and listing its tools`,
    () =>
      runtime.startServer(config, {
        cwd: sandbox.dir,
        confinement: sandbox.confinement,
        signal: context.signal,
      }),
  );
  return await use(server);
}

/** {@link inspectServer}: what the server says about itself and its tools. */
export function probeServer(
  config: NamedServerConfig,
  store: WorkspaceStore,
  context: Pick<CommandContext, 'signal' | 'stderr'>,
): Promise<ServerProbe> {
  return inspectServer(config, store, context, (server) => ({
    serverName: config.name,
    protocolVersion: server.protocolVersion,
    serverInfo: server.serverInfo
      ? { name: server.serverInfo.name, version: server.serverInfo.version }
      : undefined,
    tools: server.entries().map((entry) => entry.descriptor),
  }));
}

/**
 * A start failure whose command line names scripts that are not files of the project gets a
 * last line saying so and which folder they were looked for in: the usual cause is a path
 * that exists only where the user typed the command (`MODULE_NOT_FOUND` from the sandbox).
 */
export function withMissingFiles(
  error: unknown,
  config: ServerConfig,
  projectDir: string,
): unknown {
  if (!AgentsError.hasCode(error, AgentsErrorCode.ServerStartFailed)) return error;
  const missing = missingProjectFiles(config, projectDir);
  if (missing.length === 0) return error;
  const names = missing.map((entry) => `"${entry}"`).join(', ');
  return new AgentsError(
    error.code,
    `${error.message}\n${names} ${missing.length === 1 ? 'is not a file' : 'are not files'} of the project folder ${projectDir} (looked there; the server itself starts in the sandbox). Check the path, or install what provides it.`,
    { cause: error, details: { ...error.details, missingFiles: missing, projectDir } },
  );
}

/** Says a confinement warning (e.g. servers run unconfined: bubblewrap missing) on stderr. */
export function warnTo(stderr: NodeJS.WritableStream): (message: string) => void {
  return (message) => void stderr.write(`warning: ${message}\n`);
}

const ADD_USAGE = `Usage: agents server add NAME [options] -- COMMAND [ARGS...]
       agents server add NAME --url URL [--transport streamable-http|sse] [options]

Registers an MCP server in servers/NAME.yaml after checking it: the command starts (or the URL
answers), the MCP handshake succeeds and its tools are listed. A remote server that asks for an
OAuth login is registered all the same; log in with \`agents server login NAME\`.

A stdio server runs in the sandbox of each actor run (its working folder is the sandbox root),
so COMMAND and every ARG that names a file of your project (with or without ./, e.g.
node_modules/pkg/dist/index.js) or starts with ./ or ../ is resolved against the project folder
(the folder holding .agents/) when the server starts; the YAML keeps what you typed. Other
arguments are passed as written (folders such as "." and "src" stay relative to the sandbox),
and bare commands (node, npx) are looked up on PATH.

Options:
  --url URL           remote server endpoint (streamable HTTP by default)
  --transport T       stdio | streamable-http | sse | auto (streamable HTTP, then SSE)
  --protocol P        MCP revision: auto (default: server/discover, then initialize),
                      2026-07-28 (stateless) or 2025-11-25 (initialize); a pin fails with an
                      error naming what the server speaks
  --client-id ID      OAuth: a pre-registered client id (else the client registers itself)
  --client-secret S   OAuth: its secret; write \${VAR} (quoted) to keep it out of the file
  --scope S           OAuth: scopes to ask for when the server names none
  --grant G           OAuth: authorization_code (default; log in with \`agents server login\`)
                      or client_credentials (unattended)
  --env KEY=VALUE     extra environment variable for a stdio server (repeatable)
  --header KEY=VALUE  HTTP header for a remote server (repeatable)
  --cwd DIR           working directory of a stdio server instead of the sandbox root
                      (a relative DIR is relative to the project folder)
  --trusted           trust the server's annotations (readOnlyHint), also after they change
  --trust-annotations record a review of the tools' annotations as they are now: trusted
                      until a tool's definition changes (see \`agents tool trust\`)
  --no-validate       store without starting the server
  --force             replace an existing record
  --json              print the stored record and tools as JSON`;

const serverAdd: Command = {
  path: ['server', 'add'],
  usage: ADD_USAGE,
  async run(context) {
    const dashDash = context.argv.indexOf('--');
    const own = dashDash === -1 ? context.argv : context.argv.slice(0, dashDash);
    const commandLine = dashDash === -1 ? [] : context.argv.slice(dashDash + 1);
    const { values, positionals } = parseCommandLine(
      own,
      {
        url: { type: 'string' },
        transport: { type: 'string' },
        env: { type: 'string', multiple: true },
        header: { type: 'string', multiple: true },
        cwd: { type: 'string' },
        trusted: { type: 'boolean' },
        'trust-annotations': { type: 'boolean' },
        'no-validate': { type: 'boolean' },
        force: { type: 'boolean' },
        'client-id': { type: 'string' },
        'client-secret': { type: 'string' },
        scope: { type: 'string' },
        grant: { type: 'string' },
        protocol: { type: 'string' },
      },
      ADD_USAGE,
    );
    const name = requirePositional(positionals, 'server NAME', ADD_USAGE);
    const protocol = values.protocol;
    if (protocol !== undefined && !['auto', '2026-07-28', '2025-11-25'].includes(protocol)) {
      throw usageError(
        `--protocol takes auto, 2026-07-28 or 2025-11-25, got "${protocol}".`,
        ADD_USAGE,
      );
    }
    const protocolField =
      protocol === undefined || protocol === 'auto'
        ? {}
        : { protocol: protocol as '2026-07-28' | '2025-11-25' };
    let input: ServerConfigInput;
    if (values.url !== undefined) {
      if (commandLine.length > 0)
        throw usageError('Give either --url or a command after --, not both.', ADD_USAGE);
      const transport = values.transport ?? 'streamable-http';
      if (transport !== 'streamable-http' && transport !== 'sse' && transport !== 'auto') {
        throw usageError(
          `--transport ${transport} does not go with --url; use streamable-http, sse or auto.`,
          ADD_USAGE,
        );
      }
      const grant = values.grant;
      if (grant !== undefined && grant !== 'authorization_code' && grant !== 'client_credentials') {
        throw usageError(
          `--grant takes authorization_code or client_credentials, got "${grant}".`,
          ADD_USAGE,
        );
      }
      const oauth = {
        ...(grant === undefined
          ? {}
          : { grant: grant as 'authorization_code' | 'client_credentials' }),
        ...(values['client-id'] === undefined ? {} : { clientId: values['client-id'] }),
        ...(values['client-secret'] === undefined ? {} : { clientSecret: values['client-secret'] }),
        ...(values.scope === undefined ? {} : { scope: values.scope }),
      };
      const headers = parsePairs(values.header, '--header', ADD_USAGE);
      input = {
        transport,
        url: values.url,
        ...(headers ? { headers } : {}),
        ...(Object.keys(oauth).length > 0 ? { oauth } : {}),
        ...(values.trusted ? { trusted: true } : {}),
        ...protocolField,
      };
    } else {
      const [command, ...args] = commandLine;
      if (command === undefined)
        throw usageError('Give the server command after -- (or --url).', ADD_USAGE);
      if (values.transport !== undefined && values.transport !== 'stdio') {
        throw usageError(`--transport ${values.transport} needs --url.`, ADD_USAGE);
      }
      const env = parsePairs(values.env, '--env', ADD_USAGE);
      input = {
        transport: 'stdio',
        command,
        args,
        ...(env ? { env } : {}),
        ...(values.cwd ? { cwd: values.cwd } : {}),
        ...(values.trusted ? { trusted: true } : {}),
        ...protocolField,
      };
    }
    // Loaded on use: zod, which `agents --help` does without.
    const { ServerConfigSchema } = await import('../../config/server-schema.js');
    const parsed = ServerConfigSchema.safeParse(input);
    if (!parsed.success) {
      throw new AgentsError(
        AgentsErrorCode.ConfigInvalid,
        `Server "${name}" is invalid: ${parsed.error.issues.map((issue) => `${issue.path.join('.')}: ${issue.message}`).join('; ')}`,
        {
          details: { problems: [] },
        },
      );
    }
    const store = storeOf(context);
    if (!values.force && (await store.has('server', name))) {
      throw new AgentsError(
        AgentsErrorCode.ConfigInvalid,
        `Server "${name}" already exists (${store.file('server', name)}); pass --force to replace it.`,
        {
          details: { problems: [] },
        },
      );
    }
    let probe: ServerProbe | undefined;
    let needsLogin = false;
    if (!values['no-validate']) {
      try {
        // Launched as a run launches it: ./ and ../ entries resolved against the project.
        probe = await probeServer(store.resolveServer({ ...parsed.data, name }), store, context);
      } catch (error) {
        // The server answered and wants a login: that is a working server, not a broken one.
        if (!AgentsError.hasCode(error, AgentsErrorCode.AuthRequired))
          throw withMissingFiles(error, parsed.data, store.projectDir);
        needsLogin = true;
      }
    }
    if (values['trust-annotations'] === true) {
      if (!probe)
        throw usageError('--trust-annotations needs the tools: drop --no-validate.', ADD_USAGE);
      // Reviewed as listed now: a later change of a definition drops the trust for that tool.
      input.trustedTools = Object.fromEntries(
        probe.tools.map((tool) => [tool.originalName, tool.fingerprint]),
      );
    }
    const file = await store.put('server', name, input, { overwrite: values.force === true });
    if (context.json) {
      printJson(context.stdout, {
        name,
        file,
        config: input,
        tools: probe?.tools.map((tool) => tool.originalName) ?? null,
        ...(needsLogin ? { needsLogin: `agents server login ${name}` } : {}),
      });
    } else {
      println(context.stdout, `Added server "${name}" (${file}).`);
      if (needsLogin)
        println(
          context.stdout,
          `It asks for an OAuth login; run \`agents server login ${name}\` to log in (tokens stay in your per-user state folder, not in ${file}).`,
        );
      if (probe)
        println(
          context.stdout,
          `It answered (protocol ${probe.protocolVersion ?? '?'}) with ${probe.tools.length} tools: ${probe.tools.map((tool) => tool.originalName).join(', ')}`,
        );
    }
    return 0;
  },
};

const LIST_USAGE = `Usage: agents server list [--json]

Lists the servers registered in the workspace; broken files are reported with their reason.`;

const serverList = createListCommand({
  kind: 'server',
  usage: LIST_USAGE,
  toJson: (record) => ({ name: record.name, file: record.file, config: record.value }),
  headers: ['NAME', 'TRANSPORT', 'TARGET'],
  async rows(records) {
    const { describeServerTarget } = await import('../../servers/connect.js');
    return records.map((record) => [
      record.name,
      record.value.transport,
      describeServerTarget(record.value),
    ]);
  },
});

const TEST_USAGE = `Usage: agents server test NAME [--json]

Starts the server, runs the MCP handshake, lists its tools, and stops it.`;

const serverTest: Command = {
  path: ['server', 'test'],
  usage: TEST_USAGE,
  async run(context: CommandContext) {
    const { positionals } = parseCommandLine(context.argv, {}, TEST_USAGE);
    const name = requirePositional(positionals, 'server NAME', TEST_USAGE);
    const store = storeOf(context);
    const config = await store.get('server', name);
    const started = Date.now();
    const probe = await probeServer(config, store, context).catch((error: unknown) => {
      throw withMissingFiles(error, config, store.projectDir);
    });
    const durationMs = Date.now() - started;
    if (context.json) {
      printJson(context.stdout, {
        ...probe,
        durationMs,
        tools: probe.tools.map((tool) => ({
          name: tool.originalName,
          id: tool.id,
          readOnly: tool.capabilities.readOnly.value,
        })),
      });
    } else {
      println(
        context.stdout,
        `Server "${name}" OK in ${durationMs} ms: ${probe.serverInfo ? `${probe.serverInfo.name} ${probe.serverInfo.version}, ` : ''}protocol ${probe.protocolVersion ?? '?'}.`,
      );
      println(
        context.stdout,
        formatTable(
          ['TOOL', 'READ-ONLY', 'DESCRIPTION'],
          probe.tools.map((tool) => [
            tool.originalName,
            String(tool.capabilities.readOnly.value),
            tool.description.split('\n')[0] ?? '',
          ]),
        ),
      );
    }
    return 0;
  },
};

/** `agents server add|list|remove|test|login|logout|import`. */
export const serverCommands: readonly Command[] = [
  serverAdd,
  serverList,
  createRemoveCommand('server', usersOfServer),
  serverTest,
  ...serverLoginCommands,
  serverImportCommand,
];
