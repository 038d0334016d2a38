/**
 * `e` at the terminal approval prompt: the tool call's arguments open in the user's editor
 * (`$VISUAL`, else `$EDITOR`) as pretty JSON in a temp file; what comes back is checked as JSON
 * and against the tool's input schema before it is approved.
 */
import { spawn } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { compileArgumentValidator } from '../mcp/json-schema.js';

/** What an edit came to: new arguments, or why not (said to the user, who may try again). */
export type EditOutcome = { args: Record<string, unknown> } | { error: string };

/** The editor command from the environment, or undefined when none is set. */
export function editorFromEnv(env: NodeJS.ProcessEnv = process.env): string | undefined {
  const editor = (env['VISUAL'] ?? '').trim() || (env['EDITOR'] ?? '').trim();
  return editor === '' ? undefined : editor;
}

/**
 * Opens `args` in `editor` and returns the edited arguments when they are a JSON object that the
 * tool's `inputSchema` accepts. The editor is spawned with an argument array, never a shell:
 * `$EDITOR` is split on whitespace (`code --wait` works; shell quoting does not) and the file
 * path is the last argument. It inherits the terminal; `beforeSpawn`/`afterExit` let the caller
 * stop reading the terminal meanwhile (two readers would split the keystrokes).
 */
export async function editArgumentsInEditor(
  args: Record<string, unknown>,
  options: {
    editor: string;
    inputSchema?: unknown;
    beforeSpawn?: () => void;
    afterExit?: () => void;
  },
): Promise<EditOutcome> {
  const [command, ...editorArgs] = options.editor.split(/\s+/).filter((part) => part !== '');
  if (command === undefined) return { error: 'No editor: set $EDITOR (e.g. EDITOR=nano).' };
  const dir = await mkdtemp(join(tmpdir(), 'agents-edit-'));
  const file = join(dir, 'arguments.json');
  try {
    await writeFile(file, `${JSON.stringify(args, null, 2)}\n`, { mode: 0o600 });
    options.beforeSpawn?.();
    let exit: { code: number | null; error?: Error };
    try {
      exit = await new Promise((resolve) => {
        const child = spawn(command, [...editorArgs, file], { stdio: 'inherit' });
        child.once('error', (error) => resolve({ code: null, error }));
        child.once('exit', (code) => resolve({ code }));
      });
    } finally {
      options.afterExit?.();
    }
    if (exit.error !== undefined)
      return {
        error: `Could not start the editor "${options.editor}" (${exit.error.message}); set $EDITOR to an editor command, or answer e followed by the JSON.`,
      };
    if (exit.code !== 0)
      return { error: `The editor exited with code ${exit.code}; the arguments were not changed.` };
    const text = await readFile(file, 'utf8');
    let edited: unknown;
    try {
      edited = JSON.parse(text);
    } catch (error) {
      return {
        error: `The edited arguments are not valid JSON (${error instanceof Error ? error.message : String(error)}); answer e to edit again.`,
      };
    }
    if (typeof edited !== 'object' || edited === null || Array.isArray(edited))
      return { error: 'The edited arguments must be a JSON object; answer e to edit again.' };
    if (options.inputSchema !== undefined) {
      const result = compileArgumentValidator(options.inputSchema).validate(edited);
      if (!result.valid)
        return {
          error: `The edited arguments do not match the tool's input schema: ${result.problems.join('; ')}. Answer e to edit again.`,
        };
    }
    return { args: edited as Record<string, unknown> };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
