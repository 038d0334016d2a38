import { basename } from 'node:path';
import { pathToFileURL } from 'node:url';
import { Client, type Implementation, type PriorDiscovery } from '@modelcontextprotocol/client';
import type { Tool } from '@modelcontextprotocol/client';
import type { McpProtocolChoice, NamedServerConfig } from '../config/server-schema.js';
import { AgentsErrorCode, ServerError, errorMessage, type ServerPhase } from '../errors.js';
import { listToolsWithHints } from '../mcp/list-tools.js';
import { CHECKED_ELSEWHERE } from '../mcp/mcp-client.js';
import { withTaskHandles } from '../mcp/task-handles.js';
import { ClientRequestRouter, FORWARDED_CLIENT_CAPABILITIES } from './client-request-router.js';
import { createServerTransport, type ServerTransport } from './connect.js';
import {
  isProbeClosedOnStdio,
  MODERN_REVISION,
  protocolChoiceOf,
  revisionMismatchError,
  verdictOf,
  versionNegotiationFor,
} from './protocol-negotiation.js';
import type { Connection, ServerCore } from './server-core.js';
import { settleExitAfterPipeError, watchStrayStdout } from './startup-diagnosis.js';

const CLIENT_INFO: Implementation = { name: 'agents-langgraph-mcp', version: '0.1.0' };

/** What happens on a connection after it is made. */
export interface ConnectionEvents {
  /** `notifications/tools/list_changed` arrived on the connection of `generation`. */
  onListChanged(generation: number): void;
  /** The connection closed (on purpose or not: check `connection.superseded`). */
  onClose(connection: Connection): void;
}

/**
 * Makes the connections of one managed server: builds the transport (spawn or connect) and an
 * SDK client with the capabilities and handlers the options ask for, initializes it and lists
 * all tools, all within `timeouts.startupMs`, and cleans up everything when that fails.
 */
export class ServerConnector {
  /** The upstream server's requests to its client go to the tool call in flight. */
  readonly clientRequests: ClientRequestRouter;
  private readonly transportFactory: (config: NamedServerConfig) => ServerTransport;
  private startingTransport: ServerTransport | undefined;
  /**
   * The era the last connection found (`auto` only): a restart connects with it and skips the
   * `server/discover` probe. Dropped when a connection fails, so the next one probes again.
   */
  private verdict: PriorDiscovery | undefined;

  constructor(
    private readonly core: ServerCore,
    private readonly events: ConnectionEvents,
  ) {
    const { options } = core;
    this.clientRequests = new ClientRequestRouter(core.name, core.logger);
    const build =
      options.transportFactory ??
      ((serverConfig: NamedServerConfig) =>
        createServerTransport(serverConfig, {
          cwd: options.cwd,
          logger: core.logger,
          maxLineBytes: options.maxLineBytes,
          ...(options.runDir === undefined ? {} : { runDir: options.runDir }),
          ...(options.confinement === undefined ? {} : { confinement: options.confinement }),
        }));
    const wrap = options.wrapTransport;
    this.transportFactory =
      wrap === undefined
        ? build
        : (serverConfig) => {
            const made = build(serverConfig);
            return { ...made, transport: wrap(made.transport, serverConfig) };
          };
  }

  /** Connects a fresh client and lists all tools, within the startup budget. Cleans up on failure. */
  async connect(
    signal: AbortSignal | undefined,
  ): Promise<{ connection: Connection; tools: Tool[] }> {
    const choice = protocolChoiceOf(this.core.config);
    try {
      return await this.connectOnce(signal, choice, this.verdict);
    } catch (error) {
      if (this.core.closing || choice !== 'auto' || !(error instanceof ServerError)) throw error;
      if (isProbeClosedOnStdio(error.cause)) {
        // A 2025-era stdio server that ends on the unknown `server/discover`: start it again
        // and initialize, as its revision expects.
        this.core.logger.debug(
          `Server "${this.core.name}" closed on server/discover; starting it again with initialize.`,
          { serverName: this.core.name },
        );
        return this.connectOnce(signal, choice, { kind: 'legacy' });
      }
      if ((error.details['serverRevisions'] as string[] | undefined)?.includes(MODERN_REVISION)) {
        // The probe went unanswered (a slow stdio start looks like a 2025 server) and
        // `initialize` was refused with -32022 naming 2026-07-28: honour that list.
        this.core.logger.debug(
          `Server "${this.core.name}" refused initialize and named ${MODERN_REVISION}; connecting with it.`,
          { serverName: this.core.name },
        );
        return this.connectOnce(signal, MODERN_REVISION, undefined);
      }
      throw error;
    }
  }

