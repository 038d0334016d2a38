import { PassThrough } from 'node:stream';
import { afterEach, describe, expect, it } from 'vitest';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { Client as V1Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as V1HttpTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { parsePolicy } from '../../src/config/policy-schema.js';
import { createPolicyMiddleware } from '../../src/policy/policy-middleware.js';
import { serveEntries } from '../../src/serving/serve-entries.js';
import type { ServeEntriesOptions } from '../../src/serving/serve-entries.js';
import type { ToolEntry } from '../../src/core/tool-descriptor.js';
import { capabilities, descriptor, echoEntry, entry } from './helpers.js';

// `agents serve` over HTTP speaks 2026-07-28 (stateless) beside 2025-11-25 sessions, on one
// endpoint: SDK v2 clients (pinned and auto) and a v1 client, and raw requests for the
// validation errors a client library would never send.

const MODERN = '2026-07-28';
const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

interface Served {
  url: URL;
  /** Arguments `write_note` actually ran with, one item per run. */
  runs: Array<Record<string, unknown>>;
}

/** Serves `echo` (read) and `write_note` (write: the default policy asks) over HTTP. */
async function serve(extra: Partial<ServeEntriesOptions> = {}): Promise<Served> {
  const runs: Array<Record<string, unknown>> = [];
  const write: ToolEntry = entry(
    descriptor('write_note', {
      id: 'mcp:notes/write_note',
      source: 'mcp',
      serverName: 'notes',
      capabilities: capabilities('write'),
    }),
    async (args) => {
      runs.push(args);
      return { content: [{ type: 'text', text: 'written' }] };
    },
  );
  const stop = new AbortController();
  let listening: (url: URL) => void = () => undefined;
  const url = new Promise<URL>((resolve) => {
    listening = resolve;
  });
  const served = serveEntries({
    transport: 'http',
    entries: () => [echoEntry('echo'), write],
    middleware: [createPolicyMiddleware({ policy: parsePolicy({}), name: 'actor "t"' })],
    onListening: (info) => listening(info.url),
    signal: stop.signal,
    ...extra,
  });
  const endpoint = await Promise.race([url, served.then(() => undefined)]);
  if (endpoint === undefined) throw new Error('serveEntries ended before listening');
  cleanups.push(async () => {
    stop.abort();
    await served;
  });
  return { url: endpoint, runs };
}

type Answer = { action: 'accept'; content: Record<string, string> } | { action: 'decline' };

async function modernClient(
  url: URL,
  answer?: (message: string) => Answer,
  mode: 'auto' | { pin: string } = { pin: MODERN },
): Promise<Client> {
  const client = new Client(
    { name: 'ide', version: '1.0.0' },
    {
      versionNegotiation: { mode },
      ...(answer === undefined ? {} : { capabilities: { elicitation: { form: {} } } }),
    },
  );
  if (answer !== undefined) {
    client.setRequestHandler('elicitation/create', (request) =>
      answer((request.params as { message: string }).message),
    );
  }
  await client.connect(new StreamableHTTPClientTransport(url));
  cleanups.push(() => client.close());
  return client;
}

const envelope = (extra: Record<string, unknown> = {}) => ({
  'io.modelcontextprotocol/protocolVersion': MODERN,
  'io.modelcontextprotocol/clientInfo': { name: 'raw', version: '1.0.0' },
  'io.modelcontextprotocol/clientCapabilities': {},
  ...extra,
});

/** A JSON-RPC answer as the tests read it (untyped on purpose: they check its shape). */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- assertions read arbitrary fields
type RpcAnswer = Record<string, any>;

/** One raw 2026-07-28 POST; the JSON-RPC answer and the HTTP status. */
async function post(
  url: URL,
  body: { id: number; method: string; params?: Record<string, unknown> },
  headers: Record<string, string> = {},
): Promise<{ status: number; message: RpcAnswer; session: string | null }> {
  const name = (body.params?.['name'] as string | undefined) ?? undefined;
  const response = await fetch(url, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': MODERN,
      'mcp-method': body.method,
      ...(name === undefined ? {} : { 'mcp-name': name }),
      ...headers,
    },
    body: JSON.stringify({ jsonrpc: '2.0', ...body }),
  });
  const text = await response.text();
  // A JSON body, or an SSE stream whose last data line is the answer.
  const json = response.headers.get('content-type')?.includes('text/event-stream')
    ? text
        .split('\n')
        .filter((line) => line.startsWith('data:'))
        .map((line) => JSON.parse(line.slice(5)))
        .at(-1)
    : JSON.parse(text);
  return {
    status: response.status,
    message: json,
    session: response.headers.get('mcp-session-id'),
  };
}

