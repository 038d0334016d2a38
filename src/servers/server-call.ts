import type { CallToolResult } from '@modelcontextprotocol/client';
import { AgentsErrorCode, type ServerError } from '../errors.js';
import { sendToolCall, type McpToolCaller } from '../mcp/tool-call.js';
import {
  toolErrorResult,
  type ToolCallCapabilities,
  type ToolCallContext,
} from '../core/tool-descriptor.js';
import { argumentBytesOverLimit } from './argument-size.js';
import { confinementRefusalNote } from '../confinement/confinement.js';
import { ForwardingCallClock, type ClientRequestRouter } from './client-request-router.js';
import { isSessionNotFound } from './connect.js';
import type { ServerCore } from './server-core.js';
import { isConnectionClosed } from './server-failure.js';
import type { ServerSupervisor } from './server-supervisor.js';
import type { ServerToolSet } from './server-tool-set.js';

/** The "tool no longer available" result the model sees for a removed or never-listed tool. */
export function toolNoLongerAvailableResult(serverName: string, toolName: string): CallToolResult {
  return toolErrorResult(
    `Tool "${toolName}" is no longer available on server "${serverName}": the server does not list it (any more). ` +
      'Use one of the tools currently offered.',
  );
}

/** The result the model sees when a call's arguments are over the server's `maxArgumentBytes`. */
export function argumentsTooLargeResult(
  serverName: string,
  toolName: string,
  bytes: number,
  limitBytes: number,
): CallToolResult {
  return toolErrorResult(
    `The arguments of tool "${toolName}" are ${bytes} bytes of JSON, over the limit of ${limitBytes} bytes ` +
      `(maxArgumentBytes) for server "${serverName}"; the call was not sent. ` +
      'Send smaller arguments, e.g. split the content over several calls.',
  );
}

/**
 * A tool call on a supervised server: the checks before sending (the tool is still listed,
 * the arguments fit `maxArgumentBytes`, the server is up or comes back), the call itself
 * (`mcp/tool-call.ts`, the one sender of `tools/call`), and what supervision adds after a
 * failure: a lost HTTP session is re-initialized and the call repeated; a server that died
 * under a read-only call is awaited through its restart and the call repeated once; a timeout
 * triggers a health check. Write-class calls are never repeated after a crash.
 */
export class SupervisedCaller implements McpToolCaller {
  constructor(
    private readonly core: ServerCore,
    private readonly supervisor: ServerSupervisor,
    private readonly toolSet: ServerToolSet,
    private readonly clientRequests: ClientRequestRouter,
    private readonly maxArgumentBytes: number,
  ) {}

  callTool(
    name: string,
    args: Record<string, unknown>,
    context: ToolCallContext = {},
    capabilities?: ToolCallCapabilities,
  ): Promise<CallToolResult> {
    return this.callOnce(name, args, context, capabilities, true);
  }

  /** A confined server's EROFS error result gets the note that names confinement as the cause. */
  private explainRefusal(result: CallToolResult): CallToolResult {
    if (result.isError !== true || (this.core.options.confinement?.kind ?? 'none') === 'none')
      return result;
    const text = result.content
      .map((block) => (block.type === 'text' ? block.text : ''))
      .join('\n');
    const note = confinementRefusalNote(this.core.name, text);
    if (note === undefined) return result;
    return { ...result, content: [...result.content, { type: 'text', text: note }] };
  }

  /** The same for a JSON-RPC error (the message the model sees). */
  private explainRefusalError(failure: ServerError): void {
    if ((this.core.options.confinement?.kind ?? 'none') === 'none' || !(failure instanceof Error))
      return;
    const note = confinementRefusalNote(this.core.name, failure.message);
    if (note !== undefined && !failure.message.includes(note)) failure.message += ` ${note}`;
  }

