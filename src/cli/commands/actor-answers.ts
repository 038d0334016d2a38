import { userInfo } from 'node:os';
import { PassThrough, Writable } from 'node:stream';
import type { ApprovalPreview, ApprovalResponse } from '../../policy/approval.js';
import { promptForApproval } from '../../policy/terminal-approval.js';
import type { InputRequestPreview, InputResponse } from '../../policy/input-requests.js';
import { promptForInput } from '../../policy/terminal-input.js';
import { editArgumentsInEditor, editorFromEnv } from '../edit-arguments.js';
import type { CommandContext } from '../command.js';
import { println } from '../output.js';
import { createLineQueue, type LineQueue } from '../line-queue.js';

export function defaultUser(): string {
  try {
    return userInfo().username || 'user';
  } catch {
    // No passwd entry (some containers): the policy's default name.
    return 'user';
  }
}

/**
 * Approval answers read line by line from one stream for the whole command. `promptForApproval`
 * opens a readline per question, which would swallow the rest of a piped chunk when it closes,
 * so each prompt reads from its own stream, fed one line each time it asks a question.
 */
export interface AnswerSource {
  /** True when an answer can be read (a terminal, or a pipe that has a line left). */
  hasInput(): Promise<boolean>;
  ask(preview: ApprovalPreview): Promise<ApprovalResponse>;
  /** Asks a server's questions (a 2026-07-28 `input_required` round). */
  askInput(preview: InputRequestPreview): Promise<InputResponse>;
  close(): void;
}

/**
 * @param inputSchemaOf The input schema of a tool by id, to check arguments edited in `$EDITOR`.
 * @param lines The lines answers are read from (`agents chat` shares them with its turns; the
 *   caller closes them); default: a queue over `context.stdin`, closed by `close()`.
 */
export function createAnswerSource(
  context: CommandContext,
  by: string,
  inputSchemaOf: (toolId: string) => unknown = () => undefined,
  lines?: LineQueue,
): AnswerSource {
  const stdin = context.stdin as NodeJS.ReadableStream & { isTTY?: boolean };
  const output = context.json ? context.stderr : context.stdout;
  const queue = lines ?? createLineQueue(stdin);
  // A pipe may never send another line; Ctrl-C must still end the wait.
  const next = (): Promise<string | undefined> => queue.next(context.signal);
  /** Runs one prompt on its own stream, fed one line of ours each time it asks a question. */
  const prompted = <T>(
    prompt: (input: NodeJS.ReadableStream, output: NodeJS.WritableStream) => Promise<T>,
  ): Promise<T> => {
    const input = new PassThrough();
    const questions = new Writable({
      write(chunk: Buffer | string, _encoding, done) {
        const text = String(chunk);
        output.write(text);
        // A write without a newline is a question: hand the prompt the next line.
        if (!text.endsWith('\n')) {
          // Ctrl-C rejects the wait; the prompt sees its own abort, so just end its input.
          next().then(
            (line) => {
              if (line === undefined) input.end();
              else input.write(`${line}\n`);
            },
            () => input.end(),
          );
        }
        done();
      },
    });
    return prompt(input, questions);
  };
  return {
    async hasInput() {
      // A terminal may answer later; reading ahead would hide the question behind the wait.
      if (stdin.isTTY === true) return true;
      if (queue.buffered === 0 && !queue.ended)
        println(
          context.stderr,
          'Waiting for approval answers on stdin (not a terminal); close stdin or pass --no-prompt to stop here and resume later.',
        );
      const line = await next();
      if (line === undefined) return false;
      queue.unshift(line);
      return true;
    },
    ask(preview) {
      // On a terminal with $VISUAL / $EDITOR set, a bare `e` opens the editor on the arguments.
      const editor = stdin.isTTY === true ? editorFromEnv() : undefined;
      return prompted((input, questions) =>
        promptForApproval(preview, {
          input,
          output: questions,
          user: by,
          signal: context.signal,
          // Ctrl-D at the prompt leaves the run paused (exit 8), as a closed stdin before it does.
          onEndOfInput: 'pause',
          ...(editor === undefined
            ? {}
            : {
                editArgs: (args: Record<string, unknown>) =>
                  editArgumentsInEditor(args, {
                    editor,
                    inputSchema: inputSchemaOf(preview.toolId),
                    // The editor reads the terminal now: stop our reader taking its keystrokes.
                    beforeSpawn: () => queue.pause(),
                    afterExit: () => queue.resume(),
                  }),
              }),
        }),
      );
    },
    askInput(preview) {
      // Ctrl-D throws the end-of-input error: the run stays paused (exit 8), as for approvals.
      return prompted((input, questions) =>
        promptForInput(preview, { input, output: questions, user: by, signal: context.signal }),
      );
    },
    close() {
      if (lines === undefined) queue.close();
    },
  };
}
