/**
 * An actor's network: each server's effective setting, the proxy for servers with host lists
 * (started at activation, stopped with the actor), and the audit entry of every decision, filed
 * under its server with the tool calls in flight then (the proxy cannot tell which of a server's
 * processes connected, so no call is named as the one that did), floods of refusals coalesced.
 */
import { isGraphInterrupt } from '@langchain/langgraph';
import type { NetworkSetting } from '../config/network-schema.js';
import type { NetworkPolicyRule } from '../config/policy-schema.js';
import type { NamedServerConfig } from '../config/server-schema.js';
import type { ApprovalPreview } from '../policy/approval.js';
import { AgentsError, AgentsErrorCode } from '../errors.js';
import type { ToolCallRequest, ToolMiddleware } from '../core/tool-middleware.js';
import type { ToolResult } from '../core/tool-descriptor.js';
import { parseApprovalResponse, toApprovalPreview } from '../policy/approval.js';
import { boundApprover } from '../policy/approval-scope.js';
import { createAuditCoalescer } from '../policy/audit-coalesce.js';
import type { AuditEntry } from '../policy/audit-entry.js';
import { compileNetworkRules, unlistedHostHook } from '../policy/network-rules.js';
import { createPinStore, hostPinKey, type PinStore } from '../policy/pins.js';
import { createInterruptApprover } from '../policy/policy-middleware.js';
import { compileHostRules, type UnlistedHostHook } from '../servers/network/host-rules.js';
import type {
  DecisionOptions,
  NetworkApprovalNeed,
  NetworkDecision,
} from '../servers/network/proxy-decision.js';
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
  /**
   * Servers whose calls may pause to ask about a host (a policy `network` rule `ask`). An
   * approval pins the host, so the call would not ask again when its task reruns: such calls
   * keep a task each, never grouped (see `readOnlyAllowedCalls`).
   */
  readonly asksAboutHosts: ReadonlySet<string>;
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
  /** Hosts refused during the call that a human may approve (policy `network` rule `ask`). */
  needs: Map<string, NetworkApprovalNeed>;
}

/** Approve-and-run-again rounds per call (each approval may uncover the next host). */
const MAX_APPROVAL_ROUNDS = 5;

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
  /** The policy's `network` rules: hosts on no list are allowed, refused, or asked about. */
  rules?: readonly NetworkPolicyRule[];
  /** The pin file approved hosts are kept in (the workspace's, shared with tool pins). */
  pinFile?: string;
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
  const coalescer = createAuditCoalescer({
    write(entry) {
      if (append === undefined) early.push(entry);
      else append(entry);
    },
  });
  const write = (entry: AuditEntry): void => coalescer.add(entry);
  const onDecision = (decision: NetworkDecision): void => {
    const calls = [...(inFlight.get(decision.serverName) ?? [])];
    if (decision.approval !== undefined) {
      const need = decision.approval;
      for (const call of calls) call.needs.set(`${need.host}:${need.port}`, need);
    }
    write(auditEntry(input.actor, decision, calls));
  };

  // Policy `network` rules and the hosts approved under them, read once per activation.
  const rules = input.rules ?? [];
  const pins: PinStore | undefined =
    rules.length > 0 && decides.size > 0 && input.pinFile !== undefined
      ? await createPinStore(input.pinFile)
      : undefined;
  const decideRule = compileNetworkRules(rules);
  const unlistedFor = (serverName: string): UnlistedHostHook | undefined =>
    rules.length === 0 ? undefined : unlistedHostHook(serverName, decideRule, pins);

  const proxy =
    listed.length === 0 ? undefined : startNetworkProxy({ ...decisionOptions, onDecision });
  try {
    for (const server of listed) {
      await proxy!.listen(
        server.name,
        compileHostRules(
          effective(server) as Exclude<NetworkSetting, boolean>,
          unlistedFor(server.name),
        ),
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
    unlistedFor,
    ...(proxy === undefined ? {} : { proxy }),
  });
  const interruptApprover = createInterruptApprover();
  const askAbout = askNetworkApproval({
    actor: input.actor,
    pins,
    approve: (preview, request) => (boundApprover() ?? interruptApprover)(preview, request),
    write,
  });
  return {
    hook,
    proxy,
    cutsNetwork: stdio.some((server) => effective(server) !== true),
    asksAboutHosts: rules.length === 0 ? new Set() : decides,
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
          thread: request.context.threadId,
          needs: new Map(),
        };
        let calls = inFlight.get(server);
        if (calls === undefined) inFlight.set(server, (calls = new Set()));
        const attempt = async (): Promise<ToolResult> => {
          calls.add(call);
          try {
            return await next(request);
          } finally {
            calls.delete(call);
          }
        };
        let result = await attempt();
        // A host a policy rule asks about was refused during the call: ask (a graph pauses
        // here), then pin it and run the call again, or keep the refusal.
        for (let round = 0; call.needs.size > 0; round++) {
          const needs = [...call.needs.values()];
          call.needs.clear();
          if (round >= MAX_APPROVAL_ROUNDS)
            return withNote(
              result,
              `Network approval: more than ${MAX_APPROVAL_ROUNDS} rounds of new hosts in one call; ${needs.map(hostOf).join(', ')} stay refused.`,
            );
          const answer = await askAbout(server, call, request, needs);
          if (answer.approved === false) return withNote(result, answer.note);
          result = await attempt();
        }
        return result;
      },
    },
    setAudit(sink) {
      append = sink;
      for (const entry of early.splice(0)) sink(entry);
    },
    async close() {
      await proxy?.close();
      coalescer.flush();
    },
  };
}

