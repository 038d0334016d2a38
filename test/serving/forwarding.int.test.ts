import { mkdir, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import {
  CreateMessageRequestSchema,
  ElicitRequestSchema,
  LoggingMessageNotificationSchema,
} from '@modelcontextprotocol/sdk/types.js';
import type {
  CreateMessageRequest,
  ElicitRequest,
  LoggingMessageNotification,
} from '@modelcontextprotocol/sdk/types.js';
import { readAuditLog } from '../../src/policy/audit-log.js';
import { makeProjectRepo } from '../cli/helpers.js';
import { FIXTURE_SERVER_PATH, TSX_LOADER } from '../fixtures/fixture-process.js';
import { endpointOf, SPAWN_TIMEOUT, spawnServe, waitFor } from './cli-helpers.js';

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/**
 * A git project whose skill `forward` runs the fixture server (a real process) with the tools
 * that ask the client for sampling and elicitation and send log messages while they run; and
 * actor `coder` on that skill with the given policy lines.
 */
async function project(prefix: string, policyYaml: string[] = []): Promise<string> {
  const dir = await makeProjectRepo(prefix);
  cleanups.push(() => rm(dir, { recursive: true, force: true }));
  const workspace = join(dir, '.agents');
  await mkdir(join(workspace, 'skills'), { recursive: true });
  await mkdir(join(workspace, 'actors'), { recursive: true });
  const args = [
    '--import',
    TSX_LOADER,
    FIXTURE_SERVER_PATH,
    '--transport',
    'stdio',
    '--tools',
    'basic',
    '--client-requests',
  ];
  await writeFile(
    join(workspace, 'skills', 'forward.yaml'),
    [
      'description: Fixture tools that ask their client for sampling and elicitation',
      'mcpServers:',
      '  - name: fixture',
      '    transport: stdio',
      `    command: ${JSON.stringify(process.execPath)}`,
      `    args: ${JSON.stringify(args)}`,
      '    trusted: true',
      '',
    ].join('\n'),
  );
  await writeFile(
    join(workspace, 'actors', 'coder.yaml'),
    ['description: Serves the forwarding fixture', 'skills: [forward]', ...policyYaml, ''].join(
      '\n',
    ),
  );
  return dir;
}

function text(result: unknown): string {
  const content = (result as { content: Array<{ type: string; text?: string }> }).content;
  return content.map((block) => block.text ?? '').join('');
}

describe('agents serve forwards what upstream servers ask of their client', () => {
  it(
    'forwards sampling, elicitation and log messages (filtered by logging/setLevel) over stdio to a client that declares them, and audits each request',
    async () => {
      const dir = await project('serve-forward-stdio-');
      const spawned = spawnServe(dir, ['--skill', 'forward']);
      cleanups.push(spawned.stop);

      const client = new Client(
        { name: 'ide', version: '1.0.0' },
        { capabilities: { sampling: {}, elicitation: { form: {} } } },
      );
      const samplingRequests: CreateMessageRequest['params'][] = [];
      const elicitations: ElicitRequest['params'][] = [];
      const logs: LoggingMessageNotification['params'][] = [];
      client.setRequestHandler(CreateMessageRequestSchema, (request) => {
        samplingRequests.push(request.params);
        return {
          model: 'ide-model',
          role: 'assistant',
          content: { type: 'text', text: 'blue' },
        };
      });
      client.setRequestHandler(ElicitRequestSchema, (request) => {
        elicitations.push(request.params);
        return { action: 'accept', content: { answer: '42' } };
      });
      client.setNotificationHandler(LoggingMessageNotificationSchema, (notification) => {
        logs.push(notification.params);
      });
      await client.connect(new StdioServerTransport(spawned.child.stdout, spawned.child.stdin));
      cleanups.push(() => client.close());

      // logging is declared, and honoured (it answered -32601 before).
      expect(client.getServerCapabilities()?.logging).toEqual({});
      await client.setLoggingLevel('warning');

      const sampled = await client.callTool({
        name: 'ask_model',
        arguments: { prompt: 'Sky colour?' },
      });
      expect(text(sampled)).toBe('model ide-model said: blue');
      expect(samplingRequests).toHaveLength(1);
      expect(samplingRequests[0]).toMatchObject({
        systemPrompt: 'Answer in one word.',
        maxTokens: 20,
        messages: [{ role: 'user', content: { type: 'text', text: 'Sky colour?' } }],
      });

      const asked = await client.callTool({
        name: 'ask_user',
        arguments: { question: 'The answer?' },
      });
      expect(text(asked)).toBe('user accept: 42');
      expect(elicitations).toEqual([
        expect.objectContaining({ mode: 'form', message: 'The answer?' }),
      ]);

      const logged = await client.callTool({
        name: 'log_message',
        arguments: { levels: ['debug', 'info', 'warning', 'error'], text: 'disk low' },
      });
      expect(text(logged)).toBe('logged 4');
      // Below the level the client set: not sent. The logger names the upstream server.
      await expect.poll(() => logs.length).toBe(2);
      expect(logs).toEqual([
        { level: 'warning', logger: 'fixture/fixture', data: 'warning: disk low' },
        { level: 'error', logger: 'fixture/fixture', data: 'error: disk low' },
      ]);

      // Every forwarded request is in the audit log, tied to the tool call that made it.
      const audit = join(dir, '.agents', 'audit.jsonl');
      await expect
        .poll(
          async () =>
            (await readAuditLog(audit)).entries.filter((e) => e.event === 'client-request').length,
        )
        .toBe(2);
      const { entries } = await readAuditLog(audit);
      const forwarded = entries.filter((entry) => entry.event === 'client-request');
      expect(forwarded.map((entry) => [entry.toolName, entry.clientRequest])).toEqual([
        [
          'ask_model',
          {
            method: 'sampling/createMessage',
            serverName: 'fixture',
            outcome: 'forwarded',
            model: 'ide-model',
          },
        ],
        [
          'ask_user',
          {
            method: 'elicitation/create',
            serverName: 'fixture',
            outcome: 'forwarded',
            action: 'accept',
          },
        ],
      ]);
      expect(forwarded[0]!.args).toMatchObject({ messages: 1, maxTokens: 20 });
      expect(forwarded[1]!.args).toMatchObject({ mode: 'form', fields: ['answer'] });
      expect(forwarded.every((entry) => entry.toolCallId?.startsWith('mcp-local-'))).toBe(true);
    },
    SPAWN_TIMEOUT,
  );

  it(
    'answers -32601 for a capability the client did not declare, and the policy refuses (audited) what it denies, over HTTP',
    async () => {
      const dir = await project('serve-forward-http-', [
        'policy:',
        '  clientRequests:',
        '    elicitation: deny',
      ]);
      const spawned = spawnServe(dir, ['--actor', 'coder', '--transport', 'http']);
      cleanups.push(spawned.stop);
      const url = await waitFor(() => endpointOf(spawned), 'the endpoint URL', spawned);

      // Declares neither sampling nor elicitation.
      const bare = new Client({ name: 'bare', version: '1.0.0' });
      await bare.connect(new StreamableHTTPClientTransport(new URL(url)));
      cleanups.push(() => bare.close());
      const refused = await bare.callTool({ name: 'ask_model', arguments: { prompt: 'hi' } });
      expect(text(refused)).toMatch(/^error -32601: /);
      expect(text(refused)).toContain(
        'The MCP client "bare" behind this tool call did not declare the sampling capability, so sampling/createMessage from server "fixture" cannot be forwarded to it.',
      );

      // Declares elicitation, but the actor's policy denies it: the client is never asked.
      const asking = new Client(
        { name: 'asking', version: '1.0.0' },
        { capabilities: { elicitation: { form: {} }, sampling: {} } },
      );
      let asked = 0;
      asking.setRequestHandler(ElicitRequestSchema, () => {
        asked++;
        return { action: 'accept', content: { answer: 'yes' } };
      });
      asking.setRequestHandler(CreateMessageRequestSchema, () => ({
        model: 'http-model',
        role: 'assistant',
        content: { type: 'text', text: 'green' },
      }));
      await asking.connect(new StreamableHTTPClientTransport(new URL(url)));
      cleanups.push(() => asking.close());
      const denied = await asking.callTool({ name: 'ask_user', arguments: { question: 'ok?' } });
      expect(text(denied)).toMatch(/^error -1: /);
      expect(text(denied)).toContain(
        'Refused by actor "coder": elicitation/create from server "fixture" during tool "ask_user" is denied by clientRequests.elicitation.',
      );
      expect(asked).toBe(0);
      // Sampling is allowed, and travels on the call's own response stream over HTTP.
      const sampled = await asking.callTool({ name: 'ask_model', arguments: { prompt: 'Grass?' } });
      expect(text(sampled)).toBe('model http-model said: green');

      const audit = join(dir, '.agents', 'audit.jsonl');
      await expect
        .poll(
          async () =>
            (await readAuditLog(audit)).entries.filter((e) => e.event === 'client-request').length,
        )
        .toBe(3);
      const requests = (await readAuditLog(audit)).entries
        .filter((entry) => entry.event === 'client-request')
        .map((entry) => ({ ...entry.clientRequest, isError: entry.isError }));
      expect(requests).toEqual([
        {
          method: 'sampling/createMessage',
          serverName: 'fixture',
          outcome: 'refused',
          isError: true,
        },
        { method: 'elicitation/create', serverName: 'fixture', outcome: 'refused', isError: true },
        {
          method: 'sampling/createMessage',
          serverName: 'fixture',
          outcome: 'forwarded',
          model: 'http-model',
          isError: false,
        },
      ]);
    },
    SPAWN_TIMEOUT,
  );
});
