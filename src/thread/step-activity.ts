/**
 * What one checkpoint's step did, read from the messages it added: the prompt that came in, the
 * tools the model called, the answer it gave. `agents checkpoints` prints it so a person can
 * pick the checkpoint to roll back to without opening each one.
 */

/** The prompt, tool calls and answer a checkpoint added (each absent when it added none). */
export interface StepActivity {
  /** Text of the human message(s) the step brought in. */
  prompt?: string;
  /** Names of the tools the model asked for, in call order. */
  tools?: string[];
  /** Names of the tools whose results the step added (the tools node ran them). */
  ran?: string[];
  /** Text of the model's answer without tool calls. */
  answer?: string;
}

/** `human`, `ai`, `tool`... for a LangChain message instance or its plain-object form. */
function messageType(message: unknown): string | undefined {
  if (typeof message !== 'object' || message === null) return undefined;
  // `type` is public on LangChain messages (`getType()` and `_getType()` are deprecated).
  const candidate = message as { type?: unknown; role?: unknown };
  if (typeof candidate.type === 'string') return candidate.type;
  return typeof candidate.role === 'string' ? candidate.role : undefined;
}

function textOf(message: unknown): string {
  const content = (message as { content?: unknown }).content;
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content
    .map((part: unknown) =>
      typeof part === 'string'
        ? part
        : typeof (part as { text?: unknown }).text === 'string'
          ? (part as { text: string }).text
          : '',
    )
    .join('');
}

function messagesOf(values: unknown): unknown[] {
  const messages = (values as { messages?: unknown } | undefined)?.messages;
  return Array.isArray(messages) ? messages : [];
}

/**
 * The activity of the messages `values` holds beyond `parentValues` (the messages channel only
 * grows along a branch; a fork that replaced messages counts its last one).
 */
export function stepActivity(values: unknown, parentValues: unknown): StepActivity {
  const messages = messagesOf(values);
  const before = messagesOf(parentValues).length;
  const added = messages.length >= before ? messages.slice(before) : messages.slice(-1);
  const activity: StepActivity = {};
  const prompts: string[] = [];
  const tools: string[] = [];
  const ran: string[] = [];
  for (const message of added) {
    const type = messageType(message);
    if (type === 'human' || type === 'user') prompts.push(textOf(message));
    else if (type === 'tool') {
      const name = (message as { name?: unknown }).name;
      ran.push(typeof name === 'string' && name !== '' ? name : 'tool');
    } else if (type === 'ai' || type === 'assistant') {
      const calls = (message as { tool_calls?: Array<{ name?: unknown }> }).tool_calls ?? [];
      for (const call of calls) if (typeof call.name === 'string') tools.push(call.name);
      const text = textOf(message).trim();
      if (calls.length === 0 && text !== '') activity.answer = text;
    }
  }
  if (prompts.length > 0) activity.prompt = prompts.join('\n');
  if (tools.length > 0) activity.tools = tools;
  if (ran.length > 0) activity.ran = ran;
  return activity;
}

/**
 * One short line for a table cell: `prompt "text"`, `calls a, b` (the model asked), `ran a`
 * (the tools answered), `answer "text"`; `-` when the step added no message.
 */
export function formatActivity(activity: StepActivity | undefined, max = 48): string {
  if (activity === undefined) return '-';
  const clip = (text: string) => {
    const line = text.replace(/\s+/g, ' ').trim();
    return line.length > max ? `${line.slice(0, max - 1)}…` : line;
  };
  const parts: string[] = [];
  if (activity.prompt !== undefined) parts.push(`prompt "${clip(activity.prompt)}"`);
  if (activity.tools !== undefined) parts.push(`calls ${clip(activity.tools.join(', '))}`);
  if (activity.ran !== undefined) parts.push(`ran ${clip(activity.ran.join(', '))}`);
  if (activity.answer !== undefined) parts.push(`answer "${clip(activity.answer)}"`);
  return parts.length === 0 ? '-' : parts.join('; ');
}
