/**
 * An actor's network: each server's effective setting, the proxy for servers with host lists
 * (started at activation, stopped with the actor), and the audit entry of every decision,
 * linked to the tool call in flight on that server.
 */
import type { NetworkSetting } from '../config/network-schema.js';
import type { NamedServerConfig } from '../config/schemas.js';
import { threadIdOf } from '../core/thread-id.js';
import { AgentsError, AgentsErrorCode } from '../errors.js';
import type { ToolMiddleware } from '../core/tool-middleware.js';
import type { AuditEntry } from '../policy/audit.js';
import { compileHostRules } from '../servers/network/host-rules.js';
import type { DecisionOptions, NetworkDecision } from '../servers/network/proxy-decision.js';
import { startNetworkProxy, type NetworkProxy } from '../servers/network/proxy.js';
import {
  createServerNetwork,
  hasHostLists,
  type ServerNetworkHook,
} from '../servers/network/server-network.js';

/** `createActor` network options (tests). */
export interface ActorNetworkOptions extends DecisionOptions {
  /** Wins over `sandbox.network`. */
  setting?: NetworkSetting;
}

/** What an activation holds for its servers' network. */
export interface ActorNetwork {
  readonly hook: ServerNetworkHook;
  /** The proxy, when a stdio server has host lists. */
  readonly proxy: NetworkProxy | undefined;
  /** True when some stdio server runs without a network of its own (false or lists). */
  readonly cutsNetwork: boolean;
  /** Tracks the tool calls in flight per server (put it in the pipeline's outer layers). */
  readonly calls: ToolMiddleware;
  /** Where decisions go once the audit log is open (before that they are kept, then written). */
  setAudit(append: (entry: AuditEntry) => void): void;
  close(): Promise<void>;
}

interface InFlightCall {
  toolCallId: string | undefined;
  toolId: string;
  toolName: string;
  fingerprint: string;
  thread: string | undefined;
}

/**
 * A caller-supplied server manager starts its servers itself, without the actor's proxy or
 * confinement: a server with host lists must then not run at all.
 *
 * @throws AgentsError `CONFINEMENT_UNAVAILABLE` naming the servers and the fix.
 */
export function refuseListsOnForeignManager(
  actor: string,
  setting: NetworkSetting,
  servers: readonly NamedServerConfig[],
): void {
  const listed = servers.filter(
    (server) => server.transport === 'stdio' && hasHostLists(server.network ?? setting),
  );
  if (listed.length === 0) return;
  throw new AgentsError(
    AgentsErrorCode.ConfinementUnavailable,
    `Actor "${actor}" was not started: server(s) ${listed.map((server) => `"${server.name}"`).join(', ')} have network host lists, but the actor was given a server manager (options.serverManager) that starts servers without its proxy and confinement. ` +
      'Let the actor start its own servers (leave out serverManager), or set network: true or false for them.',
    { details: { servers: listed.map((server) => server.name) } },
  );
}

/** Starts the proxy (when needed, listening for each server with lists) and builds the hook. */
export async function startActorNetwork(input: {
  actor: string;
  setting: NetworkSetting;
  servers: readonly NamedServerConfig[];
  options?: ActorNetworkOptions;
}): Promise<ActorNetwork> {
  const setting = input.options?.setting ?? input.setting;
  const decisionOptions: DecisionOptions = {
    ...(input.options?.resolve === undefined ? {} : { resolve: input.options.resolve }),
    ...(input.options?.testHosts === undefined ? {} : { testHosts: input.options.testHosts }),
  };
  const perServer = new Map(input.servers.map((server) => [server.name, server.network]));
  const effective = (server: NamedServerConfig): NetworkSetting => server.network ?? setting;
  const stdio = input.servers.filter((server) => server.transport === 'stdio');
  const listed = stdio.filter((server) => hasHostLists(effective(server)));
  // Stdio servers behind the proxy and remote servers behind the guarded fetch.
  const decides = new Set(
    input.servers.filter((server) => hasHostLists(effective(server))).map((server) => server.name),
  );

  const inFlight = new Map<string, Set<InFlightCall>>();
  let append: ((entry: AuditEntry) => void) | undefined;
  const early: AuditEntry[] = [];
  const onDecision = (decision: NetworkDecision): void => {
    const entry = auditEntry(input.actor, decision, [...(inFlight.get(decision.serverName) ?? [])]);
    if (append === undefined) early.push(entry);
    else append(entry);
  };

  const proxy =
    listed.length === 0 ? undefined : startNetworkProxy({ ...decisionOptions, onDecision });
  try {
    for (const server of listed) {
      await proxy!.listen(
        server.name,
        compileHostRules(effective(server) as Exclude<NetworkSetting, boolean>),
      );
    }
  } catch (error) {
    await proxy?.close();
    throw error;
  }
  const hook = createServerNetwork({
    actor: setting,
    servers: perServer,
    ...decisionOptions,
    onDecision,
    ...(proxy === undefined ? {} : { proxy }),
  });
  return {
    hook,
    proxy,
    cutsNetwork: stdio.some((server) => effective(server) !== true),
    calls: {
      name: 'network-calls',
      async wrap(request, next) {
        const server = request.descriptor.serverName;
        // Only servers with host lists make decisions to attribute; the rest pass straight on.
        if (server === undefined || !decides.has(server)) return next(request);
        const call: InFlightCall = {
          toolCallId: request.context.toolCallId,
          toolId: request.descriptor.id,
          toolName: request.descriptor.name,
          fingerprint: request.descriptor.fingerprint,
          thread: request.context.threadId ?? threadIdOf(request.context.config),
        };
        let calls = inFlight.get(server);
        if (calls === undefined) inFlight.set(server, (calls = new Set()));
        calls.add(call);
        try {
          return await next(request);
        } finally {
          calls.delete(call);
        }
      },
    },
    setAudit(sink) {
      append = sink;
      for (const entry of early.splice(0)) sink(entry);
    },
    async close() {
      await proxy?.close();
    },
  };
}

const UNKNOWN = { value: false, source: 'default' as const };

function auditEntry(actor: string, decision: NetworkDecision, calls: InFlightCall[]): AuditEntry {
  const call = calls.length === 1 ? calls[0] : undefined;
  return {
    time: decision.time,
    event: 'network',
    actor,
    ...(call?.thread === undefined ? {} : { thread: call.thread }),
    ...(call?.toolCallId === undefined ? {} : { toolCallId: call.toolCallId }),
    toolId: call?.toolId ?? `network:${decision.serverName}`,
    toolName: call?.toolName ?? 'network',
    serverName: decision.serverName,
    fingerprint: call?.fingerprint ?? '',
    capabilities: { readOnly: UNKNOWN, writes: UNKNOWN, destructive: UNKNOWN, openWorld: UNKNOWN },
    args: { host: decision.host, port: decision.port, protocol: decision.protocol },
    durationMs: 0,
    isError: decision.decision === 'deny',
    ...(decision.decision === 'deny' ? { error: decision.reason } : {}),
    network: {
      serverName: decision.serverName,
      protocol: decision.protocol,
      host: decision.host,
      port: decision.port,
      ...(decision.address === undefined ? {} : { address: decision.address }),
      decision: decision.decision,
      reason: decision.reason,
      ...(decision.rule === undefined ? {} : { rule: decision.rule }),
      ...(calls.length > 1
        ? { inFlight: calls.map((item) => item.toolCallId ?? item.toolId) }
        : {}),
    },
  };
}
