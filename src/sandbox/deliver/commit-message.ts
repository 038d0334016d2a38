/** Longest prompt quoted in a commit message. */
const MAX_PROMPT_CHARS = 2000;
/** Longest first line (git's and the forges' convention). */
const SUBJECT_CHARS = 72;

/** What a commit message of the agent's work is made from. */
export interface WorkMessageInput {
  threadId?: string | undefined;
  actor?: string | undefined;
  /** The user's prompts of the work, oldest first (duplicates dropped). */
  prompts: readonly string[];
  /** Tools whose calls wrote the files (`mcp:SERVER/TOOL`, ...). */
  tools: readonly string[];
  /** The user's commit the sandbox started from. */
  baseCommit?: string | undefined;
  /** The checkpoint(s) the commit holds, named in the body. */
  checkpoints?: readonly string[];
  /** `(2/3)` style position in a series of commits. */
  position?: { index: number; count: number } | undefined;
}

/**
 * A commit message made from the thread: the first line from the user's prompt, the prompt in
 * full, the tools that wrote the files, the thread id, the checkpoint(s) and the commit the
 * sandbox started from, and a `Co-authored-by` trailer naming the actor (git and the forges show
 * it as a co-author). Never an internal sandbox id.
 */
export function workCommitMessage(input: WorkMessageInput): string {
  const prompts = [...new Set(input.prompts.map((prompt) => prompt.trim()))].filter(Boolean);
  const first = (prompts[0] ?? '').split('\n')[0]!.trim();
  const position =
    input.position === undefined || input.position.count < 2
      ? ''
      : ` (${input.position.index}/${input.position.count})`;
  const subjectBase =
    first === ''
      ? input.threadId === undefined
        ? 'Work of an agents run'
        : `Work of agents thread ${input.threadId}`
      : first;
  const subject =
    subjectBase.length + position.length > SUBJECT_CHARS
      ? `${subjectBase.slice(0, SUBJECT_CHARS - position.length - 1).trimEnd()}…${position}`
      : `${subjectBase}${position}`;
  const lines = [subject, ''];
  // The prompt in full unless the first line already is all of it.
  const whole = prompts.length === 1 && prompts[0] === first && subject === `${first}${position}`;
  if (prompts.length > 0 && !whole) {
    for (const prompt of prompts) {
      lines.push(
        'Prompt:',
        ...prompt
          .slice(0, MAX_PROMPT_CHARS)
          .split('\n')
          .map((line) => `  ${line}`),
        '',
      );
    }
  }
  if (input.tools.length > 0)
    lines.push(`Files written by: ${[...new Set(input.tools)].join(', ')}`);
  if (input.threadId !== undefined) lines.push(`Agents thread: ${input.threadId}`);
  if (input.checkpoints !== undefined && input.checkpoints.length > 0)
    lines.push(`Checkpoint: ${input.checkpoints.join(', ')}`);
  if (input.baseCommit !== undefined) lines.push(`Sandbox base commit: ${input.baseCommit}`);
  const actor = input.actor ?? 'agents';
  lines.push('', `Co-authored-by: agents actor ${actor} <${actor}@agents.invalid>`);
  return `${lines.join('\n')}\n`;
}
