/**
 * Tool discovery for a server with 500 tools (tools/list over all pages + wrapping every tool),
 * ours against `@langchain/mcp-adapters`, over one shared client, interleaved.
 */
import { loadMcpTools } from '@langchain/mcp-adapters';
import { createMcpToolAdapter } from '../src/mcp/tool-adapter.js';
import { connectBench, type BenchTransport } from './connect.js';
import { compare, formatMicros, formatRatio, medians, table } from './harness.js';

/** Discovery medians (µs) for one transport. */
export interface DiscoveryResult {
  transport: BenchTransport;
  tools: number;
  ours: number;
  peer: number;
  oursCount: number;
  peerCount: number;
}

const EXTRA_TOOLS = 496; // + the 4 real tools = 500

/** Lists and wraps 500 tools with each stack. */
export async function runDiscovery(
  quick: boolean,
  log: (line: string) => void,
): Promise<DiscoveryResult[]> {
  const results: DiscoveryResult[] = [];
  for (const transport of ['in-memory', 'stdio'] as const) {
    await using connection = await connectBench(transport, { extraTools: EXTRA_TOOLS });
    const { client } = connection;
    const adapter = createMcpToolAdapter({ serverName: 'bench', client });
    const oursCount = (await adapter.tools()).length;
    const peerCount = (await loadMcpTools('bench', client)).length;
    const samples = await compare(
      [
        { name: 'ours', call: () => createMcpToolAdapter({ serverName: 'bench', client }).tools() },
        { name: 'peer', call: () => loadMcpTools('bench', client) },
      ],
      // 20 rounds: one discovery allocates enough that a GC lands in some samples; fewer
      // rounds let a couple of those move the median by 30 % or more.
      { warmup: 3, rounds: quick ? 6 : 20, perRound: 2 },
    );
    const byName = medians(samples);
    const result = {
      transport,
      tools: EXTRA_TOOLS + 4,
      ours: byName.get('ours') ?? Number.NaN,
      peer: byName.get('peer') ?? Number.NaN,
      oursCount,
      peerCount,
    };
    log(
      `discovery ${transport}: ours=${formatMicros(result.ours)}µs peer=${formatMicros(result.peer)}µs`,
    );
    results.push(result);
  }
  return results;
}

/** Markdown for the discovery section. */
export function discoveryMarkdown(results: readonly DiscoveryResult[]): string {
  return [
    'tools/list over all pages (100 tools a page) + wrapping every tool as a LangChain tool.',
    'Ours: `createMcpToolAdapter(...).tools()` (provider-safe names and sanitized descriptions at',
    'listing; each full descriptor, with capabilities, path arguments and fingerprint, when first',
    'read; each validator on the first call). Peer: `loadMcpTools(serverName, client)`. Medians in µs.',
    '',
    table(
      [
        'transport',
        'tools',
        'ours (µs)',
        'peer (µs)',
        'ours / peer',
        'tools wrapped (ours / peer)',
      ],
      results.map((result) => [
        result.transport,
        String(result.tools),
        formatMicros(result.ours),
        formatMicros(result.peer),
        formatRatio(result.ours / result.peer),
        `${result.oursCount} / ${result.peerCount}`,
      ]),
    ),
  ].join('\n');
}
