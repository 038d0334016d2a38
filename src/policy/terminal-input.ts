import { createInterface } from 'node:readline/promises';
import { AgentsError, AgentsErrorCode } from '../errors.js';
import { answerInputRequest } from './input-answer.js';
import type {
  ElicitAnswer,
  InputQuestion,
  InputRequestPreview,
  InputResponse,
} from './input-requests.js';
import { endOfInputError } from './terminal-approval.js';

/** Renders a server's questions for a terminal: server, tool, arguments, each message. */
export function formatInputRequestPreview(preview: InputRequestPreview): string {
  const lines = [
    `Question from server "${preview.serverName}" before running ${preview.toolId} (round ${preview.round})`,
    `  arguments: ${JSON.stringify(preview.args, null, 2).replace(/\n/g, '\n  ')}`,
  ];
  for (const question of preview.questions) {
    lines.push(`  ${question.key}: ${question.message.replace(/\n/g, '\n    ')}`);
    for (const field of fieldsOf(question)) lines.push(`    - ${describeField(field)}`);
  }
  return lines.join('\n');
}

/** One property of a form (elicitation schemas are flat objects of primitives). */
interface FormField {
  name: string;
  type: string;
  required: boolean;
  title?: string;
  choices?: string[];
}

function fieldsOf(question: InputQuestion): FormField[] {
  const schema = question.requestedSchema;
  const properties = schema['properties'];
  if (typeof properties !== 'object' || properties === null) return [];
  const required = Array.isArray(schema['required']) ? (schema['required'] as unknown[]) : [];
  return Object.entries(properties as Record<string, unknown>).map(([name, raw]) => {
    const property = (typeof raw === 'object' && raw !== null ? raw : {}) as Record<
      string,
      unknown
    >;
    const choices = Array.isArray(property['enum'])
      ? property['enum'].map(String)
      : Array.isArray(property['oneOf'])
        ? property['oneOf'].map((item) => String((item as { const?: unknown }).const))
        : undefined;
    return {
      name,
      type: typeof property['type'] === 'string' ? property['type'] : 'string',
      required: required.includes(name),
      ...(typeof property['title'] === 'string' ? { title: property['title'] } : {}),
      ...(choices === undefined ? {} : { choices }),
    };
  });
}

function describeField(field: FormField): string {
  const kind = field.choices ? `one of ${field.choices.join(', ')}` : field.type;
  return `${field.name}${field.title === undefined ? '' : ` "${field.title}"`} (${kind}${field.required ? ', required' : ''})`;
}

/** A typed value from one line, or an error message. */
function parseField(field: FormField, text: string): { value: unknown } | { error: string } {
  if (field.choices && !field.choices.includes(text))
    return { error: `Answer one of: ${field.choices.join(', ')}.` };
  if (field.type === 'boolean') {
    if (/^(y|yes|true)$/i.test(text)) return { value: true };
    if (/^(n|no|false)$/i.test(text)) return { value: false };
    return { error: 'Answer y or n.' };
  }
  if (field.type === 'number' || field.type === 'integer') {
    const value = Number(text);
    if (
      text === '' ||
      !Number.isFinite(value) ||
      (field.type === 'integer' && !Number.isInteger(value))
    )
      return { error: `Answer ${field.type === 'integer' ? 'a whole number' : 'a number'}.` };
    return { value };
  }
  return { value: text };
}

/** Streams for {@link promptForInput}. */
export interface TerminalInputOptions {
  input: NodeJS.ReadableStream;
  output: NodeJS.WritableStream;
  /** Recorded as `by` in the answer (default `user`). */
  user?: string;
  signal?: AbortSignal;
}

/**
 * Asks a server's questions on a terminal: answer (field by field), decline or cancel. Returns
 * the `resume` value for `Command({ resume })`, with the round's `requestState`. End of input
 * (Ctrl-D, a closed pipe) throws the `CLOSED` error `isEndOfInput` recognises, so the caller
 * leaves the run paused (exit 8), as for an approval; an aborted signal throws `ABORTED`.
 */
export async function promptForInput(
  preview: InputRequestPreview,
  options: TerminalInputOptions,
): Promise<InputResponse> {
  options.signal?.throwIfAborted();
  const by = options.user ?? 'user';
  const rl = createInterface({ input: options.input, output: options.output, terminal: false });
  const lines = rl[Symbol.asyncIterator]();
  const ask = async (question: string): Promise<string> => {
    options.output.write(question);
    const next = await lines.next();
    if (options.signal?.aborted === true)
      throw new AgentsError(AgentsErrorCode.Aborted, 'Question prompt aborted.');
    if (next.done === true) {
      throw endOfInputError(
        `Input ended before the question of server "${preview.serverName}" for ${preview.toolId} was answered; the run stays paused.`,
        { toolId: preview.toolId },
      );
    }
    return String(next.value).trim();
  };
  const onAbort = (): void => rl.close();
  options.signal?.addEventListener('abort', onAbort, { once: true });
  try {
    options.output.write(`${formatInputRequestPreview(preview)}\n`);
    const responses: Record<string, ElicitAnswer> = {};
    for (const question of preview.questions) {
      const label = preview.questions.length === 1 ? '' : ` (${question.key})`;
      let action: ElicitAnswer['action'] | undefined;
      while (action === undefined) {
        const choice = (await ask(`[a]nswer, [d]ecline, [c]ancel${label}? `)).toLowerCase();
        if (choice === 'a' || choice === 'answer') action = 'accept';
        else if (choice === 'd' || choice === 'decline') action = 'decline';
        else if (choice === 'c' || choice === 'cancel') action = 'cancel';
        else options.output.write('Please answer a, d or c.\n');
      }
      if (action !== 'accept') {
        responses[question.key] = { action };
        continue;
      }
      const content: Record<string, unknown> = {};
      for (const field of fieldsOf(question)) {
        for (;;) {
          const text = await ask(`  ${describeField(field)}: `);
          if (text === '' && !field.required) break;
          const parsed = parseField(field, text);
          if ('value' in parsed) {
            content[field.name] = parsed.value;
            break;
          }
          options.output.write(`  ${parsed.error}\n`);
        }
      }
      responses[question.key] = { action, content };
    }
    return answerInputRequest(preview, responses, by);
  } finally {
    options.signal?.removeEventListener('abort', onAbort);
    rl.close();
  }
}
