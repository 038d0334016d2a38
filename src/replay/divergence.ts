/**
 * How a replay says it left the recording: one typed error naming the step (a model turn or a
 * server's exchange), the call, what differed and where in the value. Also the comparison it is
 * built on: a canonical form (keys sorted, `_meta` dropped) and the first differing path.
 */
import { AgentsError, AgentsErrorCode } from '../errors.js';

/** What a replay found different from the recording. */
export type DivergenceKind =
  /** A request (method, tool) the recording does not have at all. */
  | 'unrecorded-request'
  /** A request the recording has, with a different argument. */
  | 'argument'
  /** (`--tools live`) A live server answered a recorded request otherwise. */
  | 'result'
  /** A model turn whose messages in differ from the recorded ones (a result changed upstream). */
  | 'model-input'
  /** A model turn beyond the recorded ones. */
  | 'unrecorded-turn'
  /** The run ended with recorded exchanges or turns never asked for. */
  | 'not-replayed'
  /** (`agents thread replay`) The sandbox's tree after a call, or at the end, is not the recorded one. */
  | 'tree'
  /** (`agents thread replay`) The policy decided a call otherwise than recorded. */
  | 'policy'
  /** (`agents thread replay`) The run made a different number of checkpoints. */
  | 'checkpoints';

/** The details of a {@link ReplayDivergenceError}. */
export interface DivergenceDetails extends Record<string, unknown> {
  kind: DivergenceKind;
  /** `model turn 2` or `fx exchange 4`: the recorded step where it happened. */
  step: string;
  /** The server, for MCP steps. */
  server?: string;
  method?: string;
  /** The tool name, for `tools/call`. */
  tool?: string;
  /** The tool call id, for steps of `agents thread replay`. */
  toolCallId?: string;
  /** Where the values differ, as a path (`arguments.b`, `input[3].content`). */
  path?: string;
  expected?: unknown;
  actual?: unknown;
}

let created = 0;

/** Thrown (and kept) when a replay leaves its cassette; code `REPLAY_DIVERGED`. */
export class ReplayDivergenceError extends AgentsError {
  declare readonly details: DivergenceDetails;
  /** Creation order, so the first of several divergences (the cause) is the one reported. */
  readonly order = ++created;
  constructor(message: string, details: DivergenceDetails) {
    super(AgentsErrorCode.ReplayDiverged, message, { details });
    this.name = 'ReplayDivergenceError';
  }
}

/** `value` with object keys sorted and every `_meta` dropped: the form requests are matched in. */
export function canonical(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(canonical);
  if (typeof value === 'object' && value !== null) {
    const out: Record<string, unknown> = {};
    for (const key of Object.keys(value).sort()) {
      const item = (value as Record<string, unknown>)[key];
      if (key !== '_meta' && item !== undefined) out[key] = canonical(item);
    }
    return out;
  }
  return value;
}

/** The first path where two canonical values differ, or undefined when they are equal. */
export function firstDifference(
  expected: unknown,
  actual: unknown,
  path = '',
): { path: string; expected: unknown; actual: unknown } | undefined {
  if (Object.is(expected, actual)) return undefined;
  const bothArrays = Array.isArray(expected) && Array.isArray(actual);
  const bothObjects =
    typeof expected === 'object' &&
    expected !== null &&
    typeof actual === 'object' &&
    actual !== null &&
    !Array.isArray(expected) &&
    !Array.isArray(actual);
  if (bothArrays) {
    const length = Math.max(expected.length, actual.length);
    for (let index = 0; index < length; index++) {
      const found = firstDifference(expected[index], actual[index], `${path}[${index}]`);
      if (found) return found;
    }
    return undefined;
  }
  if (bothObjects) {
    const keys = new Set([...Object.keys(expected), ...Object.keys(actual)]);
    for (const key of [...keys].sort()) {
      const found = firstDifference(
        (expected as Record<string, unknown>)[key],
        (actual as Record<string, unknown>)[key],
        path === '' ? key : `${path}.${key}`,
      );
      if (found) return found;
    }
    return undefined;
  }
  return { path: path === '' ? '(whole value)' : path, expected, actual };
}

/** A value for a message: JSON, cut to a readable length. */
export function preview(value: unknown): string {
  const text = value === undefined ? 'nothing' : JSON.stringify(value);
  return text.length > 120 ? `${text.slice(0, 117)}...` : text;
}
