import { AgentsError, AgentsErrorCode } from '../errors.js';

/** A duration as users write it: `90s`, `10m`, `1.5h`, `500ms`. */
export const DURATION_PATTERN = /^(\d+(?:\.\d+)?)\s*(ms|s|m|h)$/;

const UNIT_MS = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000 } as const;

/**
 * Milliseconds of a duration: a string with a unit (`90s`, `10m`, `1h`, `500ms`) or a number of
 * seconds. Throws `INVALID_ARGUMENTS` naming `where` (e.g. `--max-time`) and the forms it takes.
 */
export function parseDuration(value: string | number, where: string): number {
  const match = typeof value === 'number' ? undefined : DURATION_PATTERN.exec(value.trim());
  const ms =
    typeof value === 'number'
      ? value * 1_000
      : match === null || match === undefined
        ? Number.NaN
        : Number(match[1]) * UNIT_MS[match[2] as keyof typeof UNIT_MS];
  if (!Number.isFinite(ms) || ms <= 0) {
    throw new AgentsError(
      AgentsErrorCode.InvalidArguments,
      `${where} ${String(value)} is not a duration; write a positive number with a unit: 90s, 10m, 1h or 500ms (a bare number counts seconds).`,
      { details: { where, value } },
    );
  }
  return ms;
}
