import { readFile, rename, writeFile } from 'node:fs/promises';
import { isAbsolute, join, resolve } from 'node:path';
import { AgentsError, AgentsErrorCode } from '../errors.js';
import { gitEnv, runGit } from './git.js';

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

/**
 * Writes the sandbox's private exclude file (`<runDir>/exclude`), passed to the snapshot's
 * `add -A` as `-c core.excludesFile=<file>`. It is private to the sandbox on purpose: the
 * repo's `.git/info/exclude` is shared with the user's checkout (and every worktree), so it is
 * never written. Because the option replaces the user's global excludes file for that command,
 * that file's patterns are copied in first, so files the user ignores globally stay out too.
 * Returns the file's path.
 */
export async function writeExcludeFile(
  runDir: string,
  root: string,
  patterns: readonly string[],
  signal?: AbortSignal,
): Promise<string> {
  const file = join(runDir, EXCLUDE_FILE);
  const global = await readGlobalExcludes(root, signal);
  const text = [
    '# Private excludes of this agents sandbox (not shared with the repository).',
    ...(global === '' ? [] : ["# From the user's core.excludesFile:", global.trimEnd()]),
    '# Sandbox excludes:',
    ...DEFAULT_SANDBOX_EXCLUDES,
    ...validateExcludes(patterns),
    '',
  ].join('\n');
  const temp = `${file}.${process.pid}.tmp`;
  await writeFile(temp, text);
  await rename(temp, file);
  return file;
}

/** The contents of the excludes file git would use in `root` (configured or the XDG default). */
async function readGlobalExcludes(root: string, signal?: AbortSignal): Promise<string> {
  const configured = await runGit(['config', '--path', '--get', 'core.excludesFile'], {
    cwd: root,
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
