#!/usr/bin/env node
import { readFileSync, realpathSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { defaultWorkspaceDir, locateWorkspace } from '../workspace/locate-workspace.js';
import type { CommandContext, CommandEntry } from './command.js';
import { commands as defaultCommands } from './commands/index.js';
import { AgentsError, AgentsErrorCode } from '../errors.js';
import { usageError } from './args.js';
import { closest } from '../core/suggest.js';
import { EXIT_CODE_HELP, ExitCode, exitCodeFor } from './exit-codes.js';
import { errorToJson, printError, println } from './output.js';
import { interruptTaken } from './interrupts.js';

/** Where `main` reads and writes; the process streams by default, buffers in tests. */
export interface MainIo {
  stdout?: NodeJS.WritableStream;
  stderr?: NodeJS.WritableStream;
  stdin?: NodeJS.ReadableStream;
  cwd?: string;
  /** Aborts the running command (Ctrl-C). */
  signal?: AbortSignal;
  commands?: readonly CommandEntry[];
  /** True when an abort needs no message (stdout's reader went away, e.g. `| head`). */
  quietAbort?: () => boolean;
}

interface GlobalOptions {
  workspace?: string;
  json: boolean;
  help: boolean;
  version: boolean;
  rest: string[];
}

/**
 * Pulls the global options out of argv, wherever they are (before `--`): `--workspace DIR`,
 * `--json`, `--help`/`-h`, `--version` (`-v` before the command). Everything else is left, in order, for the command.
 */
function extractGlobalOptions(argv: readonly string[]): GlobalOptions {
  const options: GlobalOptions = { json: false, help: false, version: false, rest: [] };
  for (let index = 0; index < argv.length; index++) {
    const arg = argv[index]!;
    if (arg === '--') {
      options.rest.push(...argv.slice(index));
      break;
    }
    if (arg === '--json') options.json = true;
    else if (arg === '--help' || arg === '-h') options.help = true;
    // `-v` only before the command: a command's values (`--input -v`) are not ours to take.
    else if (arg === '--version' || (arg === '-v' && options.rest.length === 0))
      options.version = true;
    else if (arg === '--workspace') {
      const value = argv[index + 1];
      if (value === undefined) throw usageError('--workspace needs a folder.', USAGE);
      options.workspace = value;
      index++;
    } else if (arg.startsWith('--workspace=')) options.workspace = arg.slice('--workspace='.length);
    else options.rest.push(arg);
  }
  return options;
}

const USAGE = `Usage: agents [--workspace DIR] [--json] COMMAND [ARGS...]

Use tools from any MCP server in LangGraph actors: register servers, tools, skills and actors in
a workspace folder (default .agents/), then run actors with sandboxed, change-tracked tools.

Global options:
  --workspace DIR   workspace folder (default ./.agents)
  --json            machine-readable output on list/show commands
  --help, -h        help for any command
  --version, -v     the version of this package`;

function overview(commands: readonly CommandEntry[]): string {
  const width = Math.max(...commands.map((command) => command.path.join(' ').length));
  return [
    USAGE,
    '',
    'Commands:',
    ...commands.map((command) => `  ${command.path.join(' ').padEnd(width)}  ${command.summary}`),
    '',
    EXIT_CODE_HELP,
  ].join('\n');
}

/** The command whose path is the longest prefix of the positional words. */
function findCommand(
  commands: readonly CommandEntry[],
  words: readonly string[],
): { command: CommandEntry; rest: string[] } | undefined {
  let best: CommandEntry | undefined;
  for (const command of commands) {
    const matches = command.path.every((word, index) => words[index] === word);
    if (matches && (!best || command.path.length > best.path.length)) best = command;
  }
  return best ? { command: best, rest: words.slice(best.path.length) } : undefined;
}

/**
 * "Unknown command" alone, with the closest command when one is near (`actor rnu` → `actor
 * run`, `chekpoints` → `checkpoints`) and where to list them, instead of the whole overview.
 */
function unknownCommand(words: readonly string[], commands: readonly CommandEntry[]): AgentsError {
  const typed = words.filter((word) => !word.startsWith('-'));
  let meant: string | undefined;
  // The nearest command word by word: every word must be close, the group word first.
  const first = closest(typed[0] ?? '', [...new Set(commands.map((command) => command.path[0]!))]);
  if (first !== undefined) {
    const group = commands.filter((command) => command.path[0] === first);
    const single = group.find((command) => command.path.length === 1);
    const second =
      typed[1] === undefined
        ? undefined
        : closest(
            typed[1],
            group.flatMap((command) => command.path.slice(1, 2)),
          );
    if (second !== undefined) meant = `${first} ${second}`;
    else if (first !== typed[0] && (single || typed.length === 1)) meant = first;
  }
  const shown = typed.slice(0, 2).join(' ');
  const group = commands.some((command) => command.path[0] === typed[0]) ? ` ${typed[0]}` : '';
  return new AgentsError(
    AgentsErrorCode.InvalidArguments,
    `Unknown command "${shown}".${meant === undefined ? '' : ` Did you mean "agents ${meant}"?`}\n` +
      `See \`agents${group} --help\` for the commands.`,
    { details: { usage: overview(commands) } },
  );
}

/**
 * Runs the `agents` command line and returns the exit code. Prints only to the given streams
 * and never calls `process.exit`; the bin wrapper at the bottom does.
 */
export async function main(argv: readonly string[], io: MainIo = {}): Promise<number> {
  const stdout = io.stdout ?? process.stdout;
  const stderr = io.stderr ?? process.stderr;
  const commands = io.commands ?? defaultCommands;
  let json = false;
  try {
    const global = extractGlobalOptions(argv);
    json = global.json;
    if (global.version) {
      println(stdout, readVersion());
      return ExitCode.Ok;
    }
    const found = findCommand(commands, global.rest);
    if (!found) {
      const first = global.rest[0];
      // No command, or a group (`agents server`): list what exists under it.
      const group =
        first === undefined ? commands : commands.filter((command) => command.path[0] === first);
      if (group.length === 0) throw unknownCommand(global.rest, commands);
      const subcommand = global.rest[1];
      if (subcommand !== undefined) throw unknownCommand(global.rest, commands);
      println(global.help ? stdout : stderr, overview(group));
      return global.help ? ExitCode.Ok : ExitCode.Usage;
    }
    const command = await found.command.load();
    if (global.help) {
      println(stdout, command.usage);
      return ExitCode.Ok;
    }
    const cwd = io.cwd ?? process.cwd();
    const workspace = global.workspace
      ? resolve(cwd, global.workspace)
      : (locateWorkspace(cwd) ?? defaultWorkspaceDir(cwd));
    const context: CommandContext = {
      argv: found.rest,
      workspace,
      projectDir: dirname(workspace),
      cwd,
      json,
      stdout,
      stderr,
      stdin: io.stdin ?? process.stdin,
      signal: io.signal ?? new AbortController().signal,
    };
    return await command.run(context);
  } catch (error) {
    const code = io.signal?.aborted ? ExitCode.Interrupted : exitCodeFor(error);
    if (code === ExitCode.Interrupted) {
      if (io.quietAbort?.() !== true)
        println(stderr, 'agents: interrupted; everything started was stopped.');
    } else if (json) stderr.write(`${JSON.stringify(errorToJson(error))}\n`);
    else printError(stderr, error);
    return code;
  }
}

function readVersion(): string {
  try {
    const file = fileURLToPath(new URL('../../package.json', import.meta.url));
    const parsed: unknown = JSON.parse(readFileSync(file, 'utf8'));
    return typeof parsed === 'object' && parsed !== null && 'version' in parsed
      ? String(parsed.version)
      : 'unknown';
  } catch {
    return 'unknown';
  }
}

function isEntryPoint(): boolean {
  const script = process.argv[1];
  if (script === undefined) return false;
  try {
    return realpathSync(script) === realpathSync(fileURLToPath(import.meta.url));
  } catch {
    return false;
  }
}

if (isEntryPoint()) {
  const controller = new AbortController();
  let interrupts = 0;
  const onSignal = (signal: NodeJS.Signals) => {
    // `agents chat` stops a turn on Ctrl-C, not the command (cli/interrupts.ts).
    if (signal === 'SIGINT' && interruptTaken()) return;
    interrupts++;
    // First Ctrl-C: abort and let the command clean up; second: give up waiting.
    if (interrupts > 1) process.exit(ExitCode.Interrupted);
    process.stderr.write(`\nagents: ${signal} received, stopping (again to force)...\n`);
    controller.abort(new Error(`Interrupted by ${signal}`));
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  // `agents checkpoints | head -3`: the reader left, which is not an error. Stop the command
  // (it cleans up as on Ctrl-C) and end quietly instead of dying on an unhandled EPIPE.
  let readerGone = false;
  process.stdout.on('error', (error: NodeJS.ErrnoException) => {
    if (error.code !== 'EPIPE') throw error;
    if (readerGone) return;
    readerGone = true;
    controller.abort(new Error('stdout closed by its reader'));
  });
  const code = await main(process.argv.slice(2), {
    signal: controller.signal,
    quietAbort: () => readerGone,
  });
  process.exitCode = readerGone ? ExitCode.Ok : code;
  process.off('SIGINT', onSignal);
  process.off('SIGTERM', onSignal);
  // Everything was closed; should a library handle still hold the loop, do not hang the shell.
  setTimeout(() => process.exit(code), 2_000).unref();
}
