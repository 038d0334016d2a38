import { setMaxListeners } from 'node:events';
import type { RequestOptions } from '@modelcontextprotocol/client';
import type { ToolCallCapabilities } from '../core/tool-descriptor.js';
import type { McpClient } from './mcp-client.js';

/**
 * The SDK request options of one `tools/call` leg, built from what differs per call and nothing
 * more (issue 37). A fresh `AbortSignal` per call cost 7–10 µs on Node 20 (the SDK adds an
 * `abort` listener to it, and the first listener on a fresh signal is the slow one), and a
 * progress token costs the SDK a handler entry per call, so neither is made unless needed:
 *
 * - By default (`resetOnProgress` off) `callMs` is a hard timeout on the whole call, kept by the
 *   SDK's own per-request timer (the one a bare `callTool` sets too, so it costs nothing over
 *   the raw SDK): exact, and it cancels the call on the server (`notifications/cancelled`, or
 *   closing a 2026 request stream). A progress token is asked for only when a consumer listens
 *   (`onProgress`), and listening never changes when the call times out.
 * - With `resetOnProgress` (a tool that reports progress through long work), each progress
 *   notification restarts `callMs`, and the progress handler keeps the `maxCallMs` cap: the first
 *   progress that arrives past it expires the request through the SDK's own timeout path, which
 *   is what cancels it on the server. The SDK's `maxTotalTimeout` only rejects locally and sends
 *   nothing, so it is set one `callMs` later, as a backstop should the SDK's internals change.
 * - An idle deadline (`servers/client-request-router.ts`) keeps the no-answer clock itself: the
 *   SDK's timeout is then the exact cap, and progress touches the deadline only with
 *   `resetOnProgress`.
 */

/** What a leg needs to build its request options. */
export interface LegTimeouts {
  callMs: number;
  maxCallMs: number;
  /** Progress restarts `callMs` (up to `maxCallMs`); off: `callMs` is a hard timeout. */
  resetOnProgress?: boolean;
  idleDeadline?: { readonly signal: AbortSignal; touch(): void };
}

/** The options of one leg, and whether its cap ended it (for the error message). */
export interface LegRequest {
  readonly options: RequestOptions;
  /** Kept where progress restarts the timeout; `reached` once the cap expired the request. */
  readonly cap?: { readonly reached: boolean };
}

/** Builds the request options of one leg. `signal` is the call's own; it is passed as is. */
export function legRequest(
  client: McpClient,
  signal: AbortSignal | undefined,
  onProgress: ToolCallCapabilities['onProgress'],
  timeouts: LegTimeouts,
): LegRequest {
  const { callMs, maxCallMs } = timeouts;
  if (signal !== undefined) allowParallelListeners(signal);
  const idle = timeouts.idleDeadline;
  const combined =
    idle === undefined
      ? signal
      : signal === undefined
        ? idle.signal
        : AbortSignal.any([signal, idle.signal]);
  const reset = timeouts.resetOnProgress === true && callMs < maxCallMs;
  if (idle !== undefined) {
    // The caller's deadline is the no-answer clock; the SDK's timeout is the exact cap.
    const options: RequestOptions = { signal: combined, timeout: maxCallMs };
    if (reset) {
      options.onprogress = (progress) => {
        idle.touch();
        forward(onProgress, progress);
      };
    } else if (onProgress !== undefined) {
      options.onprogress = (progress) => forward(onProgress, progress);
    }
    return { options };
  }
  if (!reset) {
    // One exact timeout; a progress token only for a consumer, and it restarts nothing.
    const options: RequestOptions = { timeout: Math.min(callMs, maxCallMs) };
    if (combined !== undefined) options.signal = combined;
    if (onProgress !== undefined) options.onprogress = (progress) => forward(onProgress, progress);
    return { options };
  }
  const cap = new ProgressCap(client, maxCallMs, onProgress);
  const options: RequestOptions = {
    timeout: callMs,
    resetTimeoutOnProgress: true,
    maxTotalTimeout: maxCallMs + callMs,
    onprogress: cap.onProgress,
  };
  if (combined !== undefined) options.signal = combined;
  return { options, cap };
}

const raised = new WeakSet<AbortSignal>();

/**
 * The caller's signal goes to the SDK as is, and the SDK adds one `abort` listener per request
 * (removed when it ends): a run's ten parallel calls on the run's signal would print Node's
 * MaxListenersExceededWarning, which is no leak here. Lifted once per signal.
 */
function allowParallelListeners(signal: AbortSignal): void {
  if (raised.has(signal)) return;
  raised.add(signal);
  setMaxListeners(0, signal);
}

type ProgressParams = Parameters<NonNullable<RequestOptions['onprogress']>>[0];

function forward(onProgress: ToolCallCapabilities['onProgress'], progress: ProgressParams): void {
  if (onProgress === undefined) return;
  onProgress({
    progress: progress.progress,
    ...(progress.total === undefined ? {} : { total: progress.total }),
    ...(progress.message === undefined ? {} : { message: progress.message }),
  });
}

