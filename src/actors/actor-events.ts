import { AIMessage, ToolMessage } from '@langchain/core/messages';
import { describeToolContent } from '../mcp/content.js';
import type { ToolProgressEvent, ToolRetryEvent } from '../mcp/structured-tool.js';
import { findChangeRecord } from '../pipeline/change-tracking.js';
import type { ActorGraph, ActorGraphInput } from './actor-graph.js';
import type { ActorRunEvent } from './actor-types.js';
import { pendingApprovalsOf, pendingInputsOf } from './approvals.js';
import { turnLimitPauseOf } from './turn-limit.js';

/**
 * Streams one run (or resume) of an actor graph on a thread and turns LangGraph's `updates` and
 * `custom` chunks into {@link ActorRunEvent}s, in order.
 */
export async function* streamActorEvents(
  graph: ActorGraph,
  input: ActorGraphInput,
  threadId: string,
  signal: AbortSignal | undefined,
): AsyncGenerator<ActorRunEvent, void, undefined> {
  const config = {
    configurable: { thread_id: threadId },
    // Exactly once (issue 38): a step starts only when the previous step's checkpoint and its
    // tasks' writes are durable (and, with a shared store, their snapshots pushed: the saver's
    // barrier). With the default "async", the next model turn and tool call ran while the
    // checkpoint recording a finished call was still being written, so a crash re-ran that call.
    durability: 'sync' as const,
    // `custom` carries the tools' progress notifications while a call runs.
    streamMode: ['updates' as const, 'custom' as const],
    ...(signal ? { signal } : {}),
  };
  const stream = await graph.stream(input, config);
  for await (const [mode, chunk] of stream as AsyncIterable<[string, unknown]>) {
    if (mode === 'custom') {
      const progress = toolProgressOf(chunk) ?? toolRetryOf(chunk);
      if (progress) yield progress;
      continue;
    }
    for (const [node, update] of Object.entries(chunk as Record<string, unknown>)) {
      if (node === '__interrupt__') {
        const limit = turnLimitPauseOf(update);
        if (limit !== undefined) {
          yield { ...limit, type: 'turn-limit' };
          continue;
        }
        const approvals = pendingApprovalsOf(update);
        const inputs = pendingInputsOf(update);
        yield {
          type: 'interrupt',
          value: update,
          ...(approvals.length > 0 ? { approvals } : {}),
          ...(inputs.length > 0 ? { inputs } : {}),
        };
        continue;
      }
      yield* messageEvents(messagesOf(update));
    }
  }
}

function* messageEvents(messages: unknown[]): Generator<ActorRunEvent, void, undefined> {
  for (const message of messages) {
    if (AIMessage.isInstance(message)) {
      for (const call of message.tool_calls ?? []) {
        yield {
          type: 'tool-call-start',
          toolCallId: call.id ?? '',
          name: call.name,
          args: call.args,
        };
      }
      const text = message.text;
      if (text !== '') yield { type: 'message', text };
    } else if (ToolMessage.isInstance(message)) {
      const change = findChangeRecord(message.artifact);
      yield {
        type: 'tool-call-end',
        toolCallId: message.tool_call_id,
        name: message.name ?? '',
        isError: message.status === 'error',
        // Images and audio as placeholders (`[image/png 12 KB]`), not dropped.
        text: describeToolContent(message.content),
        ...(change ? { change } : {}),
      };
    }
  }
}

/** A tool's progress event from the custom stream (see `ToolProgressEvent`), if it is one. */
function toolProgressOf(
  chunk: unknown,
): Extract<ActorRunEvent, { type: 'tool-progress' }> | undefined {
  if (typeof chunk !== 'object' || chunk === null) return undefined;
  const event = chunk as Partial<ToolProgressEvent>;
  if (event.type !== 'tool-progress' || typeof event.progress !== 'number') return undefined;
  return {
    type: 'tool-progress',
    toolCallId: event.toolCallId ?? '',
    name: event.toolName ?? '',
    progress: event.progress,
    ...(event.total === undefined ? {} : { total: event.total }),
    ...(event.message === undefined ? {} : { message: event.message }),
  };
}

/** A tool's retry event from the custom stream (see `ToolRetryEvent`), if it is one. */
function toolRetryOf(chunk: unknown): Extract<ActorRunEvent, { type: 'tool-retry' }> | undefined {
  if (typeof chunk !== 'object' || chunk === null) return undefined;
  const event = chunk as Partial<ToolRetryEvent>;
  if (event.type !== 'tool-retry' || typeof event.message !== 'string') return undefined;
  return {
    type: 'tool-retry',
    toolCallId: event.toolCallId ?? '',
    name: event.toolName ?? '',
    reason: event.reason === 'session-lost' ? 'session-lost' : 'server-restarted',
    message: event.message,
  };
}

function messagesOf(update: unknown): unknown[] {
  if (typeof update !== 'object' || update === null) return [];
  const messages = (update as Record<string, unknown>)['messages'];
  return Array.isArray(messages) ? messages : [];
}