  private async connectOnce(
    signal: AbortSignal | undefined,
    choice: McpProtocolChoice,
    prior: PriorDiscovery | undefined,
  ): Promise<{ connection: Connection; tools: Tool[] }> {
    const core = this.core;
    this.verdict = undefined;
    const serverTransport = this.transportFactory(core.config);
    this.startingTransport = serverTransport;
    const generation = ++core.generation;
    const { client, clientCapabilities } = this.createClient(generation, choice);
    const connection: Connection = {
      generation,
      client,
      clientCapabilities,
      serverTransport,
      protocolVersion: undefined,
      superseded: false,
    };
    const transport = serverTransport.transport;
    const setProtocolVersion = transport.setProtocolVersion?.bind(transport);
    transport.setProtocolVersion = (version: string) => {
      connection.protocolVersion = version;
      setProtocolVersion?.(version);
    };
    client.onclose = () => this.events.onClose(connection);

    const deadline = Date.now() + core.timeouts.startupMs;
    let phase: ServerPhase = 'initialize';
    const listAbort = new AbortController();
    const stray = watchStrayStdout(serverTransport.stdio, {
      serverName: core.name,
      details: () => core.failures.details('initialize', serverTransport),
    });
    const within = <T>(work: Promise<T>, abort?: AbortController): Promise<T> =>
      this.withDeadline(work, deadline, signal, phase, serverTransport, abort);
    try {
      // Our own deadline, longer SDK timeout: the SDK would send notifications/cancelled for
      // initialize, which the spec forbids; we close the connection (and kill the group) instead.
      await within(
        Promise.race([
          client.connect(withTaskHandles(transport), {
            timeout: core.timeouts.startupMs * 2 + 1_000,
            ...(prior === undefined ? {} : { prior }),
          }),
          stray.failed,
        ]),
      );
      serverTransport.started?.();
      // The 2026 revision sets no version on the transport; the client knows it.
      connection.protocolVersion ??= client.getNegotiatedProtocolVersion();
      stray.stop();
      if (core.closing) throw core.failures.closed('initialize');
      phase = 'list';
      const listing = await within(
        listToolsWithHints(client, { signal: listAbort.signal, serverName: core.name }),
        listAbort,
      );
      const { tools } = listing;
      if (listing.ttlMs !== undefined) connection.toolListTtlMs = listing.ttlMs;
      if (core.closing) throw core.failures.closed('list');
      core.serverCapabilities = client.getServerCapabilities();
      core.serverInfo = client.getServerVersion();
      core.instructions = client.getInstructions();
      connection.toolChangesLive = await this.listenForToolChanges(client, connection);
      if (protocolChoiceOf(core.config) === 'auto') this.verdict = verdictOf(client);
      return { connection, tools };
    } catch (error) {
      connection.superseded = true;
      stray.stop();
      await settleExitAfterPipeError(serverTransport.stdio, error);
      // Describe before closing: closing kills the group, which would hide the real exit status.
      const failure = core.closing
        ? core.failures.closed(phase)
        : (revisionMismatchError(
            error,
            core.name,
            choice,
            core.failures.details(phase, serverTransport),
          ) ?? core.failures.describe(error, serverTransport, phase));
      await serverTransport.close();
      await client.close().catch(() => undefined);
      throw failure;
    } finally {
      if (this.startingTransport === serverTransport) this.startingTransport = undefined;
    }
  }

  /** Closes a transport still starting (on `close()`), so its start fails fast. */
  async closeStarting(): Promise<void> {
    await this.startingTransport?.close();
  }

