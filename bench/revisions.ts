/**
 * Per-call cost by MCP revision: the same SDK v2 server (`McpServer`, one `echo` tool, served
 * by `serveStdio` over the SDK's in-memory transport, which answers both eras) and one SDK v2
 * `Client` per revision (pinned to 2026-07-28, or the plain 2025-11-25 handshake). On each
 * client: the raw `callTool`, our adapter's tool invoked directly, and the same tool through
 * `ToolNode`, rounds interleaved. The issue-24 goal: ours direct ≤ 1.5× the raw SDK v2 client
 * on the 2026 path.
 *
 * Then a row pair against `@langchain/mcp-adapters` through `ToolNode`: the peer runs on SDK v1,
 * which speaks 2025-11-25 at most, so it is measured on the same both-era server at 2025-11-25
 * while ours runs at 2026-07-28 (issue-24 goal: ours through ToolNode faster than the peer).
 */
import { ToolNode } from '@langchain/langgraph/prebuilt';
import { loadMcpTools } from '@langchain/mcp-adapters';
import { Client } from '@modelcontextprotocol/client';
import { Client as V1Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport, McpServer } from '@modelcontextprotocol/server';
import { serveStdio } from '@modelcontextprotocol/server/stdio';
import { z } from 'zod';
import { createMcpToolAdapter } from '../src/mcp/tool-adapter.js';
import { compare, formatMicros, formatRatio, medians, table } from './harness.js';
import { findTool, invokeText, resultText, toolCallInput, toolNodeText } from './stacks.js';

const REVISIONS = ['2026-07-28', '2025-11-25'] as const;
type Revision = (typeof REVISIONS)[number];

const COLUMN = {
  raw: 'raw SDK v2 callTool',
  direct: 'ours direct invoke',
  toolNode: 'ours via ToolNode',
} as const;

/** Medians (µs) of each column for one revision. */
export interface RevisionResult {
  revision: Revision;
  negotiated: string | undefined;
  medians: Map<string, number>;
  calls: number;
}

function benchServer(): McpServer {
  const server = new McpServer(
    { name: 'bench-v2', version: '1.0.0' },
    { capabilities: { tools: {} } },
  );
  server.registerTool(
    'echo',
    {
      description: 'Returns the text it was given.',
      inputSchema: z.object({ text: z.string() }),
      annotations: { readOnlyHint: true, openWorldHint: false },
    },
    ({ text }) => ({ content: [{ type: 'text', text }] }),
  );
  return server;
}

/** A v2 client connected in memory at `revision`, and how to tear it down. */
async function connect(
  revision: Revision,
): Promise<{ client: Client; close: () => Promise<void> }> {
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  const handle = serveStdio(() => benchServer(), { legacy: 'serve', transport: serverSide });
  const client = new Client(
    { name: 'bench', version: '1.0.0' },
    revision === '2026-07-28' ? { versionNegotiation: { mode: { pin: revision } } } : {},
  );
  await client.connect(clientSide);
  return {
    client,
    close: async () => {
      await client.close();
      await handle.close();
    },
  };
}

/** The row pair: ours on 2026-07-28 vs the peer on 2025-11-25, both through ToolNode. */
export interface PeerPairResult {
  ours: number;
  peer: number;
  /** Each side's own client, raw `callTool`: SDK v2 at 2026-07-28, SDK v1 at 2025-11-25. */
  oursRaw: number;
  peerRaw: number;
  /** Ours on 2025-11-25 (SDK v2 client): the revision the peer speaks, so a like-for-like row. */
  ours2025: number;
  ours2025Raw: number;
  calls: number;
}

/** Both revisions, then the row pair against the peer. */
export interface RevisionsRun {
  revisions: RevisionResult[];
  peer: PeerPairResult;
}

const PAIR = {
  ours: 'ours via ToolNode, 2026-07-28',
  peer: 'peer via ToolNode, 2025-11-25',
  oursRaw: 'raw SDK v2 callTool, 2026-07-28',
  peerRaw: 'raw SDK v1 callTool, 2025-11-25',
  ours2025: 'ours via ToolNode, 2025-11-25',
  ours2025Raw: 'raw SDK v2 callTool, 2025-11-25',
} as const;

/**
 * Ours (SDK v2 client) at both revisions against the peer (SDK v1 client, 2025-11-25), interleaved.
 */
