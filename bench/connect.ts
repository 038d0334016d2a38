/**
 * Connects one SDK `Client` to the benchmark server over a given transport. Every stack in a
 * scenario shares this client, so the server and transport are identical for all of them.
 */
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { createBenchServer } from './bench-server.js';

/** The transports a scenario can use. */
export type BenchTransport = 'in-memory' | 'stdio';

/** A connected client and how to close it (and its server). */
export interface BenchConnection extends AsyncDisposable {
  client: Client;
  transport: BenchTransport;
  close(): Promise<void>;
}

const here = path.dirname(fileURLToPath(import.meta.url));

/** The file path of the bench server script (spawned for stdio). */
export const BENCH_SERVER_PATH = path.join(here, 'bench-server.ts');

/** Connects a fresh client to a fresh benchmark server. */
export async function connectBench(
  transport: BenchTransport,
  options: { extraTools?: number } = {},
): Promise<BenchConnection> {
  const client = new Client({ name: 'bench-client', version: '1.0.0' });
  if (transport === 'in-memory') {
    const server = createBenchServer(options);
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
    await server.connect(serverSide);
    await client.connect(clientSide);
    const close = async (): Promise<void> => {
      await client.close();
      await server.close();
    };
    return { client, transport, close, [Symbol.asyncDispose]: close };
  }
  const args = ['--import', 'tsx', BENCH_SERVER_PATH];
  if (options.extraTools !== undefined) args.push('--extra-tools', String(options.extraTools));
  // The SDK's stdio transport: it is what the peer uses, and the raw-SDK baseline must match.
  const stdio = new StdioClientTransport({
    command: process.execPath,
    args,
    cwd: path.dirname(here),
    stderr: 'inherit',
  });
  await client.connect(stdio);
  const close = async (): Promise<void> => {
    await client.close();
  };
  return { client, transport, close, [Symbol.asyncDispose]: close };
}