function text(result: unknown): string {
  const content = (result as { content?: Array<{ type: string; text?: string }> }).content ?? [];
  return content.map((block) => block.text ?? '').join('');
}

describe('agents serve over HTTP: 2026-07-28 beside 2025-11-25', () => {
  it('an SDK v2 client pinned to 2026-07-28 lists (with caching hints) and calls tools; no session is made', async () => {
    const { url } = await serve();
    const client = await modernClient(url);
    expect(client.getNegotiatedProtocolVersion()).toBe(MODERN);
    const listed = await client.listTools();
    expect(listed.tools.map((tool) => tool.name)).toEqual(['echo', 'write_note']);
    const raw = await post(url, { id: 3, method: 'tools/list', params: { _meta: envelope() } });
    expect(raw.status).toBe(200);
    expect(raw.session).toBeNull();
    expect(raw.message.result).toMatchObject({ ttlMs: 5000, cacheScope: 'private' });
    const called = await client.callTool({ name: 'echo', arguments: { text: 'hi' } });
    expect(text(called)).toBe('{"text":"hi"}');
    const discover = await post(url, {
      id: 4,
      method: 'server/discover',
      params: { _meta: envelope() },
    });
    expect(discover.message.result.supportedVersions).toEqual([MODERN]);
    expect(discover.message.result.capabilities.tools).toEqual({ listChanged: true });
  });

  it('puts an approval to a 2026 client as input_required: approve runs the tool once, reject never', async () => {
    const { url, runs } = await serve();
    const asked: string[] = [];
    let decision = 'approve';
    const client = await modernClient(url, (message) => {
      asked.push(message);
      return { action: 'accept', content: { decision } };
    });
    const approved = await client.callTool({ name: 'write_note', arguments: { text: 'a' } });
    expect(text(approved)).toBe('written');
    expect(runs).toEqual([{ text: 'a' }]);
    expect(asked).toHaveLength(1);
    expect(asked[0]).toContain('Approve a call of tool "write_note"');

    decision = 'reject';
    const rejected = await client.callTool({ name: 'write_note', arguments: { text: 'b' } });
    expect(rejected.isError).toBe(true);
    expect(text(rejected)).toContain('rejected in the MCP client');
    expect(runs).toHaveLength(1);
  });

  it('runs nothing before the answer, and refuses a tampered or replayed requestState with -32602', async () => {
    const { url, runs } = await serve();
    const caps = { 'io.modelcontextprotocol/clientCapabilities': { elicitation: { form: {} } } };
    const first = await post(url, {
      id: 10,
      method: 'tools/call',
      params: { name: 'write_note', arguments: { text: 'x' }, _meta: envelope(caps) },
    });
    expect(first.message.result.resultType).toBe('input_required');
    const [key, question] = Object.entries(first.message.result.inputRequests)[0]! as [
      string,
      { method: string; params: { message: string } },
    ];
    expect(question.method).toBe('elicitation/create');
    expect(question.params.message).toContain('write_note');
    const state = first.message.result.requestState as string;
    expect(runs).toEqual([]);

    const approve = { [key]: { action: 'accept', content: { decision: 'approve' } } };
    // Flip one character of the signed state: refused, and the tool still has not run.
    const flipped = state.slice(0, 10) + (state[10] === 'A' ? 'B' : 'A') + state.slice(11);
    const tampered = await post(url, {
      id: 11,
      method: 'tools/call',
      params: {
        name: 'write_note',
        arguments: { text: 'x' },
        inputResponses: approve,
        requestState: flipped,
        _meta: envelope(caps),
      },
    });
    expect(tampered.message.error.code).toBe(-32602);
    expect(tampered.message.id).toBe(11);
    expect(runs).toEqual([]);

    const retry = await post(url, {
      id: 12,
      method: 'tools/call',
      params: {
        name: 'write_note',
        arguments: { text: 'x' },
        inputResponses: approve,
        requestState: state,
        _meta: envelope(caps),
      },
    });
    expect(retry.message.result.resultType).toBe('complete');
    expect(text(retry.message.result)).toBe('written');
    expect(runs).toEqual([{ text: 'x' }]);

    // The same state again: that call is over, so it is refused rather than run twice.
    const replayed = await post(url, {
      id: 13,
      method: 'tools/call',
      params: {
        name: 'write_note',
        arguments: { text: 'x' },
        inputResponses: approve,
        requestState: state,
        _meta: envelope(caps),
      },
    });
    expect(replayed.message.error.code).toBe(-32602);
    expect(runs).toHaveLength(1);
  });

  it('refuses an approval to a 2026 client that declared no elicitation, naming what to do', async () => {
    const { url, runs } = await serve();
    const client = await modernClient(url);
    const refused = await client.callTool({ name: 'write_note', arguments: { text: 'a' } });
    expect(refused.isError).toBe(true);
    expect(text(refused)).toContain('did not declare the elicitation capability');
    expect(runs).toEqual([]);
  });

  it('answers malformed 2026 requests with the spec errors, carrying the request id', async () => {
    const { url } = await serve();
    const missing = await post(url, { id: 21, method: 'tools/list', params: {} });
    expect(missing.status).toBe(400);
    expect(missing.message).toMatchObject({ id: 21, error: { code: -32602 } });

    const future = '2099-01-01';
    const unsupported = await post(
      url,
      {
        id: 22,
        method: 'tools/list',
        params: { _meta: envelope({ 'io.modelcontextprotocol/protocolVersion': future }) },
      },
      { 'mcp-protocol-version': future },
    );
    expect(unsupported.status).toBe(400);
    expect(unsupported.message.id).toBe(22);
    expect(unsupported.message.error.code).toBe(-32022);
    expect(unsupported.message.error.data.supported).toEqual([MODERN]);

    const mismatch = await post(url, {
      id: 23,
      method: 'tools/list',
      params: { _meta: envelope({ 'io.modelcontextprotocol/protocolVersion': future }) },
    });
    expect(mismatch.status).toBe(400);
    expect(mismatch.message).toMatchObject({ id: 23, error: { code: -32020 } });

    const wrongMethod = await post(
      url,
      { id: 24, method: 'tools/list', params: { _meta: envelope() } },
      { 'mcp-method': 'tools/call' },
    );
    expect(wrongMethod.status).toBe(400);
    expect(wrongMethod.message).toMatchObject({ id: 24, error: { code: -32020 } });

    const removed = await post(url, { id: 25, method: 'ping', params: { _meta: envelope() } });
    expect(removed.status).toBe(404);
    expect(removed.message).toMatchObject({ id: 25, error: { code: -32601 } });
  });

  it('checks Mcp-Param-* headers against the body for a tool declaring x-mcp-header (SEP-2243)', async () => {
    const route = echoEntry('route', {
      inputSchema: {
        type: 'object',
        properties: {
          region: { type: 'string', 'x-mcp-header': 'Region' },
          text: { type: 'string' },
        },
      },
    });
    const { url } = await serve({ entries: () => [echoEntry('echo'), route] });
    // The SDK v2 client mirrors the argument into the header itself: accepted.
    const client = await modernClient(url);
    const mirrored = await client.callTool({ name: 'route', arguments: { region: 'eu-west' } });
    expect(text(mirrored)).toBe('{"region":"eu-west"}');

    let id = 50;
    const call = (args: Record<string, unknown>, headers: Record<string, string> = {}) =>
      post(
        url,
        {
          id: ++id,
          method: 'tools/call',
          params: { name: 'route', arguments: args, _meta: envelope() },
        },
        headers,
      );
    const refused = async (answer: Awaited<ReturnType<typeof call>>, what: RegExp) => {
      expect(answer.status).toBe(400);
      expect(answer.message.id).toBe(id);
      expect(answer.message.error.code).toBe(-32020);
      expect(answer.message.error.message).toMatch(what);
    };
    await refused(await call({ region: 'eu-west' }), /Mcp-Param-Region header is absent/);
    await refused(
      await call({ region: 'eu-west' }, { 'mcp-param-region': 'us-east' }),
      /decodes to "us-east"/,
    );
    // Base64 without its padding, or with characters outside the alphabet: refused.
    await refused(
      await call({ region: 'eu-west' }, { 'mcp-param-region': '=?base64?ZXUtd2VzdA?=' }),
      /invalid Base64/,
    );
    await refused(
      await call({ region: 'eu-west' }, { 'mcp-param-region': '=?base64?ZXUt!!d2VzdA==?=' }),
      /invalid Base64/,
    );
    const base64 = await call(
      { region: 'eu-west' },
      { 'mcp-param-region': '=?base64?ZXUtd2VzdA==?=' },
    );
    expect(base64.status).toBe(200);
    expect(text(base64.message.result)).toBe('{"region":"eu-west"}');
    // Without the whole wrapper the value is literal, and no value in the body needs no header.
    const literal = await call({ region: '=?base64?x' }, { 'mcp-param-region': '=?base64?x' });
    expect(literal.status).toBe(200);
    expect((await call({ text: 'no region' })).status).toBe(200);
    // Tools without the annotation are not affected.
    const echo = await post(url, {
      id: 70,
      method: 'tools/call',
      params: { name: 'echo', arguments: { text: 'x' }, _meta: envelope() },
    });
    expect(echo.status).toBe(200);
  });

  it('checks Host and Origin on stateless requests too, and accepts valid localhost ones', async () => {
    const { url } = await serve();
    const body = { id: 31, method: 'tools/list', params: { _meta: envelope() } };
    const foreignOrigin = await fetch(url, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        'mcp-protocol-version': MODERN,
        'mcp-method': 'tools/list',
        origin: 'http://evil.example',
      },
      body: JSON.stringify({ jsonrpc: '2.0', ...body }),
    });
    expect(foreignOrigin.status).toBe(403);
    const local = await post(url, body, { origin: `http://localhost:${url.port}` });
    expect(local.status).toBe(200);
    expect(local.message.result.tools).toHaveLength(2);
  });

  it('still serves a v1 (2025-11-25) client with a session, and an SDK v2 client in auto mode picks 2026-07-28', async () => {
    const { url, runs } = await serve();
    const v1 = new V1Client({ name: 'old-ide', version: '1.0.0' });
    const transport = new V1HttpTransport(url);
    await v1.connect(transport);
    cleanups.push(() => v1.close());
    expect(transport.sessionId).toMatch(/^[0-9a-f-]{36}$/);
    expect(transport.protocolVersion).toBe('2025-11-25');
    expect((await v1.listTools()).tools.map((tool) => tool.name)).toEqual(['echo', 'write_note']);
    // Prompts and resources: empty lists on 2025 too, and a clear not-found for a read.
    expect((await v1.listPrompts()).prompts).toEqual([]);
    expect((await v1.listResources()).resources).toEqual([]);
    await expect(v1.readResource({ uri: 'file:///etc/passwd' })).rejects.toThrow(
      /Resource not found: file:\/\/\/etc\/passwd \(this server serves tools only\)/,
    );
    expect(text(await v1.callTool({ name: 'echo', arguments: { text: 'old' } }))).toBe(
      '{"text":"old"}',
    );

    const auto = await modernClient(url, undefined, 'auto');
    expect(auto.getNegotiatedProtocolVersion()).toBe(MODERN);
    expect(text(await auto.callTool({ name: 'echo', arguments: { text: 'new' } }))).toBe(
      '{"text":"new"}',
    );
    expect(runs).toEqual([]);
  });

  it('tells an open subscriptions/listen stream when the tool list changes, and only if asked', async () => {
    let changed: () => void = () => undefined;
    let extra: ToolEntry[] = [];
    const { url } = await serve({
      entries: () => [echoEntry('echo'), ...extra],
      subscribe: (listener) => {
        changed = listener;
        return () => undefined;
      },
    });
    const listen = async (notifications: Record<string, boolean>): Promise<string> => {
      const stop = new AbortController();
      const response = await fetch(url, {
        method: 'POST',
        signal: stop.signal,
        headers: {
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          'mcp-protocol-version': MODERN,
          'mcp-method': 'subscriptions/listen',
        },
        body: JSON.stringify({
          jsonrpc: '2.0',
          id: 41,
          method: 'subscriptions/listen',
          params: { notifications, _meta: envelope() },
        }),
      });
      const reader = response.body!.getReader();
      let seen = '';
      const read = async (): Promise<void> => {
        for (;;) {
          const { done, value } = await reader.read();
          if (done) return;
          seen += new TextDecoder().decode(value);
        }
      };
      const reading = read().catch(() => undefined);
      await expect.poll(() => seen).toContain('notifications/subscriptions/acknowledged');
      extra = [echoEntry('echo2')];
      changed();
      // Long enough for a notification to arrive when one is due.
      await new Promise((resolve) => setTimeout(resolve, 500));
      stop.abort();
      await reading;
      return seen;
    };
    const tools = await listen({ toolsListChanged: true });
    expect(tools).toContain('notifications/tools/list_changed');
    expect(tools).toContain('io.modelcontextprotocol/subscriptionId');
    const prompts = await listen({ promptsListChanged: true });
    expect(prompts).not.toContain('notifications/tools/list_changed');
  });

  it('over stdio too: a 2026 connection hears tools/list_changed on its subscriptions/listen, only when subscribed', async () => {
    let changed: () => void = () => undefined;
    let extra: ToolEntry[] = [];
    const stdin = new PassThrough();
    const stdout = new PassThrough();
    const stop = new AbortController();
    const served = serveEntries({
      transport: 'stdio',
      stdio: { stdin, stdout },
      entries: () => [echoEntry('echo'), ...extra],
      middleware: [],
      subscribe: (listener) => {
        changed = listener;
        return () => undefined;
      },
      signal: stop.signal,
    });
    cleanups.push(async () => {
      stop.abort();
      await served;
    });
    const lines: RpcAnswer[] = [];
    let buffered = '';
    stdout.on('data', (chunk: Buffer) => {
      buffered += chunk.toString('utf8');
      for (let end = buffered.indexOf('\n'); end >= 0; end = buffered.indexOf('\n')) {
        lines.push(JSON.parse(buffered.slice(0, end)));
        buffered = buffered.slice(end + 1);
      }
    });
    const send = (message: Record<string, unknown>): void => {
      stdin.write(`${JSON.stringify({ jsonrpc: '2.0', ...message })}\n`);
    };
    const changes = () => lines.filter((l) => l.method === 'notifications/tools/list_changed');

    send({ id: 1, method: 'tools/list', params: { _meta: envelope() } });
    // The first 2026 message loads the SDK's stdio entry: slow on a loaded machine.
    await expect
      .poll(() => lines.find((l) => l.id === 1)?.result?.tools?.length, { timeout: 20_000 })
      .toBe(1);
    // No subscription yet: a change is not pushed at the client.
    extra = [echoEntry('echo2')];
    changed();
    send({ id: 2, method: 'tools/list', params: { _meta: envelope() } });
    await expect.poll(() => lines.find((l) => l.id === 2)?.result?.tools?.length).toBe(2);
    expect(changes()).toEqual([]);

    send({
      id: 3,
      method: 'subscriptions/listen',
      params: { notifications: { toolsListChanged: true }, _meta: envelope() },
    });
    await expect
      .poll(() => lines.some((l) => l.method === 'notifications/subscriptions/acknowledged'))
      .toBe(true);
    extra = [echoEntry('echo2'), echoEntry('echo3')];
    changed();
    await expect.poll(() => changes().length).toBe(1);
    expect(changes()[0]!.params._meta['io.modelcontextprotocol/subscriptionId']).toBeDefined();
    send({ id: 4, method: 'tools/list', params: { _meta: envelope() } });
    await expect.poll(() => lines.find((l) => l.id === 4)?.result?.tools?.length).toBe(3);
  });
});
