import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { mkdir, mkdtemp, readdir, realpath, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable, Writable } from 'node:stream';
import { main } from '../../src/cli/main.js';
import { createWorkspaceStore } from '../../src/workspace/store.js';
import {
  FIXTURE_SERVER_PATH,
  TSX_LOADER,
  fixtureStdioArgs,
  modernStdioArgs,
} from '../fixtures/fixture-process.js';
import type { WorkspaceStore } from '../../src/workspace/workspace-types.js';

const MAIN = join(import.meta.dirname, '..', '..', 'src', 'cli', 'main.ts');

/** The argv that runs `agents ARGV...` from source (for a pseudo-terminal or a raw spawn). */
export const agentsArgv = (...argv: string[]): string[] => [
  process.execPath,
  '--import',
  TSX_LOADER,
  MAIN,
  ...argv,
];

/** What one `agents` invocation printed and returned. */
export interface CliRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

function sink() {
  let text = '';
  const stream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      text += chunk.toString();
      done();
    },
  });
  return { stream, text: () => text };
}

/** Runs `agents ...` in this process (the binary's code without the process boundary). */
export function agents(cwd: string, ...argv: string[]): Promise<CliRun> {
  return run(cwd, argv, undefined);
}

/** Like {@link agents}, with `stdin` piped in (not a terminal); `''` is a closed stdin. */
export function agentsWithStdin(cwd: string, stdin: string, ...argv: string[]): Promise<CliRun> {
  return run(cwd, argv, Readable.from(stdin === '' ? [] : [stdin]));
}

async function run(cwd: string, argv: string[], stdin: Readable | undefined): Promise<CliRun> {
  const out = sink();
  const err = sink();
  const code = await main(argv, {
    cwd,
    stdout: out.stream,
    stderr: err.stream,
    ...(stdin === undefined ? {} : { stdin }),
  });
  return { code, stdout: out.text(), stderr: err.text() };
}

