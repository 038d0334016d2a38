import { lstat, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { isAbsolute, join, resolve } from 'node:path';
import { AgentsError, AgentsErrorCode } from '../errors.js';
import { runGit } from './git.js';
import { gitEnv } from './git-env.js';
import { unquoteC } from './deliver/guard.js';
import { writeFileAtomic } from '../core/atomic-write.js';

/**
 * Patterns every sandbox leaves out of its snapshots: the output-budget spill folder
 * (`createFileSpill`'s default), whose files are the plugin's own output, not the run's work.
 */
export const DEFAULT_SANDBOX_EXCLUDES: readonly string[] = ['.agents-output/'];

/** Name of the private exclude file inside a sandbox's run dir. */
export const EXCLUDE_FILE = 'exclude';

/** Largest global excludes file copied into the private one. */
const MAX_GLOBAL_EXCLUDES_BYTES = 1024 * 1024;

/**
 * Checks caller-given exclude patterns (gitignore syntax, one per entry). Throws
 * `CONFIG_INVALID` for empty entries or entries with line breaks or NUL, which would smuggle in
 * extra patterns.
 */
export function validateExcludes(patterns: readonly string[]): string[] {
  return patterns.map((pattern) => {
    if (typeof pattern !== 'string' || pattern.trim() === '' || /[\r\n\0]/.test(pattern)) {
      throw new AgentsError(
        AgentsErrorCode.ConfigInvalid,
        `Sandbox exclude pattern ${JSON.stringify(pattern)} is not valid: give one non-empty gitignore pattern per entry, without line breaks.`,
        { details: { pattern } },
      );
    }
    return pattern;
  });
}

/** Section headers of the private exclude file; {@link readRecordedExcludes} reads them back. */
const HEADER = '# Private excludes of this agents sandbox (not shared with the repository).';
const GLOBAL_HEADER = "# From the user's core.excludesFile:";
const SANDBOX_HEADER = '# Sandbox excludes:';
const LFS_HEADER = '# Git LFS patterns (filter=lfs) from .gitattributes:';
/** Header of the section `large-files.ts` rewrites as files cross the size cap. */
export const SIZE_CAP_HEADER =
  '# Files over the snapshot size cap (maxFileBytes), kept by the sandbox:';
const SECTION_HEADERS = [HEADER, GLOBAL_HEADER, SANDBOX_HEADER, LFS_HEADER, SIZE_CAP_HEADER];

/** Largest `.gitattributes` read for LFS patterns. */
const MAX_ATTRIBUTES_BYTES = 1024 * 1024;

/**
 * Writes the sandbox's private exclude file (`<runDir>/exclude`), passed to the snapshot's
 * `add -A` as `-c core.excludesFile=<file>`. It is private to the sandbox on purpose: the
 * repo's `.git/info/exclude` is shared with the user's checkout (and every worktree), so it is
 * never written. Because the option replaces the user's global excludes file for that command,
 * that file's patterns are copied in first, so files the user ignores globally stay out too.
 * Then come `patterns`, and the Git LFS patterns of the tree's top-level `.gitattributes`
 * (read once here, never per snapshot): LFS content is kept out of snapshots. Returns the
 * file's path.
 */
export async function writeExcludeFile(
  runDir: string,
  root: string,
  patterns: readonly string[],
  signal?: AbortSignal,
): Promise<string> {
  const file = join(runDir, EXCLUDE_FILE);
  const global = await readGlobalExcludes(root, signal);
  const lfs = lfsPatterns(await readAttributes(root));
  const text = [
    HEADER,
    ...(global === '' ? [] : [GLOBAL_HEADER, global.trimEnd()]),
    SANDBOX_HEADER,
    ...DEFAULT_SANDBOX_EXCLUDES,
    ...validateExcludes(patterns),
    ...(lfs.length === 0 ? [] : [LFS_HEADER, ...lfs]),
    '',
  ].join('\n');
  await writeFileAtomic(file, text);
  return file;
}

/**
 * The caller-given patterns recorded in a private exclude file written by
 * {@link writeExcludeFile} (the "Sandbox excludes" section without the defaults), so a reopened
 * sandbox can rewrite the file (fresh LFS patterns, no stale size-cap entries) and keep them.
 * Returns `[]` when the file is missing or has no such section.
 */
export async function readRecordedExcludes(file: string): Promise<string[]> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch {
    return [];
  }
  const lines = text.split('\n');
  // The last one: the copied global excludes come before it and could hold any line.
  const start = lines.lastIndexOf(SANDBOX_HEADER);
  if (start < 0) return [];
  const recorded: string[] = [];
  for (const line of lines.slice(start + 1)) {
    if (SECTION_HEADERS.includes(line)) break;
    if (line.trim() === '' || DEFAULT_SANDBOX_EXCLUDES.includes(line)) continue;
    recorded.push(line);
  }
  return recorded;
}

/**
 * Replaces the size-cap section at the end of the private exclude file with `patterns` (none:
 * the section is dropped). Temp file + rename, so a concurrent reader sees the old or the new
 * file.
 */
