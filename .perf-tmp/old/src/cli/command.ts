/** What a CLI command receives. Only `cli/` reads argv, prints or exits. */
export interface CommandContext {
  /** Arguments after the command words (e.g. after `tool add`). */
  argv: string[];
  /** Workspace folder (default `.agents` under cwd). */
  workspace: string;
  cwd: string;
  json: boolean;
  stdout: NodeJS.WritableStream;
  stderr: NodeJS.WritableStream;
  stdin: NodeJS.ReadableStream;
  /** Aborted on SIGINT/SIGTERM. */
  signal: AbortSignal;
}

/** One `agents` sub-command. Returns the exit code (errors are thrown and mapped in main). */
export interface Command {
  /** Command words, e.g. `['tool', 'add']`. */
  path: string[];
  summary: string;
  /** Full `--help` text. */
  usage: string;
  run(context: CommandContext): Promise<number>;
}
