import { parseArgs } from 'node:util';
import type { ParseArgsConfig } from 'node:util';
import { errorMessage } from '../errors.js';
import { createWorkspaceStore } from '../workspace/store.js';
import type { WorkspaceStore } from '../workspace/store.js';
import type { CommandContext } from './command.js';
import { CliUsageError } from './exit-codes.js';

type Options = NonNullable<ParseArgsConfig['options']>;

/**
 * `parseArgs` with strict options and positionals allowed; a mistake becomes a
 * {@link CliUsageError} carrying the command's usage.
 */
export function parseCommandLine<const O extends Options>(
  argv: string[],
  options: O,
  usage: string,
): ReturnType<
  typeof parseArgs<{ args: string[]; options: O; allowPositionals: true; strict: true }>
> {
  try {
    return parseArgs({ args: argv, options, allowPositionals: true, strict: true });
  } catch (error) {
    throw new CliUsageError(errorMessage(error), usage);
  }
}

/** The one positional a command needs (e.g. the NAME of `server add NAME`). */
export function requirePositional(positionals: string[], what: string, usage: string): string {
  const value = positionals[0];
  if (value === undefined || value === '') throw new CliUsageError(`Missing ${what}.`, usage);
  if (positionals.length > 1)
    throw new CliUsageError(`Unexpected arguments: ${positionals.slice(1).join(' ')}`, usage);
  return value;
}

/** The workspace store of a command context. */
export function storeOf(context: CommandContext): WorkspaceStore {
  return createWorkspaceStore(context.workspace, { projectDir: context.cwd });
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
    if (index <= 0) throw new CliUsageError(`${flag} takes KEY=VALUE, got "${pair}".`, usage);
    out[pair.slice(0, index)] = pair.slice(index + 1);
  }
  return out;
}