async function runPeerPair(
  work: { warmup: number; rounds: number; perRound: number },
  args: { text: string },
  log: (line: string) => void,
): Promise<PeerPairResult> {
  const modern = await connect('2026-07-28');
  const legacy = await connect('2025-11-25');
  const [peerSide, serverSide] = InMemoryTransport.createLinkedPair();
  const peerServer = serveStdio(() => benchServer(), { legacy: 'serve', transport: serverSide });
  const peerClient = new V1Client({ name: 'bench-peer', version: '1.0.0' });
  try {
    await peerClient.connect(peerSide);
    const negotiated = peerClient.getServerVersion() === undefined ? undefined : '2025-11-25';
    if (negotiated === undefined) throw new Error('the SDK v1 client did not initialize');
    const oursTool = findTool(
      await createMcpToolAdapter({ serverName: 'bench', client: modern.client }).tools(),
      'echo',
    );
    const ours2025Tool = findTool(
      await createMcpToolAdapter({ serverName: 'bench', client: legacy.client }).tools(),
      'echo',
    );
    const peerTool = findTool(await loadMcpTools('bench', peerClient), 'echo');
    const oursNode = new ToolNode([oursTool]);
    const ours2025Node = new ToolNode([ours2025Tool]);
    const peerNode = new ToolNode([peerTool]);
    const outputs = [
      toolNodeText(await oursNode.invoke(toolCallInput(oursTool.name, args))),
      toolNodeText(await ours2025Node.invoke(toolCallInput(ours2025Tool.name, args))),
      toolNodeText(await peerNode.invoke(toolCallInput(peerTool.name, args))),
    ];
    if (outputs.some((output) => output !== args.text)) {
      throw new Error(`ours or the peer returned the wrong text: ${outputs.join(' | ')}`);
    }
    const samples = await compare(
      [
        { name: PAIR.ours, call: () => oursNode.invoke(toolCallInput(oursTool.name, args)) },
        { name: PAIR.peer, call: () => peerNode.invoke(toolCallInput(peerTool.name, args)) },
        {
          name: PAIR.oursRaw,
          call: () => modern.client.callTool({ name: 'echo', arguments: args }),
        },
        { name: PAIR.peerRaw, call: () => peerClient.callTool({ name: 'echo', arguments: args }) },
        {
          name: PAIR.ours2025,
          call: () => ours2025Node.invoke(toolCallInput(ours2025Tool.name, args)),
        },
        {
          name: PAIR.ours2025Raw,
          call: () => legacy.client.callTool({ name: 'echo', arguments: args }),
        },
      ],
      work,
    );
    const found = medians(samples);
    const result = {
      ours: found.get(PAIR.ours) ?? Number.NaN,
      peer: found.get(PAIR.peer) ?? Number.NaN,
      oursRaw: found.get(PAIR.oursRaw) ?? Number.NaN,
      peerRaw: found.get(PAIR.peerRaw) ?? Number.NaN,
      ours2025: found.get(PAIR.ours2025) ?? Number.NaN,
      ours2025Raw: found.get(PAIR.ours2025Raw) ?? Number.NaN,
      calls: work.rounds * work.perRound,
    };
    log(
      `revisions peer pair: ${PAIR.ours}=${formatMicros(result.ours)}µs, ` +
        `${PAIR.ours2025}=${formatMicros(result.ours2025)}µs, ${PAIR.peer}=${formatMicros(result.peer)}µs`,
    );
    return result;
  } finally {
    await peerClient.close();
    await peerServer.close();
    await modern.close();
    await legacy.close();
  }
}

/**
 * Runs both revisions, one after the other, in this process, then the row pair. The same work in
 * a quick run: the section feeds a goal row and takes about 3 s (see `callScenarios`).
 */
