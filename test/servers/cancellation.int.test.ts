import { AIMessage, type BaseMessage } from '@langchain/core/messages';
import { END, MessagesAnnotation, START, StateGraph } from '@langchain/langgraph';
import { ToolNode } from '@langchain/langgraph/prebuilt';
import { afterEach, describe, expect, it } from 'vitest';
import { AgentsErrorCode, ServerError } from '../../src/errors.js';
import { toStructuredTool } from '../../src/mcp/structured-tool.js';
import { createManagedServer, type ManagedServer } from '../../src/servers/managed-server.js';
import {
  faultServerConfig,
  receivedCall,
  receivedCancellation,
  resultText,
  toolEntry,
} from './fixture.js';

let server: ManagedServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

/** A started fault server whose calls may run long (only an abort ends them here). */
async function startServer(name: string): Promise<ManagedServer> {
  server = createManagedServer(
    faultServerConfig(name, 'normal', { timeouts: { callMs: 30_000, maxCallMs: 60_000 } }),
  );
  await server.start();
  return server;
}

/** The LangChain tools a graph binds: one StructuredTool per entry of the server's set. */
function structuredTools(managed: ManagedServer) {
  return managed
    .entries()
    .map((entry) =>
      toStructuredTool(entry.descriptor, (request) =>
        entry.execute(request.args, request.context, request.capabilities),
      ),
    );
}

describe('cancelling a tool call reaches the server as notifications/cancelled', () => {
  it('an AbortSignal passed as config.signal to StructuredTool.invoke cancels the call on the server', async () => {
    const managed = await startServer('invoke-abort');
    const hang = structuredTools(managed).find((tool) => tool.name === 'hang')!;
    const controller = new AbortController();
    const pending = hang.invoke({}, { signal: controller.signal }).then(
      () => {
        throw new Error('expected the call to be cancelled');
      },
      (reason: unknown) => reason,
    );
    // Abort only once the server is working on the call.
    const requestId = await receivedCall(managed, 'hang');
    controller.abort(new Error('stop pressed'));
    const error = await pending;
    expect(error).toBeInstanceOf(ServerError);
    expect((error as ServerError).code).toBe(AgentsErrorCode.Aborted);
    expect((error as ServerError).details).toMatchObject({
      serverName: 'invoke-abort',
      toolName: 'hang',
    });

    const saw = await receivedCancellation(managed, requestId);
    expect(saw.cancelled).toEqual([{ requestId, reason: expect.stringContaining('stop pressed') }]);
    // Cancelling one call leaves the server serving.
    expect(managed.status).toBe('ready');
    expect(resultText(await toolEntry(managed, 'echo').execute({ text: 'after' }, {}))).toBe(
      'after',
    );
  });

  it('graph.invoke(input, { signal }) through StateGraph + ToolNode cancels the running call on the server', async () => {
    const managed = await startServer('graph-abort');
    const graph = new StateGraph(MessagesAnnotation)
      .addNode('tools', new ToolNode(structuredTools(managed)))
      .addEdge(START, 'tools')
      .addEdge('tools', END)
      .compile();
    const input: { messages: BaseMessage[] } = {
      messages: [
        new AIMessage({ content: '', tool_calls: [{ id: 'call_hang', name: 'hang', args: {} }] }),
      ],
    };
    const controller = new AbortController();
    const run = graph.invoke(input, { signal: controller.signal }).then(
      (output) => ({ output }),
      (reason: unknown) => ({ reason }),
    );
    const requestId = await receivedCall(managed, 'hang');
    controller.abort(new Error('run stopped by the user'));
    const outcome = await run;
    // The run ends with the abort; it does not finish as if the tool had answered.
    expect(outcome).toHaveProperty('reason');
    expect(outcome).not.toHaveProperty('output');

    const saw = await receivedCancellation(managed, requestId);
    expect(saw.calls.filter((call) => call.tool === 'hang')).toEqual([{ tool: 'hang', requestId }]);
    expect(saw.cancelled.map((entry) => entry.requestId)).toEqual([requestId]);
    expect(saw.aborted).toEqual([requestId]);

    // The same graph runs the next call normally: the server was not harmed by the cancellation.
    const next = await graph.invoke({
      messages: [
        new AIMessage({
          content: '',
          tool_calls: [{ id: 'call_echo', name: 'echo', args: { text: 'next run' } }],
        }),
      ],
    });
    expect(next.messages.at(-1)?.content).toBe('next run');
  });
});
