import { ToolMessage } from '@langchain/core/messages';
import { Command, isCommand, isGraphInterrupt } from '@langchain/langgraph';
import { createMiddleware } from 'langchain';
import { ResultMetaKey } from '../core/tool-descriptor.js';
import type { ChangeRecord } from '../core/change-record.js';
import type { ToolDescriptor } from '../core/tool-descriptor.js';
import type { Sandbox } from '../sandbox/types.js';
import { isHumanOnlyToolError, toolErrorMessage } from './tool-errors.js';
import { createChangeTracker, findChangeRecord, isWriteClassTool } from './change-tracking.js';
import { SandboxStateSchema } from '../thread/state.js';

/** Options of {@link createSandboxAgentMiddleware}. */
export interface SandboxAgentMiddlewareOptions {
  /** The run's sandbox; write-class calls are serialized and snapshotted in it. */
  sandbox: Sandbox;
  /**
   * Names of tools known to be read-only (no lock, no snapshot). Tools made by this library
   * carry their descriptor and are classified from its capabilities; any other tool is
   * treated as writing unless listed here.
   */
  readOnlyTools?: readonly string[];
  /** Overrides the classification entirely: return true to track the call. */
  isWriteClass?: (toolName: string, descriptor: ToolDescriptor | undefined) => boolean;
}

function descriptorOf(tool: unknown): ToolDescriptor | undefined {
  if (typeof tool !== 'object' || tool === null) return undefined;
  const descriptor: unknown = (tool as Record<string, unknown>)['descriptor'];
  if (typeof descriptor !== 'object' || descriptor === null) return undefined;
  const candidate = descriptor as Partial<ToolDescriptor>;
  return typeof candidate.id === 'string' && typeof candidate.capabilities === 'object'
    ? (descriptor as ToolDescriptor)
    : undefined;
}

function withRecordOnArtifact(message: ToolMessage, record: ChangeRecord): ToolMessage {
  const artifact: unknown = message.artifact;
  const base =
    typeof artifact === 'object' && artifact !== null && !Array.isArray(artifact)
      ? (artifact as Record<string, unknown>)
      : {};
  const meta: unknown = base['_meta'];
  const metaBase =
    typeof meta === 'object' && meta !== null ? (meta as Record<string, unknown>) : {};
  return new ToolMessage({
    content: message.content,
    tool_call_id: message.tool_call_id,
    ...(message.name === undefined ? {} : { name: message.name }),
    ...(message.status === undefined ? {} : { status: message.status }),
    ...(message.id === undefined ? {} : { id: message.id }),
    artifact: { ...base, _meta: { ...metaBase, [ResultMetaKey.Change]: record } },
  });
}

/**
 * Change tracking for langchain v1 `createAgent`, over the same core as the `ToolMiddleware`
 * (one lock and one snapshot chain per sandbox, so mixing both never double-snapshots).
 *
 * - Read-only tools pass straight through.
 * - Write-class calls are serialized, run, and snapshotted, also when the tool threw; a thrown
 *   error becomes an error `ToolMessage` (an error escaping `wrapToolCall` would end the run),
 *   interrupts are rethrown.
 * - The call returns a `Command` that appends the record to `changeLog` and sets `sandboxHead`
 *   in the same step as its ToolMessage (which also carries the record on
 *   `artifact._meta['agents/change']`). Parallel calls wait until the sandbox is idle before
 *   reporting the head, so all of them report the same, final one.
 *
 * Add it to `createAgent({ middleware: [...] })`; it brings the `changeLog` / `sandboxHead`
 * state fields with it. The agent needs a checkpointer for rollback.
 */
export function createSandboxAgentMiddleware(options: SandboxAgentMiddlewareOptions) {
  const { sandbox } = options;
  const tracker = createChangeTracker(sandbox);
  const readOnly = new Set(options.readOnlyTools ?? []);
  const isWriteClass =
    options.isWriteClass ??
    ((toolName: string, descriptor: ToolDescriptor | undefined): boolean =>
      descriptor !== undefined ? isWriteClassTool(descriptor) : !readOnly.has(toolName));

  return createMiddleware({
    name: 'SandboxChangeTracking',
    stateSchema: SandboxStateSchema,
    wrapToolCall: async (request, handler) => {
      const toolName = request.toolCall.name;
      const descriptor = descriptorOf(request.tool);
      if (!isWriteClass(toolName, descriptor)) return handler(request);
      const toolCallId = request.toolCall.id ?? '';
      const outcome = await tracker.track(
        { toolId: descriptor?.id ?? `tool:${toolName}`, toolCallId },
        async () => handler(request),
      );
      let result: ToolMessage | Command;
      if (outcome.ok) {
        result = outcome.value;
      } else {
        if (isGraphInterrupt(outcome.error) || isHumanOnlyToolError(outcome.error))
          throw outcome.error;
        result = toolErrorMessage(outcome.error, { name: toolName, id: toolCallId });
      }
      // Nested under another tracker of this sandbox, the inner one made the record.
      const record =
        outcome.record ??
        (ToolMessage.isInstance(result) ? findChangeRecord(result.artifact) : undefined);
      if (record === undefined) return result;
      await tracker.idle();
      const changes = { changeLog: [record], sandboxHead: sandbox.head };
      if (isCommand(result)) {
        const update: unknown = result.update;
        if (typeof update !== 'object' || update === null || Array.isArray(update)) return result;
        return new Command({
          ...(result.goto === undefined ? {} : { goto: result.goto }),
          ...(result.graph === undefined ? {} : { graph: result.graph }),
          update: { ...(update as Record<string, unknown>), ...changes },
        });
      }
      return new Command({
        update: { messages: [withRecordOnArtifact(result, record)], ...changes },
      });
    },
  });
}
