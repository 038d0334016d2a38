/**
 * When a call declares the Tasks extension (SEP-2663): real SDK v2 clients and servers over the
 * SDK's in-memory transport, one per case (advertising the extension or not, 2026 or 2025 era).
 */
import { CLIENT_CAPABILITIES_META_KEY, Client } from '@modelcontextprotocol/client';
import { InMemoryTransport, McpServer } from '@modelcontextprotocol/server';
import { serveStdio } from '@modelcontextprotocol/server/stdio';
import { afterEach, describe, expect, it } from 'vitest';
import {
  CLIENT_CAPABILITIES_META_KEY as OUR_META_KEY,
  declaresTasks,
  TASKS_EXTENSION,
  withTaskHandles,
  withTasksExtension,
} from '../../src/mcp/task-handles.js';

const closers: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
});

async function connect(options: {
  advertise: boolean;
  modern: boolean;
  decorated?: boolean;
}): Promise<Client> {
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  const handle = serveStdio(
    () =>
      new McpServer(
        { name: 'tasks-unit', version: '1.0.0' },
        {
          capabilities: {
            tools: {},
            ...(options.advertise ? { extensions: { [TASKS_EXTENSION]: {} } } : {}),
          },
        },
      ),
    { legacy: 'serve', transport: serverSide },
  );
  const client = new Client(
    { name: 'tasks-unit-client', version: '1.0.0' },
    {
      capabilities: { roots: { listChanged: true } },
      ...(options.modern ? { versionNegotiation: { mode: { pin: '2026-07-28' } } } : {}),
    },
  );
  await client.connect(options.decorated === false ? clientSide : withTaskHandles(clientSide));
  closers.push(async () => {
    await client.close();
    await handle.close();
  });
  return client;
}

describe('declaring the Tasks extension on a tools/call', () => {
  it('names the client-capabilities meta key exactly as the SDK does', () => {
    expect(OUR_META_KEY).toBe(CLIENT_CAPABILITIES_META_KEY);
  });

  it('declares it to a 2026 server that advertises it, unless the tool forbids tasks', async () => {
    const client = await connect({ advertise: true, modern: true });
    expect(client.getProtocolEra()).toBe('modern');
    expect(declaresTasks(client, undefined)).toBe(true);
    expect(declaresTasks(client, 'optional')).toBe(true);
    expect(declaresTasks(client, 'forbidden')).toBe(false);
  });

  it('does not declare it to a server that does not advertise it, except for a required tool', async () => {
    const client = await connect({ advertise: false, modern: true });
    expect(declaresTasks(client, undefined)).toBe(false);
    expect(declaresTasks(client, 'optional')).toBe(false);
    expect(declaresTasks(client, 'required')).toBe(true);
  });

  it('never declares it on a 2025-era connection (the extension is a 2026-07-28 one)', async () => {
    const client = await connect({ advertise: true, modern: false });
    expect(client.getProtocolEra()).not.toBe('modern');
    expect(declaresTasks(client, 'required')).toBe(false);
  });

  it('never declares it over a transport that does not hand task answers through', async () => {
    const client = await connect({ advertise: true, modern: true, decorated: false });
    expect(client.getProtocolEra()).toBe('modern');
    expect(declaresTasks(client, 'required')).toBe(false);
  });

  it("adds the extension to the client's own capabilities instead of replacing them", () => {
    const own = { roots: { listChanged: true }, extensions: { 'x/other': {} } };
    expect(withTasksExtension(own)).toEqual({
      roots: { listChanged: true },
      extensions: { 'x/other': {}, [TASKS_EXTENSION]: {} },
    });
    expect(withTasksExtension()).toEqual({ extensions: { [TASKS_EXTENSION]: {} } });
  });
});
