import type { Transport } from '@modelcontextprotocol/client';
import type { ProcessExit } from './process-group.js';
import type { ServerLogger } from './server-logger.js';

// The contract of the stdio transport: its limits, options and interface. The process behind
// it: stdio-transport.ts.

/** Largest stdout line (one JSON-RPC message) accepted from a server, in bytes. */
export const DEFAULT_MAX_LINE_BYTES = 16 * 1024 * 1024;
/** How much of a server's stderr is kept for error messages, in bytes. */
export const DEFAULT_STDERR_BUFFER_BYTES = 64 * 1024;
/** Non-JSON-RPC stdout lines tolerated before the server is closed as broken. */
export const DEFAULT_MAX_GARBAGE_LINES = 100;

/** Options of {@link createStdioTransport}. */
export interface StdioTransportOptions {
  /** Executable; spawned with an argv array, never through a shell. */
  command: string;
  args?: readonly string[];
  /** The command line shown in messages, when the spawned one is a wrapper (bubblewrap). */
  displayTarget?: string;
  /**
   * The spawned command is a wrapper that exits with 128+N when the server dies of signal N
   * (bubblewrap): such exit codes are reported as that signal.
   */
  signalExitCodes?: boolean;
  /** Extra environment, on top of the SDK's safe default list (HOME, PATH, ...). Nothing else leaks. */
  env?: Record<string, string>;
  cwd?: string;
  /** Used in messages and logs. */
  serverName: string;
  /** Max bytes of one stdout line; over it the server is closed with an error naming the limit. */
  maxLineBytes?: number;
  /** Bytes of stderr kept for `stderrTail()`. Default 64 KB. */
  stderrBufferBytes?: number;
  /** Non-JSON stdout lines skipped before giving up. Default 100. */
  maxGarbageLines?: number;
  /** Each wait of the shutdown sequence (stdin close → SIGTERM → SIGKILL), in ms. Default: the config schema's `timeouts.shutdownMs`. */
  shutdownMs?: number;
  /** Stderr lines and stdout garbage go here; default silent. */
  logger?: ServerLogger;
  /** Stderr lines forwarded to the logger per second before the rest are counted and dropped. */
  stderrLinesPerSecond?: number;
  /**
   * Where the spawned process group is recorded so a later host can reap it if this one is
   * killed with SIGKILL (see `reapOrphanedServers`). Default `defaultRunDir()`; `null` disables.
   */
  runDir?: string | null;
}

/**
 * An MCP client `Transport` (SDK v2) over a child process's stdio. It has `pid` and `stderr`, so the
 * SDK's version negotiation treats it as stdio: a probe that gets no answer means a 2025-era
 * server (fall back to `initialize`), not an outage, owning the child's whole process group.
 * `close()` is idempotent, bounded (about 2×`shutdownMs` + 1 s) and leaves no process of the
 * group behind, even when a grandchild holds the pipes.
 */
export interface StdioTransport extends Transport {
  /** The command line for messages, secrets redacted. */
  readonly target: string;
  /** Child pid once spawned; also the process group id (the child leads its own group). */
  readonly pid: number | undefined;
  /** Set once the direct child has exited. */
  readonly exit: ProcessExit | undefined;
  /** The error that made the transport close itself (frame too big, too much garbage), if any. */
  readonly failure: Error | undefined;
  /** Non-JSON-RPC lines skipped so far. */
  readonly garbageLineCount: number;
  /** The first non-JSON-RPC stdout line (cut to 200 characters) and when it came, if any. */
  readonly firstStrayLine: { text: string; at: number } | undefined;
  /** JSON-RPC messages received so far. */
  readonly messageCount: number;
  /** Protocol version recorded at initialize. */
  readonly protocolVersion: string | undefined;
  /** The last `maxBytes` of stderr (default 4 KB), cut at a line start. */
  stderrTail(maxBytes?: number): string;
  /** True while any process of the group is alive. */
  isGroupAlive(): boolean;
}
