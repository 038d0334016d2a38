import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';

/** The repository root: the README and docs/ the blocks come from. */
export const ROOT = join(import.meta.dirname, '..', '..');

/** Fence info strings that mark a shell block. */
const SHELL_INFO = new Set(['sh', 'bash', 'shell', 'console']);

/**
 * The marker a page puts on the line before a shell block the docs test does not run here:
 * `<!-- shell: skip: WHY -->` (a key, the network, a download, minutes), or
 * `<!-- shell: run by test/PATH -->` (another test runs the block's lines as written).
 */
const MARKER = /^<!--\s*shell:\s*(skip|run by)\s*:?\s*(.*?)\s*-->$/;

/** One command of a block: its text as written (heredoc included) and what it must exit with. */
export interface ShellCommand {
  text: string;
  /** The block's line number (1-based, in the page) where the command starts. */
  line: number;
  /** `fails: exit N` or `exits N` in its comment; else 0. */
  exitCode: number;
  /** `Ctrl-C stops it` in its comment: it runs until stopped, so the test stops it once ready. */
  stopsOnCtrlC: boolean;
}

export interface ShellBlock {
  page: string;
  line: number;
  commands: ShellCommand[];
  /** Set when the page marks the block: not run by the docs test, and why. */
  notRunHere?: { kind: 'skip' | 'run by'; why: string };
}

/** The comment of a shell line: from the first `#` outside quotes that starts a word. */
function commentOf(line: string): string {
  let quote: string | undefined;
  for (let index = 0; index < line.length; index++) {
    const char = line[index]!;
    if (quote !== undefined) {
      if (char === quote) quote = undefined;
    } else if (char === "'" || char === '"') quote = char;
    else if (char === '#' && (index === 0 || /\s/.test(line[index - 1]!)))
      return line.slice(index + 1);
  }
  return '';
}

/** Splits a block's lines into commands: heredocs and `\` continuations join their command. */
export function parseCommands(lines: readonly string[], firstLine: number): ShellCommand[] {
  const commands: ShellCommand[] = [];
  let comment = '';
  const finish = () => {
    const last = commands.at(-1);
    if (last === undefined) return;
    const fails = /(?:fails: exit|exits) (\d+)/.exec(comment);
    last.exitCode = fails === null ? 0 : Number(fails[1]);
    last.stopsOnCtrlC = /Ctrl-C stops it/.test(comment);
  };
  for (let index = 0; index < lines.length; index++) {
    const line = lines[index]!;
    if (line.trim() === '') continue;
    // A line holding only a comment goes on explaining the command above it.
    if (line.trim().startsWith('#')) {
      comment += ` ${line.trim().slice(1)}`;
      continue;
    }
    finish();
    const start = index;
    let text = line;
    comment = commentOf(line);
    while (text.endsWith('\\') && index + 1 < lines.length) text += `\n${lines[++index]!}`;
    const heredoc = /<<-?\s*'?"?(\w+)'?"?/.exec(text.split('#')[0]!);
    if (heredoc !== null) {
      const end = heredoc[1]!;
      while (index + 1 < lines.length) {
        text += `\n${lines[++index]!}`;
        if (lines[index]!.trim() === end) break;
      }
    }
    commands.push({ text, line: firstLine + start, exitCode: 0, stopsOnCtrlC: false });
  }
  finish();
  return commands;
}

/** Every shell block of a page, with its marker when it has one. */
export function shellBlocksOf(page: string): ShellBlock[] {
  const lines = readFileSync(join(ROOT, page), 'utf8').split('\n');
  const blocks: ShellBlock[] = [];
  for (let index = 0; index < lines.length; index++) {
    const fence = /^```(\S*)/.exec(lines[index]!);
    if (fence === null) continue;
    const open = index;
    const body: string[] = [];
    while (++index < lines.length && !lines[index]!.startsWith('```')) body.push(lines[index]!);
    if (!SHELL_INFO.has(fence[1]!)) {
      // A bare fence holding commands would escape the test: shell blocks must say `sh`.
      if (fence[1] === '' && /^(agents|npm|npx|git) /.test(body[0] ?? ''))
        throw new Error(`${page}:${open + 1}: a shell block without "sh" after its fence`);
      continue;
    }
    const marker = MARKER.exec(lines[open - 1]?.trim() ?? '');
    blocks.push({
      page,
      line: open + 1,
      commands: parseCommands(body, open + 2),
      ...(marker === null
        ? {}
        : { notRunHere: { kind: marker[1] as 'skip' | 'run by', why: marker[2]! } }),
    });
  }
  return blocks;
}

/** README.md and every docs/*.md page. */
export function documentationPages(): string[] {
  const docs = readdirSync(join(ROOT, 'docs'))
    .filter((file) => file.endsWith('.md'))
    .sort()
    .map((file) => `docs/${file}`);
  return ['README.md', ...docs];
}
