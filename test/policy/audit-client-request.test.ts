import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { formatAuditEntry } from '../../src/cli/commands/audit.js';
import { createClientRequestForwarder, JsonRpcError } from '../../src/core/client-requests.js';
import type { UpstreamClientRequest } from '../../src/core/client-requests.js';
import { composeMiddleware } from '../../src/core/tool-middleware.js';
import { createAuditLog, readAuditLog } from '../../src/policy/audit-log.js';
import { createAuditMiddleware } from '../../src/policy/audit.js';
import { createPolicyMiddleware } from '../../src/policy/policy-middleware.js';
import { parsePolicy } from '../../src/config/policy-schema.js';
import { descriptorFor } from './helpers.js';

const reader = descriptorFor(
  'fs',
  { name: 'read_file', annotations: { readOnlyHint: true } },
  { trusted: true },
);

let workspace: string;
beforeEach(async () => {
  workspace = await mkdtemp(join(tmpdir(), 'audit-client-'));
});
afterEach(async () => {
  await rm(workspace, { recursive: true, force: true });
});

const sampling: UpstreamClientRequest = {
  method: 'sampling/createMessage',
  params: { messages: [{ role: 'user', content: { type: 'text', text: 'hi' } }], maxTokens: 9 },
};
const elicitation: UpstreamClientRequest = {
  method: 'elicitation/create',
  params: {
    mode: 'form',
    message: 'Your name?',
    requestedSchema: { type: 'object', properties: { name: { type: 'string' } } },
  },
};

describe('forwarded client requests under the policy and the audit log', () => {
  it('gates each request by policy.clientRequests and audits it, refusals included, whatever the layer order', async () => {
    const log = createAuditLog(join(workspace, 'audit.jsonl'));
    const sent: string[] = [];
    const forwarder = createClientRequestForwarder({
      owner: {},
      request: async (request) => {
        sent.push(request.method);
        return { action: 'accept', content: { name: 'Ada' } };
      },
      log: () => undefined,
    });
    const outcomes: string[] = [];
    const handler = composeMiddleware(
      [
        createAuditMiddleware({ log, actor: 'coder' }),
        createPolicyMiddleware({
          policy: parsePolicy({ mode: 'auto', clientRequests: { sampling: 'deny' } }),
          name: 'actor "coder"',
        }),
      ],
      // The upstream server's tool asks its client twice while it runs.
      async (request) => {
        for (const asked of [sampling, elicitation]) {
          try {
            await request.capabilities!.clientRequests!.request(asked, {
              serverName: 'fs',
              signal: new AbortController().signal,
            });
            outcomes.push(`${asked.method}: answered`);
          } catch (error) {
            outcomes.push(
              `${asked.method}: ${error instanceof JsonRpcError ? error.code : '?'} ${String((error as Error).message)}`,
            );
          }
        }
        return { content: [{ type: 'text', text: 'done' }] };
      },
    );
    await handler({
      descriptor: reader,
      args: { path: 'a' },
      context: { toolCallId: 'call-1' },
      capabilities: { clientRequests: forwarder },
    });
    await log.close();

    expect(outcomes).toEqual([
      'sampling/createMessage: -1 Refused by actor "coder": sampling/createMessage from server "fs" during tool "read_file" is denied by clientRequests.sampling.',
      'elicitation/create: answered',
    ]);
    // The denied request never reached the client.
    expect(sent).toEqual(['elicitation/create']);

    const { entries } = await readAuditLog(join(workspace, 'audit.jsonl'));
    const requests = entries.filter((entry) => entry.event === 'client-request');
    expect(requests.map((entry) => entry.clientRequest)).toEqual([
      { method: 'sampling/createMessage', serverName: 'fs', outcome: 'refused' },
      { method: 'elicitation/create', serverName: 'fs', outcome: 'forwarded', action: 'accept' },
    ]);
    expect(requests[0]).toMatchObject({
      toolId: reader.id,
      toolCallId: 'call-1',
      actor: 'coder',
      isError: true,
      args: { messages: 1, maxTokens: 9 },
      error: expect.stringContaining('denied by clientRequests.sampling'),
    });
    // The answer's content (what the user typed) is not recorded, only its action.
    expect(JSON.stringify(requests[1])).not.toContain('Ada');
    expect(formatAuditEntry(requests[1]!)).toContain(
      'elicitation/create from server "fs" forwarded (accept)',
    );
    // And the call itself is recorded as usual, after its requests.
    expect(entries.at(-1)).toMatchObject({ event: 'tool-call', toolName: 'read_file' });
  });
});