  private async callOnce(
    name: string,
    args: Record<string, unknown>,
    context: ToolCallContext,
    capabilities: ToolCallCapabilities | undefined,
    mayRetry: boolean,
  ): Promise<CallToolResult> {
    const core = this.core;
    context.signal?.throwIfAborted();
    if (this.toolSet.isListed && this.toolSet.get(name) === undefined)
      return toolNoLongerAvailableResult(core.name, name);
    // L13: checked before anything is written, so an oversized payload never reaches the pipe.
    const tooBig = argumentBytesOverLimit(args, this.maxArgumentBytes);
    if (tooBig !== undefined) {
      return argumentsTooLargeResult(core.name, name, tooBig, this.maxArgumentBytes);
    }
    const connection = await this.supervisor.readyConnection(context.signal, name);
    if (this.toolSet.get(name) === undefined) return toolNoLongerAvailableResult(core.name, name);
    // While the call runs, what the server asks of its client goes to the caller's client, and
    // the no-answer timeout stands still while the client (maybe a person) answers.
    const clock =
      capabilities?.clientRequests === undefined
        ? undefined
        : new ForwardingCallClock(core.timeouts.callMs, capabilities.clientRequests);
    const leave = clock === undefined ? undefined : this.clientRequests.enter(clock.forwarder);
    try {
      const result = await sendToolCall(connection.client, name, args, context, capabilities, {
        serverName: core.name,
        callMs: core.timeouts.callMs,
        maxCallMs: core.timeouts.maxCallMs,
        resetOnProgress: core.timeouts.resetOnProgress,
        ...(clock === undefined ? {} : { idleDeadline: clock }),
        // A 2026 server's roots question is answered with the sandbox root, never the user's tree.
        ...(core.options.roots === undefined ? {} : { roots: core.options.roots }),
        inputSchema: () => this.toolSet.get(name)?.descriptor.inputSchema,
        taskSupport: () => this.toolSet.get(name)?.descriptor.taskSupport,
        clientCapabilities: connection.clientCapabilities,
        details: () => core.failures.details('call', connection.serverTransport),
      });
      this.supervisor.answered();
      return this.explainRefusal(result);
    } catch (error) {
      const failure = error as ServerError;
      this.explainRefusalError(failure);
      if (failure.code === AgentsErrorCode.Aborted) throw failure;
      if (failure.code === AgentsErrorCode.Timeout) {
        // One slow call does not make a server unhealthy; a failed ping does.
        void this.supervisor.checkHealth();
        throw failure;
      }
      if (isSessionNotFound(failure) && mayRetry) {
        // The server forgot our session (404): the spec says re-initialize. The request was not
        // processed, so repeating it is safe even for write tools.
        await this.supervisor.reconnect();
        notifyRetry(capabilities, {
          reason: 'session-lost',
          message: `Server "${core.name}" lost the session; tool "${name}" was not processed and is sent again on a new session.`,
        });
        return this.callOnce(name, args, context, capabilities, false);
      }
      if (
        !connection.superseded &&
        connection === core.connection &&
        !isConnectionClosed(failure.cause)
      ) {
        throw failure;
      }
      // The server went away under the call: say how it ended (exit code, stderr).
      const ended = core.failures.describe(failure, connection.serverTransport, 'call', name);
      const verdicts = this.toolSet.get(name)?.descriptor.capabilities;
      const readOnly = verdicts?.readOnly.value === true && !verdicts.writes.value;
      // Write-class calls are never repeated: the server may have done the work before dying.
      const retry =
        mayRetry &&
        readOnly &&
        (core.options.retryReadOnlyAfterRestart ?? true) &&
        core.restartPolicy.enabled;
      if (!retry) throw ended;
      try {
        await this.supervisor.readyConnection(context.signal, name);
      } catch {
        throw ended;
      }
      notifyRetry(capabilities, {
        reason: 'server-restarted',
        message: `Server "${core.name}" stopped during read-only tool "${name}" (${ended.message}) and was restarted; the call is sent once more.`,
      });
      return this.callOnce(name, args, context, capabilities, false);
    } finally {
      clock?.stop();
      leave?.();
    }
  }
}

/** Tells the caller a call is sent again (a failing listener never fails the call). */
function notifyRetry(
  capabilities: ToolCallCapabilities | undefined,
  retry: Parameters<NonNullable<ToolCallCapabilities['onRetry']>>[0],
): void {
  try {
    capabilities?.onRetry?.(retry);
  } catch {
    // The call goes on whatever the listener does.
  }
}
