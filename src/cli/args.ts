import { parseArgs } from 'node:util';
import type { ParseArgsConfig } from 'node:util';
import { AgentsError, AgentsErrorCode, errorMessage } from '../errors.js';
import { createWorkspaceStore } from '../workspace/store.js';
import type { WorkspaceStore } from '../workspace/workspace-types.js';
import type { CommandContext } from './command.js';
import { closest } from '../core/suggest.js';

type Options = NonNullable<ParseArgsConfig['options']>;

/**
 * The one shape of a command-line mistake: `INVALID_ARGUMENTS` (exit code 2). The message comes
 * first and alone, then the command's synopsis (the usage's first paragraph) and where the full
 * help is: the error stays on screen instead of scrolling away above thirty lines of options.
 * `details.usage` keeps the whole usage for `--json` consumers.
 */
export function usageError(message: string, usage: string, cause?: unknown): AgentsError {
  return new AgentsError(
    AgentsErrorCode.InvalidArguments,
    `${message}\n${synopsis(usage)}\n${helpPointer(usage)}`,
    { ...(cause === undefined ? {} : { cause }), details: { usage } },
  );
}

/** The usage's first paragraph (`Usage: agents x ...` and any alternative forms). */
function synopsis(usage: string): string {
  return usage.split(/\n\s*\n/)[0]!.trimEnd();
}

/** "See `agents tool add --help` ...", the command words read from the usage line. */
function helpPointer(usage: string): string {
  const words: string[] = [];
  for (const word of /^Usage:\s+agents\s+(.*)$/m.exec(usage)?.[1]?.split(/\s+/) ?? []) {
    if (!/^[a-z][a-z-]*$/.test(word)) break;
    words.push(word);
  }
  return words.length === 0
    ? 'See `agents --help` for the commands.'
    : `See \`agents ${words.join(' ')} --help\` for all options.`;
}

/**
 * Node's parser message for a mistake, rewritten for a person: the unknown option with the
 * closest known one ("did you mean --input?"), a missing value named plainly. Node's own text
 * ends in an unclosed quote and talks about positionals nobody typed.
 */
function explainParseError(error: unknown, options: Options): string {
  const message = errorMessage(error);
  const code = (error as { code?: unknown } | undefined)?.code;
  const known = Object.entries(options).flatMap(([name, option]) => [
    `--${name}`,
    ...(option.short === undefined ? [] : [`-${option.short}`]),
  ]);
  if (code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION') {
    const typed = /Unknown option '([^']+)'/.exec(message)?.[1] ?? message;
    const meant = closest(typed.split('=')[0]!, known);
    return `Unknown option ${typed}.${meant === undefined ? '' : ` Did you mean ${meant}?`}`;
  }
  if (code === 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE') {
    const missing = /^Option '(-[^' ]+)(?:, (-[^' ]+))? <value>' argument missing/.exec(message);
    if (missing) return `${missing[2] ?? missing[1]} needs a value.`;
    const ambiguous = /^Option '(?:-\w, )?(--?[^' ]+)' argument is ambiguous/.exec(message);
    if (ambiguous)
      return `${ambiguous[1]} needs a value; to pass one that starts with "-", write ${ambiguous[1]}=VALUE.`;
    const flag = /^Option '(?:-\w, )?(--?[^' ]+)' does not take an argument/.exec(message);
    if (flag) return `${flag[1]} takes no value.`;
  }
  return message;
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
    throw usageError(explainParseError(error, options), usage, error);
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

/**
 * `argv` with an empty value put after `flag` when it stands alone (last, or before another
 * option), so `parseArgs` reads a flag with an optional value (`--record [PATH]`) as `''`.
 */
export function withOptionalValue(argv: readonly string[], flag: string): string[] {
  const copy = [...argv];
  const at = copy.indexOf(flag);
  if (at !== -1 && (copy[at + 1] === undefined || copy[at + 1]!.startsWith('-'))) {
    copy.splice(at + 1, 0, '');
  }
  return copy;
}