/**
 * The overall cap of a call whose timeout progress restarts: checked when progress arrives
 * (only progress can keep a call alive past `callMs`), at no cost to a call that gets none.
 */
class ProgressCap {
  reached = false;
  private readonly started = Date.now();

  constructor(
    private readonly client: McpClient,
    private readonly maxCallMs: number,
    private readonly consumer: ToolCallCapabilities['onProgress'],
  ) {}

  readonly onProgress = (progress: ProgressParams): void => {
    if (this.reached) return;
    if (Date.now() - this.started >= this.maxCallMs) {
      this.reached = expireRequest(this.client, this.onProgress);
      if (this.reached) return;
    }
    forward(this.consumer, progress);
  };
}

/**
 * The SDK's protocol state this module reads (`Protocol` in both SDK majors): the progress
 * handler of each request id, and each request's timeout with the handler that cancels it.
 */
interface ProtocolInternals {
  _progressHandlers?: Map<number, unknown>;
  _timeoutInfo?: Map<number, { onTimeout?: () => void }>;
}

/**
 * Expires the request whose progress handler is `handler` through the SDK's own timeout path:
 * it rejects the call with the SDK's timeout error and cancels it on the server. Returns false
 * when the SDK's internals are not what this expects (the `maxTotalTimeout` backstop then ends
 * the call locally).
 */
function expireRequest(client: McpClient, handler: unknown): boolean {
  const internals = client as unknown as ProtocolInternals;
  const handlers = internals._progressHandlers;
  if (!(handlers instanceof Map) || !(internals._timeoutInfo instanceof Map)) return false;
  for (const [id, each] of handlers) {
    if (each !== handler) continue;
    const onTimeout = internals._timeoutInfo.get(id)?.onTimeout;
    if (typeof onTimeout !== 'function') return false;
    onTimeout();
    return true;
  }
  return false;
}

/**
 * A result schema that accepts the result as parsed: on 2026 the SDK's codec has already checked
 * it against the wire schema, and `outputSchema` is checked by `assertToolOutput`.
 */
export const PASS_THROUGH = {
  '~standard': {
    version: 1,
    vendor: 'agents',
    validate: (value: unknown) => ({ value }),
  },
} as const;

/** What `request()` reads of the SDK v2 client's era codec (`Protocol._wireCodec()`). */
interface EraCodec {
  validateResult(
    method: string,
    raw: unknown,
  ): { ok: true; value: unknown } | { ok: false; reason: string; message?: string };
}

const eraSchemas = new WeakMap<object, EraResultSchema | null>();
type EraResultSchema = {
  readonly '~standard': {
    readonly version: 1;
    readonly vendor: string;
    validate(value: unknown): { value: unknown } | { issues: { message: string }[] };
  };
};

/**
 * The result schema SDK v2's `request()` builds itself when given none (over the negotiated
 * era's codec, the 2025 wire schema on a 2025 server), made once per client instead of per
 * call: each time it builds one, the SDK first probes the codec with `undefined` to learn
 * whether the method exists in the era, and that probe fails a zod parse and turns the error
 * into a string, 20–38 µs of a 2025-era call. Undefined when the client has no era codec to
 * read (another SDK build): the caller then passes no schema and the SDK does as before.
 */
export function eraResultSchema(client: object): EraResultSchema | undefined {
  let schema = eraSchemas.get(client);
  if (schema === undefined) {
    const wireCodec = (client as { _wireCodec?: unknown })._wireCodec;
    schema =
      typeof wireCodec === 'function'
        ? {
            '~standard': {
              version: 1,
              vendor: 'agents-era-codec',
              validate: (value: unknown) => {
                // Read per call: the era is the connection's, and a reconnect may change it.
                const codec = (wireCodec as () => EraCodec).call(client);
                const outcome = codec.validateResult('tools/call', value);
                return outcome.ok
                  ? { value: outcome.value }
                  : {
                      issues: [
                        {
                          message:
                            outcome.reason === 'invalid'
                              ? (outcome.message ?? 'invalid result')
                              : `not-in-era: tools/call`,
                        },
                      ],
                    };
              },
            },
          }
        : null;
    eraSchemas.set(client, schema);
  }
  return schema ?? undefined;
}

const mirrorsBySchema = new WeakMap<object, boolean>();

/**
 * Whether a tool's input schema declares `x-mcp-header` on a property (SEP-2243: a 2026 client
 * mirrors those arguments into `Mcp-Param-*` headers, which the SDK's `callTool` does). An
 * unknown schema may: the caller then goes through `callTool`. Kept per schema object.
 */
export function mayMirrorHeaders(schema: unknown): boolean {
  if (typeof schema !== 'object' || schema === null) return true;
  let known = mirrorsBySchema.get(schema);
  if (known === undefined) {
    const properties = (schema as { properties?: unknown }).properties;
    known =
      typeof properties === 'object' &&
      properties !== null &&
      Object.values(properties).some(
        (property) =>
          typeof property === 'object' && property !== null && 'x-mcp-header' in property,
      );
    mirrorsBySchema.set(schema, known);
  }
  return known;
}
