/** What a CLI command receives. Only `cli/` reads argv, prints or exits. */
export interface CommandContext {
  /** Arguments after the command words (e.g. after `tool add`). */
  argv: string[];
  /**
   * Workspace folder: `--workspace DIR`, else the nearest `.agents/` found from the current
   * folder upward (see `locateWorkspace`), else `.agents` in the current folder.
   */
  workspace: string;
  /**
   * The project folder: the folder that holds the workspace. Relative paths in records, the
   * sandbox source and the checkpoint file resolve against it, never against the current folder.
   */
  projectDir: string;
  /** The current folder (only for paths the user typed on the command line). */
  cwd: string;
  json: boolean;
  stdout: NodeJS.WritableStream;
  stderr: NodeJS.WritableStream;
  stdin: NodeJS.ReadableStream;
  /** Aborted on SIGINT/SIGTERM. */
  signal: AbortSignal;
}

/**
 * One `agents` sub-command. Returns the exit code (errors are thrown and mapped in main). Its
 * one-line summary is its {@link CommandEntry}'s, so it is written once.
 */
export interface Command {
  /** Command words, e.g. `['tool', 'add']`. */
  path: string[];
  /** Full `--help` text. */
  usage: string;
  run(context: CommandContext): Promise<number>;
}

/**
 * A command known by its words and summary before its module is loaded (`commands/index.ts`):
 * `agents --help` lists it, and only the command that runs is loaded.
 */
export interface CommandEntry {
  path: string[];
  summary: string;
  load(): Promise<Command>;
}
