import { BaseCallbackHandler } from '@langchain/core/callbacks/base';
import type { Serialized } from '@langchain/core/load/serializable';
import { AIMessage, ToolMessage } from '@langchain/core/messages';
import { RunnableLambda } from '@langchain/core/runnables';
import type { RunnableConfig } from '@langchain/core/runnables';
import { tool as langchainTool } from '@langchain/core/tools';
import type { StructuredTool } from '@langchain/core/tools';
import { MessagesAnnotation, START, StateGraph } from '@langchain/langgraph';
import { ToolNode } from '@langchain/langgraph/prebuilt';
import { describe, expect, it } from 'vitest';
import { toStructuredTool } from '../../src/mcp/structured-tool.js';
import type { ToolDescriptor } from '../../src/core/tool-descriptor.js';

// mcp/structured-tool.ts re-does the callback wiring of LangChain's `StructuredTool.call` (to
// skip schema validation and the work of a manager nobody listens to). This pins it to
// LangChain's own: the same tool, once ours and once made by LangChain's `tool()`, runs under
// the same configs, and every callback a handler sees must be the same (run ids aside). A
// LangChain upgrade that changes what its tools report fails here first.

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

function ours(): StructuredTool {
  return toStructuredTool(descriptor, (request) =>
    Promise.resolve({ content: [{ type: 'text', text: String(request.args['text']) }] }),
  );
}

function langchains(): StructuredTool {
  return langchainTool(async (args: { text?: string }) => String(args.text), {
    name: 'echo',
    description: 'Echoes its text.',
    schema: { type: 'object', properties: { text: { type: 'string' } } },
  }) as unknown as StructuredTool;
}

/** Both kinds, failing the way a transport failure does (a throw, not an `isError` result). */
const failing = [
  () => toStructuredTool(descriptor, () => Promise.reject(new Error('backend down'))),
  () =>
    langchainTool(
      async (): Promise<string> => {
        throw new Error('backend down');
      },
      {
        name: 'echo',
        description: 'Echoes its text.',
        schema: { type: 'object', properties: { text: { type: 'string' } } },
      },
    ) as unknown as StructuredTool,
];

/** `metadata` with LangGraph's per-task ids (in `checkpoint_ns`) made comparable. */
function stable(metadata: Record<string, unknown> | undefined): unknown {
  return JSON.parse(
    JSON.stringify(metadata ?? null).replace(
      /[0-9a-f]{8}(?:-[0-9a-f]{4}){3}-[0-9a-f]{12}/g,
      '<id>',
    ),
  );
}

/** Every tool callback with what a handler can read from it, run ids as parent/child links. */
class Recorder extends BaseCallbackHandler {
  name = 'pinning-recorder';
  readonly events: unknown[] = [];
  private readonly runs = new Map<string, string>();

  private label(runId: string | undefined): string | undefined {
    if (runId === undefined) return undefined;
    if (!this.runs.has(runId)) this.runs.set(runId, `run${this.runs.size + 1}`);
    return this.runs.get(runId);
  }

  override handleChainStart(_chain: Serialized, _inputs: unknown, runId: string): void {
    this.label(runId);
  }

  override handleToolStart(
    tool: Serialized,
    input: string,
    runId: string,
    parentRunId?: string,
    tags?: string[],
    metadata?: Record<string, unknown>,
    runName?: string,
    toolCallId?: string,
  ): void {
    this.events.push({
      event: 'start',
      toolName: (tool as { name?: unknown }).name,
      input,
      run: this.label(runId),
      parent: this.label(parentRunId),
      tags,
      metadata: stable(metadata),
      runName,
      toolCallId,
    });
  }

  override handleToolEnd(output: unknown, runId: string, parentRunId?: string): void {
    const message = ToolMessage.isInstance(output) ? output : undefined;
    this.events.push({
      event: 'end',
      run: this.label(runId),
      parent: this.label(parentRunId),
      output:
        message === undefined
          ? output
          : { content: message.content, toolCallId: message.tool_call_id, name: message.name },
    });
  }

  override handleToolError(error: unknown, runId: string): void {
    this.events.push({ event: 'error', run: this.label(runId), message: String(error) });
  }
}

/** Runs `use` on a fresh tool of each kind, each with its own recorder; returns both logs. */
async function both(
  use: (tool: StructuredTool, recorder: Recorder) => Promise<unknown>,
  makers: Array<() => StructuredTool> = [ours, langchains],
): Promise<{ ours: unknown[]; langchain: unknown[]; results: unknown[] }> {
  const results: unknown[] = [];
  const logs: unknown[][] = [];
  for (const make of makers) {
    const recorder = new Recorder();
    const tool = make();
    // The tools' own metadata differ by design (ours names the MCP tool): the same for both,
    // so what is compared is how it is merged and reported.
    tool.metadata = { own: true };
    const result = await use(tool, recorder);
    results.push(ToolMessage.isInstance(result) ? result.content : result);
    logs.push(recorder.events);
  }
  return { ours: logs[0]!, langchain: logs[1]!, results };
}