  /**
   * 2026-07-28 has no unsolicited notifications: tool-list changes come on a
   * `subscriptions/listen` stream, which the SDK dispatches to the same handler as a 2025
   * server's `notifications/tools/list_changed`. A server that refuses the stream keeps working;
   * its tool list is then refreshed only by restarts and TTL expiry (server-tool-set.ts).
   * Resolves true while changes will reach us live (see `Connection.toolChangesLive`).
   */
  private async listenForToolChanges(client: Client, connection: Connection): Promise<boolean> {
    const declared = client.getServerCapabilities()?.tools?.listChanged === true;
    if (client.getProtocolEra() !== 'modern' || !declared) return declared;
    try {
      const subscription = await client.listen(
        { toolsListChanged: true },
        { timeout: this.core.timeouts.startupMs },
      );
      void subscription.closed.then((how) => {
        connection.toolChangesLive = false;
        if (how === 'remote')
          this.core.logger.debug(
            `Server "${this.core.name}": the tools/list_changed subscription ended (generation ${connection.generation}).`,
            { serverName: this.core.name },
          );
      });
      return true;
    } catch (error) {
      this.core.logger.warn(
        `Server "${this.core.name}" refused subscriptions/listen (${errorMessage(error)}); tool-list changes will not be seen live.`,
        { serverName: this.core.name },
      );
      return false;
    }
  }

  private createClient(
    generation: number,
    choice: McpProtocolChoice,
  ): Pick<Connection, 'client' | 'clientCapabilities'> {
    const { roots, forwardClientRequests, clientInfo } = this.core.options;
    const forward = forwardClientRequests === true;
    const clientCapabilities = {
      ...(roots ? { roots: { listChanged: true } } : {}),
      ...(forward ? FORWARDED_CLIENT_CAPABILITIES : {}),
    };
    const client = new Client(clientInfo ?? CLIENT_INFO, {
      capabilities: clientCapabilities,
      jsonSchemaValidator: CHECKED_ELSEWHERE,
      versionNegotiation: versionNegotiationFor(choice, this.core.timeouts.startupMs),
    });
    this.clientRequests.install(client, forward);
    if (roots) {
      client.setRequestHandler('roots/list', () => ({
        roots: roots().map((path) => ({ uri: pathToFileURL(path).href, name: basename(path) })),
      }));
    }
    // Registered before connect: a server may send list_changed right after initialize.
    client.setNotificationHandler('notifications/tools/list_changed', () =>
      this.events.onListChanged(generation),
    );
    client.onerror = (error) =>
      this.core.logger.debug(`Server "${this.core.name}": ${error.message}`, {
        serverName: this.core.name,
      });
    return { client, clientCapabilities };
  }

  private async withDeadline<T>(
    work: Promise<T>,
    deadline: number,
    signal: AbortSignal | undefined,
    phase: ServerPhase,
    serverTransport: ServerTransport,
    abort?: AbortController,
  ): Promise<T> {
    const core = this.core;
    // The abandoned promise settles when the transport closes; never leave it unhandled.
    work.catch(() => undefined);
    let timer: NodeJS.Timeout | undefined;
    let onAbort: (() => void) | undefined;
    const guard = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () => {
          abort?.abort();
          reject(
            new ServerError(
              AgentsErrorCode.Timeout,
              `Server "${core.name}" did not finish ${phase === 'list' ? 'tools/list' : 'initialize'} within ` +
                `${core.timeouts.startupMs} ms (${serverTransport.target}); it was stopped. ` +
                'Raise timeouts.startupMs if it is slow to start (e.g. npx downloading: a confined npx server downloads into its own cache, ~/.cache/agents/npm/NAME, on its first start; remove that folder if such a start was cut short).',
              core.failures.details(phase, serverTransport),
            ),
          );
        },
        Math.max(0, deadline - Date.now()),
      );
      if (signal) {
        onAbort = () => {
          abort?.abort();
          reject(
            new ServerError(
              AgentsErrorCode.Aborted,
              `Starting server "${core.name}" was aborted during ${phase}.`,
              core.failures.details(phase, serverTransport),
              { cause: signal.reason },
            ),
          );
        };
        if (signal.aborted) onAbort();
        else signal.addEventListener('abort', onAbort, { once: true });
      }
    });
    try {
      return await Promise.race([work, guard]);
    } finally {
      clearTimeout(timer);
      if (onAbort) signal?.removeEventListener('abort', onAbort);
    }
  }
}
