import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { NamedServerConfig } from '../../src/config/server-schema.js';
import { AgentsError } from '../../src/errors.js';
import { createManagedServer } from '../../src/servers/managed-server.js';
import type { ManagedServer } from '../../src/servers/managed-server.js';

/*
 * The 2025-era result schema (src/mcp/call-request.ts eraResultSchema) on a real stdio server
 * pinned to 2025-11-25 over the SDK v2 client: a malformed tools/call result is still refused as
 * PROTOCOL_ERROR, and the message names the tool, the server and what is wrong in the result.
 */

const SERVER = join(import.meta.dirname, '..', 'fixtures', 'malformed-result-server.mjs');

const CONFIG: NamedServerConfig = {
  name: 'garbler',
  transport: 'stdio',
  command: process.execPath,
  args: [SERVER],
  protocol: '2025-11-25',
  trusted: false,
  timeouts: { startupMs: 10_000, callMs: 5_000, maxCallMs: 10_000, pingMs: 5_000, shutdownMs: 500 },
  restart: { enabled: false, maxAttempts: 0, initialDelayMs: 0, maxDelayMs: 0 },
};

let server: ManagedServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

async function call(tool: string): Promise<unknown> {
  server ??= createManagedServer(CONFIG);
  await server.start();
  const entry = server.entries().find((each) => each.descriptor.originalName === tool);
  if (entry === undefined) throw new Error(`no tool ${tool}`);
  return entry.execute({}, {}).catch((error: unknown) => error);
}

describe('a malformed tools/call result from a 2025-11-25 stdio server (SDK v2 client)', () => {
  it('answers a valid result (the precondition: the era and the path are the ones meant)', async () => {
    const result = (await call('fine')) as { content: { text: string }[] };
    expect(result.content[0]?.text).toBe('fine');
    expect(server!.protocolVersion).toBe('2025-11-25');
    // The SDK v2 client (the one with an era codec), not the v1 one.
    expect(typeof server!.client?.getProtocolEra).toBe('function');
    expect(server!.client?.getProtocolEra()).not.toBe('modern');
  });

  for (const [tool, named] of [
    ['content_not_list', /\bcontent\b/],
    // The block's path: content blocks are a union, so zod names the block, not its field (the
    // SDK's own schema-less request() said the same before eraResultSchema).
    ['text_without_text', /content\.0/],
  ] as const) {
    it(`refuses ${tool} as PROTOCOL_ERROR naming what is wrong`, async () => {
      const error = await call(tool);
      expect(AgentsError.isInstance(error), String(error)).toBe(true);
      const agentsError = error as AgentsError;
      expect(agentsError.code).toBe('PROTOCOL_ERROR');
      expect(agentsError.message).toMatch(
        new RegExp(
          `^Tool "${tool}" on server "garbler" answered with a result that is not a valid MCP CallToolResult`,
        ),
      );
      // What is wrong, past the fixed prefix: the field, not just "invalid result".
      const detail = agentsError.message.slice(agentsError.message.indexOf('CallToolResult'));
      expect(detail).toMatch(named);
      expect(detail).not.toMatch(/not-in-era|\[object Object\]/);
    });
  }
});
