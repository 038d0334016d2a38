/**
 * `agents thread replay --tools live`: the recorded model turns against the servers started for
 * real (check a server upgrade). The actor records the live exchanges as any recorded run does;
 * this wraps that recorder so each finished `tools/call` is compared with the recorded one that
 * has the same request: a different result (or error) is a divergence naming the call in flight
 * when the request was sent (the pipeline's async context reaches the transport's `send`). The
 * live result still goes on to the model, whose next recorded turn then diverges too; the report
 * names the first, the cause.
 */
import type { CassetteRecorder } from './cassette-recorder.js';
import type { Cassette, McpExchangeEntry } from './cassette.js';
import { canonical, firstDifference, preview, ReplayDivergenceError } from './divergence.js';

/** A recorder for the live run that checks every tool result against the recording. */
export interface LiveToolCheck {
  /** Give this to the actor as its `record` option. */
  readonly recorder: CassetteRecorder;
  /** The first call whose live request or answer left the recording. */
  readonly divergence: ReplayDivergenceError | undefined;
}

function toolOf(params: unknown): string | undefined {
  const name = (params as { name?: unknown } | undefined)?.name;
  return typeof name === 'string' ? name : undefined;
}

/** The answer of an exchange as compared: its result or its error, nothing else. */
function answerOf(exchange: Pick<McpExchangeEntry, 'result' | 'error'>): unknown {
  return canonical('error' in exchange ? { error: exchange.error } : { result: exchange.result });
}

/**
 * Wraps `recorder` (the live run's own) to compare each live tool call with `cassette`.
 * `callInFlight` names the recorded call the pipeline is running (`call 2 (mcp:fs/add, c1)`).
 */
export function checkLiveTools(
  cassette: Cassette,
  recorder: CassetteRecorder,
  callInFlight: () => string | undefined,
): LiveToolCheck {
  const recorded = cassette.entries.filter(
    (entry): entry is McpExchangeEntry => entry.kind === 'mcp' && entry.method === 'tools/call',
  );
  const used = new Set<McpExchangeEntry>();
  const callOfSeq = new Map<string, string | undefined>();
  let divergence: ReplayDivergenceError | undefined;

  const check = (server: string, exchange: Omit<McpExchangeEntry, 'kind' | 'server'>): void => {
    if (exchange.method !== 'tools/call' || !('result' in exchange || 'error' in exchange)) return;
    const seen = recorder.redact({ ...exchange }) as Omit<McpExchangeEntry, 'kind' | 'server'>;
    const tool = toolOf(seen.params);
    const call = callOfSeq.get(`${server}#${exchange.seq}`);
    const step = call ?? `${server} exchange ${exchange.seq}`;
    const where = `Replay diverged at ${step}: tools/call ${tool ?? '?'} on ${server}`;
    const candidates = recorded.filter((entry) => entry.server === server && !used.has(entry));
    const wanted = canonical(seen.params ?? {});
    const same = candidates.find(
      (entry) => firstDifference(canonical(entry.params ?? {}), wanted) === undefined,
    );
    const base = { step, server, method: 'tools/call', ...(tool ? { tool } : {}) };
    if (same === undefined) {
      const nearest = candidates.find((entry) => toolOf(entry.params) === tool);
      const difference = nearest && firstDifference(canonical(nearest.params ?? {}), wanted);
      divergence ??= difference
        ? new ReplayDivergenceError(
            `${where} was recorded with ${difference.path} = ${preview(difference.expected)}, the run sent ${preview(difference.actual)}.`,
            { kind: 'argument', ...base, ...difference },
          )
        : new ReplayDivergenceError(`${where} is not in the recording.`, {
            kind: 'unrecorded-request',
            ...base,
            actual: seen.params,
          });
      return;
    }
    used.add(same);
    const difference = firstDifference(answerOf(same), answerOf(seen));
    if (difference === undefined) return;
    divergence ??= new ReplayDivergenceError(
      `${where} answered ${difference.path} = ${preview(difference.actual)} live, the recording has ${preview(difference.expected)} (the server behaves otherwise than when recorded).`,
      { kind: 'result', ...base, ...difference },
    );
  };

  const wrapped: CassetteRecorder = {
    ...recorder,
    nextSeq(server) {
      const seq = recorder.nextSeq(server);
      callOfSeq.set(`${server}#${seq}`, callInFlight());
      return seq;
    },
    recordExchange(server, exchange) {
      recorder.recordExchange(server, exchange);
      check(server, exchange);
    },
  };
  return {
    recorder: wrapped,
    get divergence() {
      return divergence;
    },
  };
}
