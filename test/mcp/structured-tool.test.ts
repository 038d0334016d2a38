import { AsyncLocalStorage } from 'node:async_hooks';
import { BaseCallbackHandler } from '@langchain/core/callbacks/base';
import { awaitAllCallbacks } from '@langchain/core/callbacks/promises';
import { registerConfigureHook, setContextVariable } from '@langchain/core/context';
import { ToolMessage } from '@langchain/core/messages';
import { RunnableLambda } from '@langchain/core/runnables';
import { AsyncLocalStorageProviderSingleton } from '@langchain/core/singletons';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { toStructuredTool } from '../../src/mcp/structured-tool.js';
import type { ToolCallHandler, ToolCallRequest } from '../../src/core/tool-middleware.js';
import type { ToolDescriptor } from '../../src/core/tool-descriptor.js';

const verdict = { value: true, source: 'override' as const, reason: 'test' };
const descriptor: ToolDescriptor = {
  id: 'mcp:fx/echo',
  name: 'echo',
  originalName: 'echo',
  source: 'mcp',
  serverName: 'fx',
  description: 'Echoes its text.',
  inputSchema: { type: 'object', properties: { text: { type: 'string' } } },
  capabilities: {
    readOnly: verdict,
    writes: { ...verdict, value: false },
    destructive: { ...verdict, value: false },
    openWorld: { ...verdict, value: false },
    disagreements: [],
  },
  pathArguments: [],
  fingerprint: 'echo',
};

/** A handler that echoes `text` (or fails when `fail` is set) and records each request. */
function echoHandler(seen: ToolCallRequest[] = []): ToolCallHandler {
  return (request) => {
    seen.push(request);
    if (request.args['fail'] === true) {
      return Promise.resolve({ isError: true, content: [{ type: 'text', text: 'failed' }] });
    }
    return Promise.resolve({
      content: [{ type: 'text', text: String(request.args['text']) }],
      structuredContent: { text: request.args['text'] },
    });
  };
}

/** Records the tool callbacks LangChain delivers. */
class Recorder extends BaseCallbackHandler {
  name = 'recorder';
  readonly events: Array<{ event: string; value: unknown; runName?: string; toolCallId?: string }> =
    [];

  override handleToolStart(
    _tool: unknown,
    input: string,
    _runId: string,
    _parentRunId?: string,
    _tags?: string[],
    _metadata?: Record<string, unknown>,
    runName?: string,
    toolCallId?: string,
  ): void {
    this.events.push({
      event: 'start',
      value: input,
      ...(runName === undefined ? {} : { runName }),
      ...(toolCallId === undefined ? {} : { toolCallId }),
    });
  }

  override handleToolEnd(output: unknown): void {
    this.events.push({ event: 'end', value: output });
  }

  override handleToolError(error: unknown): void {
    this.events.push({ event: 'error', value: (error as Error).message });
  }
}

const toolCall = {
  id: 'call_1',
  name: 'echo',
  args: { text: 'hi' },
  type: 'tool_call' as const,
};

afterEach(() => {
  vi.useRealTimers();
  vi.restoreAllMocks();
  vi.unstubAllEnvs();
});

