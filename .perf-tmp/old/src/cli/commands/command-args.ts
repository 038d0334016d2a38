import { parseArgs } from 'node:util';
import type { ParseArgsConfig } from 'node:util';
import { AgentsError, AgentsErrorCode, errorMessage } from '../../errors.js';

/**
 * Parses argv for a command that takes only options (no positionals). A parse error becomes
 * `INVALID_ARGUMENTS` (exit code 2) whose message ends with the usage.
 */
export function parseCommandArgs<const O extends NonNullable<ParseArgsConfig['options']>>(
  argv: string[],
  options: O,
  usage: string,
): ReturnType<
  typeof parseArgs<{ args: string[]; options: O; allowPositionals: false; strict: true }>
>['values'] {
  try {
    return parseArgs({ args: argv, options, allowPositionals: false, strict: true }).values;
  } catch (error) {
    throw new AgentsError(AgentsErrorCode.InvalidArguments, `${errorMessage(error)}\n\n${usage}`, {
      cause: error,
    });
  }
}

/** Requires a string option; throws `INVALID_ARGUMENTS` naming it. */
export function requireOption(value: unknown, name: string, usage: string): string {
  if (typeof value !== 'string' || value === '') {
    throw new AgentsError(AgentsErrorCode.InvalidArguments, `Missing --${name}.\n\n${usage}`, {
      details: { option: name },
    });
  }
  return value;
}

/**
 * Reads an optional positive whole-number option (`--limit 5`); undefined when absent. Anything
 * else (`0`, `-1`, `2.5`, `5x`) throws `INVALID_ARGUMENTS` naming the option and the value.
 */
export function parsePositiveInteger(
  value: string | undefined,
  name: string,
  usage: string,
): number | undefined {
  if (value === undefined) return undefined;
  const parsed = /^\d+$/.test(value.trim()) ? Number(value) : Number.NaN;
  if (!Number.isSafeInteger(parsed) || parsed <= 0) {
    throw new AgentsError(
      AgentsErrorCode.InvalidArguments,
      `--${name} must be a positive integer, got "${value}".\n\n${usage}`,
      { details: { option: name, value } },
    );
  }
  return parsed;
}
