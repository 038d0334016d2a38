/**
 * Per-call cost by MCP revision: the same SDK v2 server (`McpServer`, one `echo` tool, served
 * by `serveStdio` over the SDK's in-memory transport, which answers both eras) and one SDK v2
 * `Client` per revision (pinned to 2026-07-28, or the plain 2025-11-25 handshake). On each
 * client: the raw `callTool`, our adapter's tool invoked directly, and the same tool through
 * `ToolNode`, rounds interleaved. The issue-24 goal: ours direct ≤ 1.5× the raw SDK v2 client
 * on the 2026 path.
 */
import { ToolNode } from '@langchain/langgraph/prebuilt';
import { Client } from '@modelcontextprotocol/client';
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

/** Runs both revisions, one after the other, in this process. */
export async function runRevisions(
  quick: boolean,
  log: (line: string) => void,
): Promise<RevisionResult[]> {
  const scale = quick ? 0.05 : 1;
  const size = (value: number): number => Math.max(2, Math.round(value * scale));
  const work = { warmup: size(1000), rounds: size(10), perRound: size(100) };
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
  return results;
}

/** Markdown for the by-revision section. */
export function revisionsMarkdown(results: readonly RevisionResult[]): string {
  const rows = results.map((result) => {
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
  ].join('\n');
}