describe('toStructuredTool callbacks', () => {
  it('returns the same outputs with and without callbacks', async () => {
    const tool = toStructuredTool(descriptor, echoHandler());
    const recorder = new Recorder();
    expect(await tool.invoke({ text: 'hi' })).toBe('hi');
    expect(await tool.invoke({ text: 'hi' }, { callbacks: [recorder] })).toBe('hi');
    const plain = (await tool.invoke(toolCall)) as ToolMessage;
    const traced = (await tool.invoke(toolCall, { callbacks: [recorder] })) as ToolMessage;
    for (const message of [plain, traced]) {
      expect(ToolMessage.isInstance(message)).toBe(true);
      expect(message).toMatchObject({
        content: 'hi',
        status: 'success',
        tool_call_id: 'call_1',
        name: 'echo',
        artifact: { structuredContent: { text: 'hi' } },
      });
    }
    expect(recorder.events.map((event) => event.event)).toEqual(['start', 'end', 'start', 'end']);
  });

  it('fires start and end for callbacks in the config, with input, run name and tool call id', async () => {
    const tool = toStructuredTool(descriptor, echoHandler());
    const recorder = new Recorder();
    await tool.invoke(toolCall, { callbacks: [recorder] });
    expect(recorder.events[0]).toEqual({
      event: 'start',
      value: '{"text":"hi"}',
      runName: 'echo',
      toolCallId: 'call_1',
    });
    expect(recorder.events[1]?.event).toBe('end');
    expect(ToolMessage.isInstance(recorder.events[1]?.value)).toBe(true);
  });

  it('fires error for a direct invoke of an error result, and end for a tool call', async () => {
    const tool = toStructuredTool(descriptor, echoHandler());
    const recorder = new Recorder();
    await expect(tool.invoke({ fail: true }, { callbacks: [recorder] })).rejects.toMatchObject({
      code: 'TOOL_CALL_FAILED',
    });
    const message = (await tool.invoke(
      { ...toolCall, args: { fail: true } },
      { callbacks: [recorder] },
    )) as ToolMessage;
    expect(message.status).toBe('error');
    expect(recorder.events.map((event) => event.event)).toEqual(['start', 'error', 'start', 'end']);
    expect(recorder.events[1]?.value).toMatch(/returned an error: failed/);
  });

  it('fires callbacks set on the tool itself', async () => {
    const tool = toStructuredTool(descriptor, echoHandler());
    const recorder = new Recorder();
    tool.callbacks = [recorder];
    expect(await tool.invoke({ text: 'own' })).toBe('own');
    expect(recorder.events.map((event) => event.event)).toEqual(['start', 'end']);
  });

  it('fires the callbacks of an enclosing run when invoked without a config', async () => {
    const seen: ToolCallRequest[] = [];
    const tool = toStructuredTool(descriptor, echoHandler(seen));
    const recorder = new Recorder();
    const outer = RunnableLambda.from(async (text: string) => tool.invoke({ text }));
    expect(
      await outer.invoke('inner', { callbacks: [recorder], configurable: { thread_id: 't' } }),
    ).toBe('inner');
    expect(recorder.events.filter((event) => event.event === 'start')).toContainEqual(
      expect.objectContaining({ value: '{"text":"inner"}', runName: 'echo' }),
    );
    // The implicit config reaches the handler too (thread id from the enclosing run).
    expect(seen[0]?.context.threadId).toBe('t');
  });

  it('fires a handler added by a configure hook (a context variable)', async () => {
    AsyncLocalStorageProviderSingleton.initializeGlobalInstance(new AsyncLocalStorage());
    const tool = toStructuredTool(descriptor, echoHandler());
    const recorder = new Recorder();
    const storage = AsyncLocalStorageProviderSingleton.getInstance();
    // Scoped to this run so the hook does not leak into other tests.
    await storage.run({}, async () => {
      registerConfigureHook({ contextVar: 'agents_test_recorder' });
      setContextVariable('agents_test_recorder', recorder);
      expect(await tool.invoke({ text: 'hooked' })).toBe('hooked');
    });
    expect(recorder.events.map((event) => event.event)).toEqual(['start', 'end']);
  });

  it('sees LANGCHAIN_VERBOSE switched on and off within the environment re-read window', async () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    vi.setSystemTime(new Date('2030-01-01T00:00:00Z'));
    const log = vi.spyOn(console, 'log').mockImplementation(() => undefined);
    const tool = toStructuredTool(descriptor, echoHandler());
    await tool.invoke({ text: 'quiet' });
    vi.stubEnv('LANGCHAIN_VERBOSE', 'true');
    vi.setSystemTime(new Date('2030-01-01T00:00:01Z'));
    expect(await tool.invoke({ text: 'loud' })).toBe('loud');
    await awaitAllCallbacks();
    const printed = log.mock.calls.map((call) => String(call[0]));
    expect(printed.some((line) => line.includes('[tool/start]'))).toBe(true);
    expect(printed.some((line) => line.includes('[tool/end]') && line.includes('loud'))).toBe(true);
    expect(printed.some((line) => line.includes('quiet'))).toBe(false);

    vi.unstubAllEnvs();
    vi.setSystemTime(new Date('2030-01-01T00:00:02Z'));
    log.mockClear();
    expect(await tool.invoke({ text: 'quiet again' })).toBe('quiet again');
    await awaitAllCallbacks();
    expect(log).not.toHaveBeenCalled();
  });
});

describe('toStructuredTool error styles', () => {
  it("returns an error ToolMessage by default and throws for ToolNode with errors: 'throw', like @langchain/mcp-adapters", async () => {
    const { ToolNode } = await import('@langchain/langgraph/prebuilt');
    const { AIMessage } = await import('@langchain/core/messages');
    const call = new AIMessage({
      content: '',
      tool_calls: [{ id: 'c1', name: 'echo', args: { fail: true }, type: 'tool_call' }],
    });
    const run = async (tool: ReturnType<typeof toStructuredTool>) =>
      ((await new ToolNode([tool]).invoke({ messages: [call] })) as { messages: ToolMessage[] })
        .messages[0]!;

    const ours = await run(toStructuredTool(descriptor, echoHandler()));
    expect(ours.status).toBe('error');
    expect(ours.content).toBe('failed');
    expect(ours.artifact).toEqual({ isError: true });

    const peer = await run(toStructuredTool(descriptor, echoHandler(), { errors: 'throw' }));
    expect(peer.status).toBe('error');
    expect(peer.content).toBe(
      'Error: Tool "echo" (mcp:fx/echo) returned an error: failed\n Please fix your mistakes.',
    );
    await expect(
      new ToolNode([toStructuredTool(descriptor, echoHandler(), { errors: 'throw' })], {
        handleToolErrors: false,
      }).invoke({ messages: [call] }),
    ).rejects.toMatchObject({ code: 'TOOL_CALL_FAILED' });
  });
});