export async function runRevisions(log: (line: string) => void): Promise<RevisionsRun> {
  const work = { warmup: 1000, rounds: 10, perRound: 100 };
  const results: RevisionResult[] = [];
  const args = { text: 'x'.repeat(100) };
  for (const revision of REVISIONS) {
    const { client, close } = await connect(revision);
    try {
      const negotiated = client.getNegotiatedProtocolVersion();
      if (negotiated !== revision) {
        throw new Error(`asked for ${revision}, the client negotiated ${String(negotiated)}`);
      }
      const adapter = createMcpToolAdapter({ serverName: 'bench', client });
      const ours = findTool(await adapter.tools(), 'echo');
      const node = new ToolNode([ours]);
      // Never time a failing call.
      const outputs = [
        resultText(await client.callTool({ name: 'echo', arguments: args })),
        invokeText(await ours.invoke(args)),
        toolNodeText(await node.invoke(toolCallInput(ours.name, args))),
      ];
      if (outputs.some((output) => output !== args.text)) {
        throw new Error(`a stack returned the wrong text on ${revision}: ${outputs.join(' | ')}`);
      }
      const samples = await compare(
        [
          { name: COLUMN.raw, call: () => client.callTool({ name: 'echo', arguments: args }) },
          { name: COLUMN.direct, call: () => ours.invoke(args) },
          { name: COLUMN.toolNode, call: () => node.invoke(toolCallInput(ours.name, args)) },
        ],
        work,
      );
      const result = {
        revision,
        negotiated,
        medians: medians(samples),
        calls: work.rounds * work.perRound,
      };
      results.push(result);
      log(
        `revisions ${revision}: ` +
          [...result.medians].map(([name, value]) => `${name}=${formatMicros(value)}µs`).join(', '),
      );
    } finally {
      await close();
    }
  }
  return { revisions: results, peer: await runPeerPair(work, args, log) };
}

/** Markdown for the by-revision section. */
export function revisionsMarkdown(run: RevisionsRun): string {
  const rows = run.revisions.map((result) => {
    const get = (name: string): number => result.medians.get(name) ?? Number.NaN;
    const ratio = get(COLUMN.direct) / get(COLUMN.raw);
    return [
      `${result.revision} (in-memory, 100 B)`,
      formatMicros(get(COLUMN.raw)),
      formatMicros(get(COLUMN.direct)),
      formatMicros(get(COLUMN.toolNode)),
      formatRatio(ratio),
      result.revision === '2026-07-28' ? (ratio <= 1.5 ? 'yes' : '**no**') : '-',
    ];
  });
  return [
    'One SDK v2 server (`McpServer` + `serveStdio` over the in-memory transport, both eras) and an',
    'SDK v2 client per revision; medians in µs per call, rounds interleaved. Goal (issue 24): ours',
    'direct ≤ 1.5× the raw SDK v2 client on 2026-07-28.',
    '',
    table(
      [
        'revision',
        COLUMN.raw,
        COLUMN.direct,
        COLUMN.toolNode,
        'ours direct / raw',
        '2026 goal ≤ 1.5×',
      ],
      rows,
    ),
    '',
    'Through ToolNode against `@langchain/mcp-adapters` (issues 24 and 37: ours faster at both',
    'revisions). The peer runs on SDK v1, which speaks 2025-11-25 at most, so the rows use one',
    'server that speaks both: ours on 2026-07-28 and on 2025-11-25 (SDK v2 client), the peer on',
    '2025-11-25 (SDK v1 client, its only revision). Medians in µs per call, rounds interleaved,',
    "in-memory transport, 100 B. Each stack's own client called raw is beside it, so the stack's",
    "cost shows apart from the SDK's.",
    '',
    table(
      [
        'stack, revision',
        'raw client callTool (µs)',
        'via ToolNode (µs)',
        'ToolNode − raw (µs)',
        'ours / peer via ToolNode',
        'ours faster',
      ],
      [
        [
          'ours (`createMcpToolAdapter`, SDK v2 client), 2026-07-28',
          formatMicros(run.peer.oursRaw),
          formatMicros(run.peer.ours),
          formatMicros(run.peer.ours - run.peer.oursRaw),
          formatRatio(run.peer.ours / run.peer.peer),
          run.peer.ours < run.peer.peer ? 'yes' : '**no**',
        ],
        [
          'ours (`createMcpToolAdapter`, SDK v2 client), 2025-11-25',
          formatMicros(run.peer.ours2025Raw),
          formatMicros(run.peer.ours2025),
          formatMicros(run.peer.ours2025 - run.peer.ours2025Raw),
          formatRatio(run.peer.ours2025 / run.peer.peer),
          run.peer.ours2025 < run.peer.peer ? 'yes' : '**no**',
        ],
        [
          'peer (`@langchain/mcp-adapters` `loadMcpTools`, SDK v1 client), 2025-11-25 (the only one it speaks)',
          formatMicros(run.peer.peerRaw),
          formatMicros(run.peer.peer),
          formatMicros(run.peer.peer - run.peer.peerRaw),
          '-',
          '-',
        ],
      ],
    ),
  ].join('\n');
}
