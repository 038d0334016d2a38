import { parseArgs } from 'node:util';
import type { ParseArgsConfig } from 'node:util';
import { AgentsError, AgentsErrorCode, errorMessage } from '../errors.js';
import { createWorkspaceStore } from '../workspace/store.js';
import type { WorkspaceStore } from '../workspace/store.js';
import type { CommandContext } from './command.js';

type Options = NonNullable<ParseArgsConfig['options']>;

/**
 * The one shape of a command-line mistake: `INVALID_ARGUMENTS` (exit code 2), the message
 * followed by the command's usage so the person sees what to type instead. `details.usage`
 * keeps the usage apart for `--json` consumers.
 */
export function usageError(message: string, usage: string, cause?: unknown): AgentsError {
  return new AgentsError(AgentsErrorCode.InvalidArguments, `${message}\n\n${usage}`, {
    ...(cause === undefined ? {} : { cause }),
    details: { usage },
  });
}

/**
 * `parseArgs` with strict options and positionals allowed; a mistake becomes a
 * {@link usageError} carrying the command's usage.
 */
export function parseCommandLine<const O extends Options>(
  argv: readonly string[],
  options: O,
  usage: string,
): ReturnType<
  typeof parseArgs<{ args: string[]; options: O; allowPositionals: true; strict: true }>
> {
  try {
    return parseArgs({ args: [...argv], options, allowPositionals: true, strict: true });
  } catch (error) {
    throw usageError(errorMessage(error), usage, error);
  }
}

/**
 * {@link parseCommandLine} for a command that takes only options: any positional is a usage
 * error. Returns the option values.
 */
export function parseCommandArgs<const O extends Options>(
  argv: readonly string[],
  options: O,
  usage: string,
): ReturnType<typeof parseCommandLine<O>>['values'] {
  const { values, positionals } = parseCommandLine(argv, options, usage);
  if (positionals.length > 0)
    throw usageError(`Unexpected arguments: ${positionals.join(' ')}`, usage);
  return values;
}

/** The one positional a command needs (e.g. the NAME of `server add NAME`). */
export function requirePositional(positionals: string[], what: string, usage: string): string {
  const value = positionals[0];
  if (value === undefined || value === '') throw usageError(`Missing ${what}.`, usage);
  if (positionals.length > 1)
    throw usageError(`Unexpected arguments: ${positionals.slice(1).join(' ')}`, usage);
  return value;
}

/** Requires a string option; throws `INVALID_ARGUMENTS` naming it. */
export function requireOption(value: unknown, name: string, usage: string): string {
  if (typeof value !== 'string' || value === '') throw usageError(`Missing --${name}.`, usage);
  return value;
}

/**
 * Reads an optional whole-number option (`--limit 5`) of at least `min` (default 1); undefined
 * when absent. Anything else (`-1`, `2.5`, `5x`, below `min`) throws `INVALID_ARGUMENTS` naming
 * the option and the value.
 */
export function parsePositiveInteger(
  value: string | undefined,
  name: string,
  usage: string,
  min = 1,
): number | undefined {
  if (value === undefined) return undefined;
  const parsed = /^\d+$/.test(value.trim()) ? Number(value) : Number.NaN;
  if (!Number.isSafeInteger(parsed) || parsed < min) {
    throw usageError(
      `--${name} must be ${min === 1 ? 'a positive integer' : `an integer >= ${min}`}, got "${value}".`,
      usage,
    );
  }
  return parsed;
}

/** The workspace store of a command context. */
export function storeOf(context: Pick<CommandContext, 'workspace' | 'projectDir'>): WorkspaceStore {
  return createWorkspaceStore(context.workspace, { projectDir: context.projectDir });
}

/** Parses `KEY=VALUE` pairs (for `--env` / `--header`). */
export function parsePairs(
  values: string[] | undefined,
  flag: string,
  usage: string,
): Record<string, string> | undefined {
  if (values === undefined || values.length === 0) return undefined;
  const out: Record<string, string> = {};
  for (const pair of values) {
    const index = pair.indexOf('=');
    if (index <= 0) throw usageError(`${flag} takes KEY=VALUE, got "${pair}".`, usage);
    out[pair.slice(0, index)] = pair.slice(index + 1);
  }
  return out;
}