/** Runs the real binary as a child process with stdin closed, like a script or CI job. */
export function agentsProcess(
  cwd: string,
  argv: string[],
  onStdout?: (text: string, child: ChildProcess) => void,
  env?: Record<string, string>,
): Promise<CliRun> {
  const child = spawn(process.execPath, ['--import', TSX_LOADER, MAIN, ...argv], {
    cwd,
    stdio: ['ignore', 'pipe', 'pipe'],
    ...(env === undefined ? {} : { env: { ...process.env, ...env } }),
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => {
    stdout += chunk.toString();
    onStdout?.(stdout, child);
  });
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  return new Promise((resolve) => child.on('close', (code) => resolve({ code, stdout, stderr })));
}

/** A temp folder holding a git repo with one commit (README.md): the user's project. */
export async function makeProjectRepo(prefix: string, parent: string = tmpdir()): Promise<string> {
  await mkdir(parent, { recursive: true });
  const dir = await realpath(await mkdtemp(join(parent, prefix)));
  const git = (...args: string[]) => execFileSync('git', args, { cwd: dir, stdio: 'pipe' });
  git('init', '-q', '-b', 'main');
  git('config', 'user.email', 't@example.com');
  git('config', 'user.name', 'T');
  await writeFile(join(dir, 'README.md'), 'hello\n');
  git('add', 'README.md');
  git('commit', '-q', '-m', 'init');
  return dir;
}

/**
 * Registers the fixture server as `fx` (stdio, spawned through tsx) and a skill `files` over it,
 * through the CLI as a user would; fails with the CLI's stderr when either step does.
 */
export async function addFixtureFilesSkill(
  dir: string,
  options: { tools?: string } = {},
): Promise<void> {
  const toolsFlag = options.tools === undefined ? [] : ['--tools', options.tools];
  const server = await agents(
    dir,
    'server',
    'add',
    'fx',
    '--no-validate',
    '--',
    process.execPath,
    '--import',
    TSX_LOADER,
    FIXTURE_SERVER_PATH,
    '--transport',
    'stdio',
    ...toolsFlag,
  );
  if (server.code !== 0) throw new Error(`agents server add fx failed: ${server.stderr}`);
  const skill = await agents(dir, 'skill', 'add', 'files', '--server', 'fx', '--no-validate');
  if (skill.code !== 0) throw new Error(`agents skill add files failed: ${skill.stderr}`);
}

/**
 * Registers the fixture server (its basic tools, `write_file` with a path argument) as `fs` and
 * a skill `files` over it, straight into the workspace store (no CLI process: faster).
 */
export async function putFixtureFilesSkill(dir: string): Promise<void> {
  const store = createWorkspaceStore(join(dir, '.agents'));
  await store.put('server', 'fs', {
    transport: 'stdio',
    command: process.execPath,
    args: fixtureStdioArgs(['--tools', 'basic']),
    overrides: { write_file: { pathArguments: ['path'] } },
  });
  await store.put('skill', 'files', { mcpServers: ['fs'] });
}

/**
 * Writes the scripted model's turns to `script.yaml` (one YAML list item per turn) and registers
 * each named actor over skill `files` driven by it; `mode: 'auto'` runs writes without asking.
 */
export async function addScriptedActors(
  dir: string,
  turns: readonly string[],
  options: { names?: readonly string[]; mode?: 'auto' | 'ask' } = {},
): Promise<void> {
  await writeFile(join(dir, 'script.yaml'), [...turns, ''].join('\n'));
  await mkdir(join(dir, '.agents', 'actors'), { recursive: true });
  const policy = options.mode === undefined ? '' : `policy:\n  mode: ${options.mode}\n`;
  for (const name of options.names ?? ['bot']) {
    await writeFile(
      join(dir, '.agents', 'actors', `${name}.yaml`),
      `skills: [files]\nmodel: scripted:script.yaml\n${policy}`,
    );
  }
}

/** Every file under the state folder's thread folder of `actor`/`thread` (any workspace key). */
export async function threadFiles(actor: string, thread: string): Promise<string[]> {
  const root = process.env['AGENTS_STATE_DIR'];
  if (root === undefined) throw new Error('the test setup sets AGENTS_STATE_DIR');
  const entries = await readdir(root, { recursive: true, withFileTypes: true }).catch(() => []);
  return entries
    .filter((entry) => entry.isFile())
    .map((entry) => join(entry.parentPath, entry.name))
    .filter((path) => path.includes(`/threads/${actor}/${thread}/`));
}

/** A project whose workspace has the 2026-only fixture server `modern` and a skill over it. */
export interface CountingModernProject {
  dir: string;
  store: WorkspaceStore;
  /** Outside the sandbox (writable to the server): the fixture's own bookkeeping. */
  counterDir: string;
  /** `$MODERN_FIXTURE_COUNTER`: a line per execution of the fixture's counting tools. */
  counter: string;
}

/**
 * Makes a project repo whose workspace registers the 2026-07-28 fixture server as `modern`
 * (counting its executions in a file outside the sandbox) and a skill `skill` over it.
 */
export async function makeCountingModernProject(
  prefix: string,
  skill: string,
): Promise<CountingModernProject> {
  const dir = await makeProjectRepo(prefix);
  const counterDir = await realpath(await mkdtemp(join(tmpdir(), `${prefix}counter-`)));
  const counter = join(counterDir, 'executions.txt');
  const store = createWorkspaceStore(join(dir, '.agents'));
  await store.put('server', 'modern', {
    transport: 'stdio',
    command: process.execPath,
    args: modernStdioArgs(),
    env: { MODERN_FIXTURE_COUNTER: counter },
    // The counter lives outside the sandbox: the fixture's own bookkeeping, not the tool's work.
    sandbox: { writable: [counterDir] },
  });
  await store.put('skill', skill, { mcpServers: ['modern'] });
  return { dir, store, counterDir, counter };
}
