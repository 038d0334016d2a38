import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import {
  CallToolRequestSchema,
  CreateMessageResultSchema,
  ListToolsRequestSchema,
  McpError,
} from '@modelcontextprotocol/sdk/types.js';
import type { ClientCapabilities } from '@modelcontextprotocol/sdk/types.js';
import { afterEach, describe, expect, it } from 'vitest';
import type { NamedServerConfig } from '../../src/config/server-schema.js';
import { createClientRequestForwarder } from '../../src/core/client-requests.js';
import type {
  ClientRequestForwarder,
  UpstreamClientRequest,
} from '../../src/core/client-requests.js';
import { createManagedServer } from '../../src/servers/managed-server.js';
import type { ManagedServer } from '../../src/servers/managed-server.js';
import type { ManagedServerOptions } from '../../src/servers/server-core.js';

const CONFIG: NamedServerConfig = {
  name: 'up',
  transport: 'stdio',
  command: 'unused',
  args: [],
  trusted: true,
  timeouts: { startupMs: 5_000, callMs: 5_000, maxCallMs: 10_000, pingMs: 500, shutdownMs: 100 },
};

/**
 * An upstream server whose `sample` tool waits until `release()` (so calls overlap), then asks
 * its client for sampling and reports the answer or the JSON-RPC error.
 */
function upstream() {
  const seen: { capabilities?: ClientCapabilities } = {};
  let release: () => void = () => undefined;
  const released = new Promise<void>((resolve) => {
    release = resolve;
  });
  let server: Server | undefined;
  const ask = async (): Promise<string> => {
    try {
      const result = await server!.request(
        {
          method: 'sampling/createMessage',
          params: {
            messages: [{ role: 'user', content: { type: 'text', text: 'hi' } }],
            maxTokens: 5,
          },
        },
        CreateMessageResultSchema,
      );
      return `answered by ${result.model}`;
    } catch (error) {
      return error instanceof McpError ? `error ${error.code}: ${error.message}` : String(error);
    }
  };
  const factory = () => {
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
    server = new Server(
      { name: 'up', version: '1.0.0' },
      { capabilities: { tools: {}, logging: {} } },
    );
    server.oninitialized = () => {
      seen.capabilities = server!.getClientCapabilities();
    };
    server.setRequestHandler(ListToolsRequestSchema, () => ({
      tools: [
        { name: 'sample', inputSchema: { type: 'object' }, annotations: { readOnlyHint: true } },
        { name: 'hang', inputSchema: { type: 'object' }, annotations: { readOnlyHint: true } },
      ],
    }));
    server.setRequestHandler(CallToolRequestSchema, async (request, extra) => {
      if (request.params.name === 'hang') {
        await new Promise((resolve) => extra.signal.addEventListener('abort', resolve));
        return { content: [] };
      }
      await released;
      return { content: [{ type: 'text', text: await ask() }] };
    });
    void server.connect(serverSide);
    return { transport: clientSide, target: 'in-memory', close: () => clientSide.close() };
  };
  return { seen, release, factory, ask, server: () => server! };
}

/** A forwarder whose client answers sampling with `model` and records what it was asked. */
function forwarder(
  owner: object,
  model: string,
  asked: UpstreamClientRequest[],
): ClientRequestForwarder {
  return createClientRequestForwarder({
    owner,
    request: async (request) => {
      asked.push(request);
      return { model, role: 'assistant', content: { type: 'text', text: 'ok' } };
    },
    log: () => undefined,
  });
}

const opened: ManagedServer[] = [];
afterEach(async () => {
  await Promise.all(opened.splice(0).map((server) => server.close()));
});

async function start(world: ReturnType<typeof upstream>, options: ManagedServerOptions = {}) {
  const managed = createManagedServer(CONFIG, { transportFactory: world.factory, ...options });
  opened.push(managed);
  await managed.start();
  return managed;
}