const toolCall = { id: 'call_1', name: 'echo', args: { text: 'hi' }, type: 'tool_call' as const };
const config = (recorder: Recorder): RunnableConfig => ({
  callbacks: [recorder],
  tags: ['t1'],
  metadata: { m: 1 },
  runName: 'named',
});

describe('toStructuredTool reports to callbacks exactly as a LangChain tool does', () => {
  it('a direct invoke with callbacks, tags, metadata and a run name in the config', async () => {
    const seen = await both((tool, recorder) => tool.invoke({ text: 'hi' }, config(recorder)));
    expect(seen.results).toEqual(['hi', 'hi']);
    // Precondition: the reference really reported something to compare with.
    expect(seen.langchain).toHaveLength(2);
    expect(seen.ours).toEqual(seen.langchain);
  });

  it('a tool call (what ToolNode sends): the tool call id and the ToolMessage at the end', async () => {
    const seen = await both((tool, recorder) => tool.invoke(toolCall, config(recorder)));
    expect(seen.results).toEqual(['hi', 'hi']);
    expect(seen.langchain).toContainEqual(expect.objectContaining({ toolCallId: 'call_1' }));
    expect(seen.ours).toEqual(seen.langchain);
  });

  it('callbacks set on the tool itself, and tags and metadata of the tool', async () => {
    const seen = await both((tool, recorder) => {
      tool.callbacks = [recorder];
      tool.tags = ['own'];
      return tool.invoke({ text: 'hi' });
    });
    expect(seen.langchain).toHaveLength(2);
    expect(seen.ours).toEqual(seen.langchain);
  });

  it('inside an enclosing run: the tool run is the child of the run that called it', async () => {
    const seen = await both((tool, recorder) =>
      RunnableLambda.from(async (text: string, config?: RunnableConfig) =>
        tool.invoke({ text }, config),
      ).invoke('hi', { callbacks: [recorder], tags: ['outer'] }),
    );
    expect(seen.langchain).toContainEqual(expect.objectContaining({ parent: 'run1' }));
    expect(seen.ours).toEqual(seen.langchain);
  });

  const modelTurn = (): { messages: AIMessage[] } => ({
    messages: [new AIMessage({ content: '', tool_calls: [toolCall] })],
  });
  /** A graph whose one node is ToolNode, as a model's tool calls meet it. */
  const graphOf = (tool: StructuredTool) =>
    new StateGraph(MessagesAnnotation)
      .addNode('tools', new ToolNode([tool]))
      .addEdge(START, 'tools')
      .compile();
  const toolNodeMessage = async (tool: StructuredTool, config: RunnableConfig) => {
    const { messages } = await graphOf(tool).invoke(modelTurn(), config);
    return messages.at(-1);
  };

  it("through ToolNode: the tool run is the child of ToolNode's, with the tool call id", async () => {
    // run1 the graph, run2 its start node, run3 the ToolNode node, run4 the tool.
    const seen = await both((tool, recorder) => toolNodeMessage(tool, config(recorder)));
    expect(seen.results).toEqual(['hi', 'hi']);
    expect(seen.langchain).toContainEqual(
      expect.objectContaining({ event: 'start', parent: 'run3', toolCallId: 'call_1' }),
    );
    expect(seen.ours).toEqual(seen.langchain);
  });

  it('through ToolNode, a tool that throws: the same error callback and error message', async () => {
    const seen = await both((tool, recorder) => toolNodeMessage(tool, config(recorder)), failing);
    expect(seen.langchain).toContainEqual(
      expect.objectContaining({ event: 'error', message: 'Error: backend down' }),
    );
    expect(seen.results[0]).toEqual(seen.results[1]);
    expect(String(seen.results[0])).toContain('backend down');
    expect(seen.ours).toEqual(seen.langchain);
  });

  it("ToolNode's streamEvents: the same tool events, names, tags, metadata and nesting", async () => {
    const streams: unknown[][] = [];
    for (const make of [ours, langchains]) {
      const tool = make();
      tool.metadata = { own: true };
      const events: unknown[] = [];
      for await (const event of graphOf(tool).streamEvents(modelTurn(), {
        version: 'v2',
        tags: ['t1'],
        metadata: { m: 1 },
      })) {
        if (!event.event.startsWith('on_tool_')) continue;
        const output: unknown = (event.data as { output?: unknown }).output;
        events.push({
          event: event.event,
          name: event.name,
          tags: event.tags,
          metadata: stable(event.metadata),
          parents: (event as { parent_ids?: unknown[] }).parent_ids?.length,
          input: (event.data as { input?: unknown }).input,
          output: ToolMessage.isInstance(output) ? output.content : output,
        });
      }
      streams.push(events);
    }
    expect(streams[1]).toHaveLength(2);
    expect(streams[0]).toEqual(streams[1]);
  });
});
