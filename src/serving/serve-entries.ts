import type { Readable, Writable } from 'node:stream';
import { errorMessage } from '../errors.js';
import { serveHttp } from './http.js';
import type { ServeHttpOptions } from './http-options.js';
import { createServing, type ServerShape } from './mcp-server.js';
import { createServedToolSet } from './served-tool-set.js';
import { ServeStdioTransport } from './stdio-server-transport.js';
import type { ServedToolSetOptions } from './served-tool-set.js';

/** Options of {@link serveEntries}. */
export interface ServeEntriesOptions extends ServedToolSetOptions, ServerShape {
  /** `stdio` (a host spawns us) or `http` (streamable HTTP on a port). */
  transport: 'stdio' | 'http';
  /** Streams for stdio; stdout must carry nothing but JSON-RPC. */
  stdio?: { stdin: Readable; stdout: Writable };
  /**
   * Largest stdio message (bytes; default 10 MiB). A larger one gets a JSON-RPC error and the
   * server stays up.
   */
  maxStdioMessageBytes?: number;
  /** HTTP hosting options (host, port, token, limits). */
  http?: Omit<ServeHttpOptions, 'createServer' | 'signal' | 'log'>;
  /** Diagnostics (to stderr in the CLI; never stdout). */
  log?: (line: string) => void;
  /** Called once the HTTP endpoint listens. */
  onListening?: (info: { url: URL }) => void;
  /** Stops serving (SIGINT/SIGTERM in the CLI). */
  signal?: AbortSignal;
}

/**
 * Serves tool entries over MCP until told to stop, then shuts down cleanly. Over stdio it stops
 * on stdin EOF, on a stdout error (EPIPE: the host went away) or on `signal`; over HTTP on
 * `signal`. Resolves after the MCP side is closed; the caller then stops the upstream servers
 * that back the entries. Throws when the HTTP endpoint cannot start.
 */
export async function serveEntries(options: ServeEntriesOptions): Promise<void> {
  options.signal?.throwIfAborted();
  const log = options.log ?? (() => undefined);
  const toolSet = createServedToolSet(options);
  // One server factory for both revisions: 2025-era sessions and 2026-07-28 requests.
  const serving = createServing({ ...options, toolSet });
  try {
    if (options.transport === 'http') {
      const http = await serveHttp({
        ...options.http,
        createServer: () => serving.createConnectionServer(),
        modern: {
          createServer: serving.createServer,
          bus: serving.bus,
          inputSchemaOf: (name) => toolSet.get(name)?.tool.entry.descriptor.inputSchema,
        },
        log,
      });
      try {
        options.onListening?.({ url: http.url });
        await waitForAbort(options.signal);
      } finally {
        await http.close();
      }
      return;
    }

    const stdin = options.stdio?.stdin ?? process.stdin;
    const stdout = options.stdio?.stdout ?? process.stdout;
    let finish: (reason: string) => void = () => undefined;
    const transport = new ServeStdioTransport(stdin, stdout, {
      onClosed: () => finish('transport closed'),
      ...(options.maxStdioMessageBytes === undefined
        ? {}
        : { maxMessageBytes: options.maxStdioMessageBytes }),
    });
    const finished = new Promise<string>((resolve) => {
      finish = resolve;
    });
    const onEnd = (): void => finish('stdin closed');
    const onStdoutError = (error: Error): void => finish(`stdout failed: ${error.message}`);
    const onAbort = (): void => finish('signal');
    stdin.once('end', onEnd);
    stdin.once('close', onEnd);
    // EPIPE when the host closed our stdout: stop instead of crashing on an unhandled 'error'.
    stdout.on('error', onStdoutError);
    options.signal?.addEventListener('abort', onAbort, { once: true });
    transport.onerror = (error) => log(`mcp stdio: ${errorMessage(error)}`);
    // The SDK's stdio entry picks the revision from the opening message and pins one server
    // from the factory to the connection (2025: `initialize`; 2026-07-28: the `_meta` envelope).
    const { serveStdio } = await import('@modelcontextprotocol/server/stdio');
    const handle = serveStdio(serving.createConnectionServer, {
      transport,
      onerror: (error) => log(`mcp stdio: ${errorMessage(error)}`),
    });
    try {
      const reason = await finished;
      log(`mcp stdio: stopping (${reason})`);
    } finally {
      stdin.off('end', onEnd);
      stdin.off('close', onEnd);
      options.signal?.removeEventListener('abort', onAbort);
      await handle
        .close()
        .catch((error: unknown) => log(`mcp stdio: close failed: ${errorMessage(error)}`));
      // The error listener stays: a late EPIPE must not become an uncaught 'error' event.
    }
  } finally {
    serving.close();
    toolSet.close();
  }
}

function waitForAbort(signal: AbortSignal | undefined): Promise<void> {
  // Without a signal the endpoint runs until the process ends.
  if (signal === undefined) return new Promise(() => undefined);
  if (signal.aborted) return Promise.resolve();
  return new Promise((resolve) =>
    signal.addEventListener('abort', () => resolve(), { once: true }),
  );
}