function text(result: { content: unknown }): string {
  return (result.content as Array<{ text?: string }>).map((block) => block.text ?? '').join('');
}

describe('ClientRequestRouter (through a managed server)', () => {
  it('offers sampling and elicitation upstream only when it can forward them', async () => {
    const plain = upstream();
    await start(plain);
    expect(plain.seen.capabilities?.sampling).toBeUndefined();
    expect(plain.seen.capabilities?.elicitation).toBeUndefined();
    // Nothing answers sampling then: the server gets the SDK's own "Method not found".
    expect(await plain.ask()).toMatch(/^error -32601: /);

    const forwarding = upstream();
    await start(forwarding, { forwardClientRequests: true });
    expect(forwarding.seen.capabilities).toMatchObject({ sampling: {}, elicitation: { form: {} } });
  });

  it('routes to the call in flight, refuses outside a call and when calls from two clients overlap', async () => {
    const world = upstream();
    const managed = await start(world, { forwardClientRequests: true });
    // Outside any call: refused, nobody to ask.
    expect(await world.ask()).toMatch(
      /^error -32600: .*no tool call from an MCP client was in progress/,
    );

    const askedA: UpstreamClientRequest[] = [];
    const askedB: UpstreamClientRequest[] = [];
    const clientA = {};
    const clientB = {};
    // Two calls from two different downstream clients at once: the request cannot be tied to one.
    const first = managed.callTool(
      'sample',
      {},
      {},
      { clientRequests: forwarder(clientA, 'a', askedA) },
    );
    const second = managed.callTool(
      'sample',
      {},
      {},
      { clientRequests: forwarder(clientB, 'b', askedB) },
    );
    world.release();
    // Both requests come while both calls are in flight: neither client is guessed.
    for (const result of [await first, await second]) {
      expect(text(result)).toMatch(/^error -32600: .*calls from several MCP clients/);
    }
    expect(askedA).toHaveLength(0);
    expect(askedB).toHaveLength(0);
    // Alone, the same call is routed to its client.
    const alone = await managed.callTool(
      'sample',
      {},
      {},
      { clientRequests: forwarder(clientB, 'b', askedB) },
    );
    expect(text(alone)).toBe('answered by b');
    expect(askedB).toHaveLength(1);

    // Two calls from the same client: routed.
    const askedC: UpstreamClientRequest[] = [];
    const sameClient = {};
    const results = await Promise.all([
      managed.callTool('sample', {}, {}, { clientRequests: forwarder(sameClient, 'c', askedC) }),
      managed.callTool('sample', {}, {}, { clientRequests: forwarder(sameClient, 'c', askedC) }),
    ]);
    expect(results.map(text)).toEqual(['answered by c', 'answered by c']);
    expect(askedC).toHaveLength(2);
  });

  it('keeps the no-answer timeout still while a forwarded request waits for the client, and enforces it otherwise', async () => {
    const world = upstream();
    world.release();
    const quick = { ...CONFIG, timeouts: { ...CONFIG.timeouts!, callMs: 300 } };
    const slowClient = createClientRequestForwarder({
      owner: {},
      // The person behind the client takes well over callMs to answer.
      request: () =>
        new Promise((resolve) =>
          setTimeout(
            () =>
              resolve({ model: 'slow', role: 'assistant', content: { type: 'text', text: '' } }),
            900,
          ),
        ),
      log: () => undefined,
    });
    const patient = createManagedServer(quick, {
      transportFactory: world.factory,
      forwardClientRequests: true,
    });
    opened.push(patient);
    await patient.start();
    const answered = await patient.callTool('sample', {}, {}, { clientRequests: slowClient });
    expect(text(answered)).toBe('answered by slow');
    // A call that neither answers nor asks still times out after callMs.
    await expect(
      patient.callTool('hang', {}, {}, { clientRequests: slowClient }),
    ).rejects.toMatchObject({
      code: 'TIMEOUT',
      message: expect.stringMatching(/got no answer within 300 ms/),
    });
  });
});
