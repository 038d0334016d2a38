import { fstatSync } from 'node:fs';
import { resolve } from 'node:path';
import { AgentsError, errorMessage } from '../errors.js';
import { defaultWorkspaceDir } from '../workspace/locate-workspace.js';
import type { Capabilities, ToolDescriptor } from '../core/tool-descriptor.js';

/** True when the stream is a terminal that can take a live status line (`TERM` not `dumb`). */
export function isInteractive(
  stream: NodeJS.WritableStream,
  env: NodeJS.ProcessEnv = process.env,
): boolean {
  return (stream as { isTTY?: boolean }).isTTY === true && env['TERM'] !== 'dumb';
}

/** Colour only on an interactive terminal, and never with `NO_COLOR` set (https://no-color.org). */
export function wantsColor(
  stream: NodeJS.WritableStream,
  env: NodeJS.ProcessEnv = process.env,
): boolean {
  return isInteractive(stream, env) && (env['NO_COLOR'] === undefined || env['NO_COLOR'] === '');
}

/**
 * Quotes a value for a POSIX shell when it needs it, so a printed command pastes back as is
 * (thread ids with spaces or quotes included).
 */
export function shellQuote(value: string): string {
  return /^[A-Za-z0-9_./:=@,+%-]+$/.test(value) ? value : `'${value.replace(/'/g, `'\\''`)}'`;
}

/**
 * A printable `agents ...` command line for the same workspace: `--workspace` is added when the
 * command ran with a workspace other than the default one of its folder.
 */
export function agentsCommandLine(
  context: { workspace: string; cwd: string },
  args: readonly string[],
): string {
  const workspace =
    resolve(context.workspace) === resolve(defaultWorkspaceDir(context.cwd))
      ? []
      : ['--workspace', context.workspace];
  return ['agents', ...workspace, ...args].map(shellQuote).join(' ');
}

/**
 * True when two streams write to the same file, pipe or terminal (`2>&1`, both to one log): a
 * line meant for both then appears once, not twice. Streams without a file descriptor (tests'
 * buffers) are different destinations.
 */
export function sameDestination(a: NodeJS.WritableStream, b: NodeJS.WritableStream): boolean {
  const fdA = (a as { fd?: unknown }).fd;
  const fdB = (b as { fd?: unknown }).fd;
  if (typeof fdA !== 'number' || typeof fdB !== 'number') return false;
  try {
    const statA = fstatSync(fdA);
    const statB = fstatSync(fdB);
    return statA.dev === statB.dev && statA.ino === statB.ino && statA.rdev === statB.rdev;
  } catch {
    return false;
  }
}

/** Writes one line. */
export function println(stream: NodeJS.WritableStream, text = ''): void {
  stream.write(`${text}\n`);
}

/** Writes a value as pretty JSON (for `--json`). */
export function printJson(stream: NodeJS.WritableStream, value: unknown): void {
  stream.write(`${JSON.stringify(value, null, 2)}\n`);
}

/** Formats rows as a left-aligned table with a header; empty tables print `(none)`. */
export function formatTable(
  headers: readonly string[],
  rows: readonly (readonly string[])[],
): string {
  if (rows.length === 0) return '(none)';
  const widths = headers.map((header, column) =>
    Math.max(header.length, ...rows.map((row) => (row[column] ?? '').length)),
  );
  const line = (cells: readonly string[]) =>
    cells
      .map((cell, column) =>
        column === cells.length - 1 ? cell : cell.padEnd(widths[column] ?? 0),
      )
      .join('  ');
  return [line(headers), ...rows.map(line)].join('\n');
}

/** One line per capability: value and where it came from. */
export function formatCapabilities(capabilities: Capabilities): string {
  const rows = (['readOnly', 'writes', 'destructive', 'openWorld'] as const).map((key) => {
    const verdict = capabilities[key];
    return [key, String(verdict.value), verdict.source, verdict.reason];
  });
  const table = formatTable(['capability', 'value', 'source', 'reason'], rows);
  const disagreements = capabilities.disagreements.map((item) => `  ! ${item}`).join('\n');
  return disagreements === '' ? table : `${table}\ndisagreements:\n${disagreements}`;
}

/** A descriptor as `tool show` prints it. */
export function formatDescriptor(descriptor: ToolDescriptor): string {
  return [
    `id:          ${descriptor.id}`,
    `name:        ${descriptor.name}${descriptor.originalName !== descriptor.name ? ` (at source: ${descriptor.originalName})` : ''}`,
    `source:      ${descriptor.source}${descriptor.serverName ? ` (server ${descriptor.serverName})` : ''}`,
    `paths:       ${descriptor.pathArguments.join(', ') || '(none)'}`,
    `fingerprint: ${descriptor.fingerprint}`,
    `description: ${descriptor.description.split('\n').join('\n             ')}`,
    '',
    formatCapabilities(descriptor.capabilities),
  ].join('\n');
}

/** A JSON-safe view of an error for `--json` output. */
export function errorToJson(error: unknown): Record<string, unknown> {
  if (AgentsError.isInstance(error)) {
    return { error: { code: error.code, message: error.message, details: error.details } };
  }
  return { error: { code: 'ERROR', message: errorMessage(error) } };
}

/**
 * Prints an error for a person: the message (usage errors carry the usage), then the server's
 * stderr when there is some and the message does not already quote it (server start errors
 * quote its last lines), so it is printed once.
 */
export function printError(stream: NodeJS.WritableStream, error: unknown): void {
  if (error instanceof AggregateError) {
    println(stream, `agents: ${error.message}`);
    return;
  }
  const message = errorMessage(error);
  println(stream, `agents: ${message}`);
  if (AgentsError.isInstance(error)) {
    const stderrTail = error.details['stderrTail'];
    if (typeof stderrTail !== 'string') return;
    const lastLine = stderrTail.trimEnd().split('\n').at(-1)?.trim() ?? '';
    if (lastLine === '' || message.includes(lastLine)) return;
    println(stream, '--- server stderr (last lines) ---');
    println(stream, stderrTail.trimEnd());
  }
}
