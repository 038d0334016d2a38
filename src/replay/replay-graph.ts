/**
 * Replays a cassette through a hand-built graph of the common shape (an agent node calling the
 * model on the state's messages, a `ToolNode` over the MCP adapter's tools, back to the agent
 * until the model stops calling tools), with no server and no model: each server is an SDK
 * client over a {@link createReplayTransport}, the model a {@link ReplayChatModel}. For a graph of
 * another shape, use those two pieces directly; this file shows how they fit.
 */
import {
  AIMessage,
  HumanMessage,
  SystemMessage,
  ToolMessage,
  type BaseMessage,
} from '@langchain/core/messages';
import type { StructuredToolInterface } from '@langchain/core/tools';
import { END, MessagesValue, START, StateGraph, StateSchema } from '@langchain/langgraph';
import { ToolNode } from '@langchain/langgraph/prebuilt';
import { Client } from '@modelcontextprotocol/client';
import type { McpClient } from '../mcp/mcp-client.js';
import { createMcpToolAdapter, type McpToolAdapterOptions } from '../mcp/tool-adapter.js';
import type { Cassette, RecordedMessage } from './cassette.js';
import type { CassetteRedactOptions } from './cassette-redact.js';
import { ReplayChatModel } from './chat-models.js';
import { ReplayDivergenceError } from './divergence.js';
import { createReplayTransport, type ReplayTransport } from './replay-transport.js';

/** Options of {@link replayCassette}. */
export type ReplayCassetteOptions = CassetteRedactOptions & {
  cassette: Cassette;
  /**
   * Connects an SDK client to a server's replay transport. Default: an SDK v2 `Client` with its
   * default options. Use the client (and options) the recording used, so the handshake the
   * cassette holds is the one asked for.
   */
  connect?: (server: string, transport: ReplayTransport) => Promise<McpClient>;
  /** Adapter options for every server (overrides, prefixes), as the recording had them. */
  adapter?: Omit<McpToolAdapterOptions, 'serverName' | 'client'>;
  /** The graph's input messages. Default: the first recorded turn's messages in. */
  input?: BaseMessage[];
  /** Throw the first divergence (default true); false returns it in the result. */
  throwOnDivergence?: boolean;
};

/** What a replay produced. */
export interface ReplayRun {
  /** The graph's final messages. */
  messages: BaseMessage[];
  /** The first divergence, when `throwOnDivergence` is false. */
  divergence: ReplayDivergenceError | undefined;
  /** Model turns answered. */
  turns: number;
}

/** A recorded message as a LangChain message (the graph's input). */
export function fromRecordedMessage(recorded: RecordedMessage): BaseMessage {
  const content = recorded.content as string;
  switch (recorded.type) {
    case 'system':
      return new SystemMessage({ content });
    case 'ai':
      return new AIMessage({
        content,
        tool_calls: (recorded.tool_calls ?? []).map((call) => ({ ...call, type: 'tool_call' })),
      });
    case 'tool':
      return new ToolMessage({ content, tool_call_id: recorded.tool_call_id ?? '' });
    default:
      return new HumanMessage({ content });
  }
}

async function defaultConnect(_server: string, transport: ReplayTransport): Promise<McpClient> {
  const client = new Client({ name: 'agents-replay', version: '1.0.0' });
  await client.connect(transport as unknown as Parameters<Client['connect']>[0]);
  return client;
}

/** Servers named by a cassette's exchanges, in the order they first appear. */
export function cassetteServers(cassette: Cassette): string[] {
  const names = new Set<string>();
  for (const entry of cassette.entries)
    if (entry.kind === 'mcp' || entry.kind === 'mcp-notification') names.add(entry.server);
  return [...names];
}

/**
 * Replays `cassette` through an agent ⇄ ToolNode graph and returns its messages. Throws the
 * first {@link ReplayDivergenceError} (a request or argument not recorded, a model turn whose
 * messages in differ, recorded exchanges never asked for), unless `throwOnDivergence` is false.
 */
export async function replayCassette(options: ReplayCassetteOptions): Promise<ReplayRun> {
  const { cassette } = options;
  const connect = options.connect ?? defaultConnect;
  const transports = cassetteServers(cassette).map(
    (server) => [server, createReplayTransport({ ...options, server })] as const,
  );
  const clients: McpClient[] = [];
  const model = new ReplayChatModel(options);
  let messages: BaseMessage[] = [];
  let failure: unknown;
  try {
    const tools: StructuredToolInterface[] = [];
    for (const [server, transport] of transports) {
      const client = await connect(server, transport);
      clients.push(client);
      const adapter = createMcpToolAdapter({ ...options.adapter, serverName: server, client });
      tools.push(...(await adapter.tools()));
    }
    const bound = model.bindTools(tools);
    const State = new StateSchema({ messages: MessagesValue });
    const graph = new StateGraph(State)
      .addNode('agent', async (state) => ({ messages: [await bound.invoke(state.messages)] }))
      .addNode('tools', new ToolNode(tools))
      .addEdge(START, 'agent')
      .addConditionalEdges('agent', (state) => {
        const last = state.messages.at(-1);
        return last instanceof AIMessage && (last.tool_calls?.length ?? 0) > 0 ? 'tools' : END;
      })
      .addEdge('tools', 'agent')
      .compile();
    const input = options.input ?? (model.turns[0]?.input ?? []).map(fromRecordedMessage);
    const state = await graph.invoke(
      { messages: input },
      { recursionLimit: 2 * model.turns.length + 10 },
    );
    messages = state.messages;
  } catch (error) {
    failure = error;
  } finally {
    for (const client of clients) await client.close().catch(() => undefined);
  }
  const divergences = [...transports.map(([, transport]) => transport.divergence), model.divergence]
    .filter((found): found is ReplayDivergenceError => found !== undefined)
    .sort((a, b) => a.order - b.order);
  let divergence = divergences[0];
  if (divergence === undefined && failure !== undefined) throw failure;
  if (divergence === undefined) divergence = notReplayed(transports, model);
  if (divergence !== undefined && options.throwOnDivergence !== false) throw divergence;
  return { messages, divergence, turns: model.turns.length - model.unused().length };
}

/** The first recorded step the run never asked for, as a divergence. */
export function notReplayed(
  transports: ReadonlyArray<readonly [string, ReplayTransport]>,
  model: ReplayChatModel,
): ReplayDivergenceError | undefined {
  const turn = model.unused()[0];
  if (turn !== undefined) {
    return new ReplayDivergenceError(
      `Replay diverged: the run ended before model turn ${turn.turn} of ${model.turns.length}.`,
      { kind: 'not-replayed', step: `model turn ${turn.turn}` },
    );
  }
  for (const [server, transport] of transports) {
    const exchange = transport.unused().find((entry) => 'result' in entry || 'error' in entry);
    if (exchange !== undefined) {
      return new ReplayDivergenceError(
        `Replay diverged: the run ended without asking ${server} for recorded exchange ` +
          `${exchange.seq} (${exchange.method}).`,
        {
          kind: 'not-replayed',
          step: `${server} exchange ${exchange.seq}`,
          server,
          method: exchange.method,
        },
      );
    }
  }
  return undefined;
}
