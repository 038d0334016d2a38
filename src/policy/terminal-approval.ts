import { createInterface } from 'node:readline/promises';
import { AgentsError, AgentsErrorCode } from '../errors.js';
import type { ApprovalPreview, ApprovalResponse } from './approval.js';
import { printable } from './audit-escape.js';

/** Renders an approval preview for a terminal: tool, server, why, capabilities with provenance, args. */
export function formatApprovalPreview(preview: ApprovalPreview): string {
  const lines = [
    `Approval needed: ${preview.toolId}${preview.serverName === undefined ? '' : ` (server "${preview.serverName}")`}`,
    // Escaped: a reason may quote what a server sent (a host, a message).
    `  why: ${printable(preview.reason)} [${printable(preview.rule)}]`,
  ];
  if (preview.network !== undefined) {
    lines.push(
      `  network: server "${preview.network.serverName}" was refused ${printable(preview.network.hosts.join(', '))} (on no list); approve to allow it for this server from now on and run the call again`,
    );
  }
  if (preview.pinnedFingerprint !== undefined) {
    lines.push(
      `  definition changed: pinned ${preview.pinnedFingerprint.slice(0, 12)}, now ${preview.fingerprint.slice(0, 12)}`,
    );
  }
  for (const key of ['readOnly', 'writes', 'destructive', 'openWorld'] as const) {
    const verdict = preview.capabilities[key];
    lines.push(`  ${key}: ${String(verdict.value)} (${verdict.source}: ${verdict.reason})`);
  }
  for (const note of preview.capabilities.disagreements) lines.push(`  note: ${note}`);
  lines.push(`  arguments: ${JSON.stringify(preview.args, null, 2).replace(/\n/g, '\n  ')}`);
  return lines.join('\n');
}

/** The answer word (lower case) and what follows it on the line, if anything. */
function splitAnswer(answer: string): { choice: string; rest: string | undefined } {
  const match = /^(\S+)\s+([\s\S]+)$/.exec(answer);
  if (!match) return { choice: answer.toLowerCase(), rest: undefined };
  return { choice: match[1]!.toLowerCase(), rest: match[2]!.trim() };
}

/** Streams for {@link promptForApproval}. */
export interface TerminalApprovalOptions {
  input: NodeJS.ReadableStream;
  output: NodeJS.WritableStream;
  /** Recorded as `by` in the answer (default `user`). */
  user?: string;
  signal?: AbortSignal;
  /**
   * Edits the arguments some other way for a bare `e` (the CLI opens `$EDITOR` on a terminal):
   * new arguments are approved as an edit; an `error` is shown and the question asked again.
   * Without it, a bare `e` asks for the JSON on the next line.
   */
  editArgs?: (
    args: Record<string, unknown>,
  ) => Promise<{ args: Record<string, unknown> } | { error: string }>;
  /**
   * What end of input (Ctrl-D, a closed pipe) before an answer means: `reject` (default) the
   * call, or `pause`: throw `CLOSED`, so the caller leaves the run paused on its thread (the CLI
   * exits 8, as for a closed stdin before the question).
   */
  onEndOfInput?: 'reject' | 'pause';
}

/** Thrown by {@link promptForApproval} with `onEndOfInput: 'pause'` when input ends unanswered. */
export function isEndOfInput(error: unknown): boolean {
  return AgentsError.hasCode(error, AgentsErrorCode.Closed) && END_OF_INPUT in (error as object);
}

const END_OF_INPUT = Symbol('end of input');

/** The `CLOSED` error {@link isEndOfInput} recognises: input ended before an answer. */
export function endOfInputError(message: string, details: Record<string, unknown>): AgentsError {
  const error = new AgentsError(AgentsErrorCode.Closed, message, { details });
  return Object.assign(error, { [END_OF_INPUT]: true });
}

/**
 * Asks on a terminal: approve, edit (new arguments as one line of JSON) or reject (with a message).
 * Returns the `resume` value for `Command({ resume })`. End of input counts as a rejection (or
 * pauses, see `onEndOfInput`); an aborted signal throws `ABORTED`.
 */
export async function promptForApproval(
  preview: ApprovalPreview,
  options: TerminalApprovalOptions,
): Promise<ApprovalResponse> {
  options.signal?.throwIfAborted();
  const by = options.user ?? 'user';
  const rl = createInterface({ input: options.input, output: options.output, terminal: false });
  const lines = rl[Symbol.asyncIterator]();
  const ask = async (question: string): Promise<string | undefined> => {
    options.output.write(question);
    const next = await lines.next();
    return next.done === true ? undefined : String(next.value).trim();
  };
  const onAbort = (): void => rl.close();
  const ended = (): ApprovalResponse => {
    if (options.onEndOfInput !== 'pause')
      return { type: 'reject', message: 'no answer (input closed)', by };
    throw endOfInputError(
      `Input ended before the approval of ${preview.toolId} was answered; the run stays paused.`,
      { toolId: preview.toolId },
    );
  };
  options.signal?.addEventListener('abort', onAbort, { once: true });
  try {
    options.output.write(`${formatApprovalPreview(preview)}\n`);
    // A network approval has no arguments to edit.
    const canEdit = preview.allowedResponses.includes('edit');
    for (;;) {
      const answer = await ask(
        canEdit
          ? '[a]pprove, [e]dit, [r]eject (r MESSAGE, e JSON)? '
          : '[a]pprove, [r]eject (r MESSAGE)? ',
      );
      if (options.signal?.aborted === true)
        throw new AgentsError(AgentsErrorCode.Aborted, 'Approval prompt aborted.');
      if (answer === undefined) return ended();
      // `r not now` and `e {"path":"x"}` answer on one line; a bare `r` / `e` asks for the rest.
      const { choice, rest } = splitAnswer(answer);
      if (choice === 'a' || choice === 'approve' || choice === 'y' || choice === 'yes')
        return { type: 'approve', by };
      if (choice === 'r' || choice === 'reject' || choice === 'n' || choice === 'no') {
        const message = rest ?? (await ask('Message for the model (optional): '));
        return message === undefined || message === ''
          ? { type: 'reject', by }
          : { type: 'reject', message, by };
      }
      if (!canEdit && (choice === 'e' || choice === 'edit')) {
        options.output.write('This approval cannot be edited: answer a or r.\n');
        continue;
      }
      if ((choice === 'e' || choice === 'edit') && rest === undefined && options.editArgs) {
        const edited = await options.editArgs(preview.args);
        if ('args' in edited) return { type: 'edit', args: edited.args, by };
        options.output.write(`${edited.error}\n`);
        continue;
      }
      if (choice === 'e' || choice === 'edit') {
        const text = rest ?? (await ask('New arguments as JSON: '));
        if (text === undefined) return ended();
        try {
          const args: unknown = JSON.parse(text);
          if (typeof args === 'object' && args !== null && !Array.isArray(args)) {
            return { type: 'edit', args: args as Record<string, unknown>, by };
          }
          options.output.write('Arguments must be a JSON object.\n');
        } catch (error) {
          options.output.write(
            `Not valid JSON (${error instanceof Error ? error.message : String(error)}).\n`,
          );
        }
        continue;
      }
      options.output.write(
        'Please answer a, r (optionally followed by a message) or e (optionally followed by JSON).\n',
      );
    }
  } finally {
    options.signal?.removeEventListener('abort', onAbort);
    rl.close();
  }
}
