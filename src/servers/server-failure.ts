import { SdkError, SdkErrorCode } from '@modelcontextprotocol/client';
import {
  AgentsError,
  AgentsErrorCode,
  ServerError,
  errorMessage,
  type ServerErrorDetails,
  type ServerPhase,
} from '../errors.js';
import { isMcpErrorCode } from '../mcp/tool-call.js';
import type { ServerTransport } from './connect.js';

/**
 * The errors one managed server raises about itself: each names the server, the phase, the
 * target and — for a stdio server that ended — its exit code or signal and stderr tail.
 */
export class ServerFailures {
  constructor(private readonly serverName: string) {}

  /** What every error about this server carries; read when the error is made. */
  details(phase: ServerPhase, serverTransport: ServerTransport | undefined): ServerErrorDetails {
    const stdio = serverTransport?.stdio;
    const stderrTail = stdio?.stderrTail();
    return {
      serverName: this.serverName,
      phase,
      target: serverTransport?.target,
      ...(stdio?.exit ? { exitCode: stdio.exit.exitCode, signal: stdio.exit.signal } : {}),
      ...(stderrTail ? { stderrTail } : {}),
    };
  }

  /** `CLOSED`: the server was closed during `phase`, or before `toolName` could be called. */
  closed(phase: ServerPhase, toolName?: string): ServerError {
    return new ServerError(
      AgentsErrorCode.Closed,
      toolName
        ? `Server "${this.serverName}" is closed; tool "${toolName}" cannot be called.`
        : `Server "${this.serverName}" was closed during ${phase}.`,
      { ...this.details(phase, undefined), ...(toolName ? { toolName } : {}) },
    );
  }

  /** A ServerError as is; anything else becomes `SERVER_START_FAILED` for `phase`. */
  asServerError(error: unknown, phase: ServerPhase): ServerError {
    if (error instanceof ServerError) return error;
    return new ServerError(
      AgentsErrorCode.ServerStartFailed,
      `Server "${this.serverName}" failed during ${phase}: ${errorMessage(error)}`,
      this.details(phase, undefined),
      { cause: error },
    );
  }

  /**
   * Turns a failure into a ServerError naming the server, phase, target, exit and stderr tail.
   * A server that ended (exit, signal, broken pipe, closed connection) is described as such,
   * whatever error the pending request got; timeouts, aborts and closes pass through.
   */
  describe(
    error: unknown,
    serverTransport: ServerTransport,
    phase: ServerPhase,
    toolName?: string,
  ): ServerError {
    if (
      error instanceof ServerError &&
      (error.code === AgentsErrorCode.Timeout ||
        error.code === AgentsErrorCode.Aborted ||
        error.code === AgentsErrorCode.Closed)
    ) {
      return error;
    }
    const stdio = serverTransport.stdio;
    const details = { ...this.details(phase, serverTransport), ...(toolName ? { toolName } : {}) };
    const during =
      phase === 'call' && toolName
        ? `tools/call "${toolName}"`
        : phase === 'list'
          ? 'tools/list'
          : phase;
    const stderr = details.stderrTail
      ? ` Last stderr lines:\n${lastLines(details.stderrTail, 10)}`
      : '';
    // While running, a server that went away makes it unavailable; while starting, the start failed.
    const endedCode =
      phase === 'call' || phase === 'list'
        ? AgentsErrorCode.ServerUnavailable
        : AgentsErrorCode.ServerStartFailed;
    if (stdio?.failure) {
      return new ServerError(
        AgentsError.isInstance(stdio.failure) ? stdio.failure.code : AgentsErrorCode.ProtocolError,
        `${stdio.failure.message} (during ${during})`,
        details,
        { cause: stdio.failure },
      );
    }
    if (stdio?.exit) {
      const how = stdio.exit.signal
        ? `was killed by ${stdio.exit.signal}`
        : `exited with code ${stdio.exit.exitCode}`;
      return new ServerError(
        endedCode,
        `Server "${this.serverName}" ${how} during ${during} (command: ${serverTransport.target}).${stderr}`,
        details,
        { cause: error },
      );
    }
    if (
      error instanceof ServerError &&
      error.details.serverName === this.serverName &&
      !isConnectionClosed(error.cause)
    ) {
      return error;
    }
    if (
      isConnectionClosed(error) ||
      (error instanceof ServerError && isConnectionClosed(error.cause))
    ) {
      return new ServerError(
        endedCode,
        `The connection to server "${this.serverName}" closed during ${during} (${serverTransport.target}).${stderr}`,
        details,
        { cause: error },
      );
    }
    return new ServerError(
      phase === 'call'
        ? AgentsErrorCode.ToolCallFailed
        : phase === 'list'
          ? AgentsErrorCode.ProtocolError
          : AgentsErrorCode.ServerStartFailed,
      `Server "${this.serverName}" failed during ${during} (${serverTransport.target}): ${errorMessage(error)}${stderr}`,
      details,
      { cause: error },
    );
  }

  /** The error a connection that closed under us is described from. */
  connectionClosed(serverTransport: ServerTransport, phase: ServerPhase): ServerError {
    return this.describe(
      new SdkError(SdkErrorCode.ConnectionClosed, 'Connection closed'),
      serverTransport,
      phase,
    );
  }
}

/** True for the SDK's "connection closed" error. */
export function isConnectionClosed(error: unknown): boolean {
  return isMcpErrorCode(error, 'closed');
}

function lastLines(text: string, count: number): string {
  return text.split('\n').slice(-count).join('\n');
}