export async function writeSizeCapSection(
  file: string,
  patterns: readonly string[],
): Promise<void> {
  const text = await readFile(file, 'utf8');
  const at = text.indexOf(`\n${SIZE_CAP_HEADER}\n`);
  const base = at < 0 ? text.trimEnd() : text.slice(0, at).trimEnd();
  await writeFileAtomic(
    file,
    [base, ...(patterns.length === 0 ? [] : [SIZE_CAP_HEADER, ...patterns]), ''].join('\n'),
  );
}

/**
 * The patterns of a `.gitattributes` text whose attributes send files through Git LFS
 * (`filter=lfs`, directly or through a macro defined in the same file), as gitignore patterns.
 * Skipped: comments, macro definitions (`[attr]...`), negations (git ignores them in attribute
 * files), patterns ending in `/` (they match no file in an attribute file), and patterns that
 * cannot be one gitignore line (line breaks, NUL). Quoted patterns are unquoted.
 */
export function lfsPatterns(attributes: string): string[] {
  const lfsMacros = new Set<string>();
  const patterns: string[] = [];
  for (const rawLine of attributes.split(/\r?\n/)) {
    const line = rawLine.trim();
    if (line === '' || line.startsWith('#')) continue;
    const parsed = splitAttributeLine(line);
    if (parsed === undefined) continue;
    const { pattern, attributes: attrs } = parsed;
    if (pattern.startsWith('[attr]')) {
      if (sendsToLfs(attrs, lfsMacros)) lfsMacros.add(pattern.slice('[attr]'.length));
      continue;
    }
    if (!sendsToLfs(attrs, lfsMacros)) continue;
    if (pattern === '' || pattern.startsWith('!') || pattern.endsWith('/')) continue;
    if (/[\r\n\0]/.test(pattern)) continue;
    // gitignore reads a leading `#` as a comment and drops trailing spaces; attribute files do
    // neither (a quoted pattern can end in a space).
    const escaped = pattern.replace(/ +$/, (spaces) => '\\ '.repeat(spaces.length));
    patterns.push(escaped.startsWith('#') ? `\\${escaped}` : escaped);
  }
  return [...new Set(patterns)];
}

/** Whether an attribute list leaves `filter` set to `lfs` (the last setting wins). */
function sendsToLfs(attributes: readonly string[], lfsMacros: ReadonlySet<string>): boolean {
  let lfs = false;
  for (const attribute of attributes) {
    if (attribute === 'filter=lfs' || lfsMacros.has(attribute)) lfs = true;
    else if (/^[-!]?filter(=|$)/.test(attribute)) lfs = false;
  }
  return lfs;
}

/** Splits one attribute line into its pattern (unquoted when quoted) and attributes. */
function splitAttributeLine(line: string): { pattern: string; attributes: string[] } | undefined {
  let pattern: string;
  let rest: string;
  if (line.startsWith('"')) {
    const unquoted = unquoteC(line);
    if (unquoted === undefined) return undefined;
    pattern = unquoted.value;
    rest = line.slice(unquoted.end);
  } else {
    const space = line.search(/\s/);
    pattern = space < 0 ? line : line.slice(0, space);
    rest = space < 0 ? '' : line.slice(space);
  }
  return { pattern, attributes: rest.split(/\s+/).filter((attribute) => attribute !== '') };
}

/** The tree's top-level `.gitattributes`, or '' when missing, not a file, or too large. */
async function readAttributes(root: string): Promise<string> {
  try {
    const path = join(root, '.gitattributes');
    const stats = await lstat(path);
    if (!stats.isFile() || stats.size > MAX_ATTRIBUTES_BYTES) return '';
    return await readFile(path, 'utf8');
  } catch {
    return '';
  }
}

/** The contents of the excludes file git would use in `root` (configured or the XDG default). */
async function readGlobalExcludes(root: string, signal?: AbortSignal): Promise<string> {
  // `--global`, run outside the tree: the sandbox's own `.git/config` is the tool's to write,
  // and must not choose which file the host reads.
  const configured = await runGit(['config', '--global', '--path', '--get', 'core.excludesFile'], {
    cwd: tmpdir(),
    env: gitEnv(),
    ...(signal === undefined ? {} : { signal }),
    okExitCodes: [1],
  }).catch(() => ({ stdout: '', exitCode: 1 }));
  let path = configured.exitCode === 0 ? configured.stdout.trim() : '';
  if (path === '') {
    // git's default; gitEnv passes HOME but not XDG_CONFIG_HOME, so this is what git reads.
    const home = process.env['HOME'];
    if (home === undefined) return '';
    path = join(home, '.config', 'git', 'ignore');
  } else if (!isAbsolute(path)) {
    path = resolve(root, path);
  }
  try {
    const content = await readFile(path, 'utf8');
    return content.length > MAX_GLOBAL_EXCLUDES_BYTES ? '' : content;
  } catch {
    return '';
  }
}
