/**
 * The LangGraph thread a runnable config names (`config.configurable.thread_id`), or undefined
 * when it names none or names it with something other than a string. The one place a thread id
 * is read out of a config: tool calls, the audit log and human-in-the-loop all ask this.
 */
export function threadIdOf(config: unknown): string | undefined {
  if (typeof config !== 'object' || config === null) return undefined;
  const configurable = (config as { configurable?: unknown }).configurable;
  if (typeof configurable !== 'object' || configurable === null) return undefined;
  const threadId = (configurable as { thread_id?: unknown }).thread_id;
  return typeof threadId === 'string' ? threadId : undefined;
}
