/**
 * A server's timeout and restart defaults as plain values, apart from the zod schemas of
 * `server-schema.ts` (which take their `.default()`s from here, so these stay the only ones):
 * the adapter reads the call timeouts without loading zod (issue 29).
 */

/** Timeouts of one server (described field by field in `ServerTimeoutsSchema`). */
export interface ServerTimeouts {
  startupMs: number;
  callMs: number;
  maxCallMs: number;
  resetOnProgress: boolean;
  pingMs: number;
  healthCheckIntervalMs: number;
  shutdownMs: number;
}

/** Restart policy of one server (see `ServerRestartPolicySchema`). */
export interface ServerRestartPolicy {
  enabled: boolean;
  maxAttempts: number;
  initialDelayMs: number;
  maxDelayMs: number;
}

export const SERVER_TIMEOUT_DEFAULTS: Readonly<ServerTimeouts> = Object.freeze({
  startupMs: 30_000,
  callMs: 60_000,
  maxCallMs: 600_000,
  resetOnProgress: false,
  pingMs: 5_000,
  healthCheckIntervalMs: 0,
  shutdownMs: 2_000,
});

export const SERVER_RESTART_DEFAULTS: Readonly<ServerRestartPolicy> = Object.freeze({
  enabled: true,
  maxAttempts: 3,
  initialDelayMs: 200,
  maxDelayMs: 5_000,
});

/** The fields of `value` that are set, so they can be laid over defaults. */
function setFields<T extends object>(value: Partial<T> | undefined): Partial<T> {
  if (value === undefined) return {};
  return Object.fromEntries(
    Object.entries(value).filter(([, field]) => field !== undefined),
  ) as Partial<T>;
}

/**
 * A server's timeouts, each field it leaves out taken from the defaults (a config built in code
 * need not name them; a parsed file has them already).
 */
export function resolveServerTimeouts(timeouts?: Partial<ServerTimeouts>): ServerTimeouts {
  return { ...SERVER_TIMEOUT_DEFAULTS, ...setFields(timeouts) };
}

/** A server's restart policy, the fields it leaves out from the defaults. */
export function resolveServerRestartPolicy(
  restart?: Partial<ServerRestartPolicy>,
): ServerRestartPolicy {
  return { ...SERVER_RESTART_DEFAULTS, ...setFields(restart) };
}