const UNKNOWN = { value: false, source: 'default' as const };

const hostOf = (need: NetworkApprovalNeed): string =>
  `${need.host.includes(':') ? `[${need.host}]` : need.host}:${need.port}`;

function withNote(result: ToolResult, note: string): ToolResult {
  return { ...result, isError: true, content: [...result.content, { type: 'text', text: note }] };
}

/**
 * Asks a human about hosts a call was refused (the policy middleware's approver: LangGraph
 * `interrupt` in a graph, the MCP client under `agents serve`); on approval pins them for the
 * server. Audits the answer. A GraphInterrupt propagates (the run pauses, and on resume the call
 * runs again up to here, where `interrupt` returns the answer).
 */
function askNetworkApproval(options: {
  actor: string;
  pins: PinStore | undefined;
  approve: (preview: ApprovalPreview, request: ToolCallRequest) => unknown;
  write: (entry: AuditEntry) => void;
}) {
  return async (
    server: string,
    call: InFlightCall,
    request: ToolCallRequest,
    needs: NetworkApprovalNeed[],
  ): Promise<{ approved: true } | { approved: false; note: string }> => {
    const hosts = needs.map(hostOf);
    // Says "during", not "this call did it": a background process of the server may have
    // connected, and the question must not put the blame on an innocent call.
    const reason =
      `server "${server}" tried to reach ${hosts.join(', ')}, on none of its network lists: ${needs[0]!.reason}. ` +
      `It was refused during call ${call.toolCallId ?? call.toolId} (${call.toolName}); the proxy sees the server, not which of its processes connected`;
    const preview: ApprovalPreview = {
      ...toApprovalPreview(
        request.descriptor,
        request.args,
        {
          decision: 'ask',
          rule: { kind: 'network', scope: 'actor', label: needs[0]!.rule },
          reason,
        },
        request.context.toolCallId === undefined ? {} : { toolCallId: request.context.toolCallId },
      ),
      allowedResponses: ['approve', 'reject'],
      network: { serverName: server, hosts },
    };
    let raw: unknown;
    try {
      raw = await options.approve(preview, request);
    } catch (error) {
      if (isGraphInterrupt(error) || !AgentsError.hasCode(error, AgentsErrorCode.PolicyDenied))
        throw error;
      return {
        approved: false,
        note: `Network access to ${hosts.join(', ')} needs approval, and none could be asked: ${error.message}`,
      };
    }
    const answer = parseApprovalResponse(raw);
    const by = answer?.by ?? 'user';
    const approved = answer?.type === 'approve';
    const time = new Date().toISOString();
    for (const need of needs) {
      if (approved) await options.pins?.pinHost(hostPinKey(server, need.host, need.port), by);
      options.write(
        auditEntry(
          options.actor,
          {
            time,
            serverName: server,
            protocol: 'approval',
            host: need.host,
            port: need.port,
            decision: approved ? 'allow' : 'deny',
            reason: approved
              ? `approved by ${by}; pinned for server "${server}"`
              : `rejected by ${by}${answer?.type === 'reject' && answer.message !== undefined ? `: ${answer.message}` : answer === undefined ? ' (the answer was not understood)' : ''}`,
            rule: need.rule,
          },
          [call],
          approved ? 'approved' : 'rejected',
          call,
        ),
      );
    }
    if (approved) return { approved: true };
    const message = answer?.type === 'reject' ? answer.message : undefined;
    return {
      approved: false,
      note: `The user refused network access to ${hosts.join(', ')}${message === undefined || message === '' ? '.' : `: ${message}`} Do not retry it.`,
    };
  };
}

/**
 * The audit entry of a decision. `certain` is the call it certainly belongs to: only a human's
 * answer to that call's question is; a connection is filed under the server (`network:SERVER`)
 * with the calls in flight then as `during`. The thread is kept when those calls share one.
 */
function auditEntry(
  actor: string,
  decision: NetworkDecision,
  calls: InFlightCall[],
  approval: 'needed' | 'approved' | 'rejected' | undefined = decision.approval === undefined
    ? undefined
    : 'needed',
  certain?: InFlightCall,
): AuditEntry {
  const call = certain;
  const threads = new Set(calls.map((item) => item.thread));
  const thread = call?.thread ?? (threads.size === 1 ? [...threads][0] : undefined);
  return {
    time: decision.time,
    event: 'network',
    actor,
    ...(thread === undefined ? {} : { thread }),
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
      ...(calls.length === 0
        ? {}
        : { during: calls.map((item) => item.toolCallId ?? item.toolId) }),
      ...(decision.unparsed === undefined ? {} : { unparsed: decision.unparsed }),
      ...(approval === undefined ? {} : { approval }),
    },
  };
}
