/** Helpers for tests that run the real `agents serve` as a child process. */
import { spawn } from 'node:child_process';
import type { ChildProcessWithoutNullStreams } from 'node:child_process';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { FIXTURE_SERVER_PATH, TSX_LOADER } from '../fixtures/fixture-process.js';

const MAIN = join(import.meta.dirname, '..', '..', 'src', 'cli', 'main.ts');

/** How long a spawned serve test may take (tsx start-up, git worktrees, upstream spawns). */
export const SPAWN_TIMEOUT = 120_000;

/** A running `agents serve` and what it printed so far. */
export interface ServeProcess {
  child: ChildProcessWithoutNullStreams;
  stderr(): string;
  stdoutLines: string[];
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/**
 * Spawns `agents --workspace <cwd>/.agents serve ...args` in `cwd` with piped stdio. The caller
 * registers `stop` in its cleanups so a failing test leaves no process behind.
 */
export function spawnServe(
  cwd: string,
  args: string[],
  env?: Record<string, string>,
): ServeProcess & { stop: () => Promise<void> } {
  const child = spawn(
    process.execPath,
    ['--import', TSX_LOADER, MAIN, '--workspace', join(cwd, '.agents'), 'serve', ...args],
    {
      cwd,
      stdio: ['pipe', 'pipe', 'pipe'],
      ...(env === undefined ? {} : { env: { ...process.env, ...env } }),
    },
  );
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  const stdoutLines: string[] = [];
  let partial = '';
  child.stdout.on('data', (chunk: Buffer) => {
    partial += chunk.toString();
    const lines = partial.split('\n');
    partial = lines.pop() ?? '';
    stdoutLines.push(...lines);
  });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('exit', (code, signal) => resolve({ code, signal })),
  );
  const stop = async (): Promise<void> => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGKILL');
      await exited;
    }
  };
  return { child, stderr: () => stderr, stdoutLines, exited, stop };
}

/** Polls `read` until it gives a value; fails early when the process exits. */
export async function waitFor<T>(
  read: () => T | undefined,
  what: string,
  spawned: ServeProcess,
  ms = 90_000,
): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = read();
    if (value !== undefined) return value;
    if (spawned.child.exitCode !== null)
      throw new Error(`serve exited before ${what}: ${spawned.stderr()}`);
    if (Date.now() > deadline)
      throw new Error(`timed out waiting for ${what}: ${spawned.stderr()}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** The banner facts `agents serve` prints on stderr at start. */
export function bannerOf(stderr: string): {
  sandbox?: string;
  sandboxNote?: string;
  upstreamPid?: number;
  serving: boolean;
} {
  const sandbox = /^sandbox: (.+) \(([^)]*)\)$/m.exec(stderr);
  const pid = /^upstream server "fixture" \(pid (\d+)\)$/m.exec(stderr);
  return {
    serving: /^serving (skill|actor) /m.test(stderr),
    ...(sandbox === null ? {} : { sandbox: sandbox[1]!, sandboxNote: sandbox[2]! }),
    ...(pid === null ? {} : { upstreamPid: Number(pid[1]) }),
  };
}

/** The endpoint URL an HTTP `agents serve` printed on stdout. */
export function endpointOf(spawned: ServeProcess): string | undefined {
  return spawned.stdoutLines.map((line) => /^MCP endpoint: (\S+)$/.exec(line)?.[1]).find(Boolean);
}

/** True while a process with that pid exists. */
export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** Options of {@link writeServeWorkspace}. */
export interface ServeWorkspaceOptions {
  /** Extra YAML lines of the `fixture` server (indented under it), e.g. a restart policy. */
  serverYaml?: string[];
  /** Lines of `actors/coder.yaml` after `skills: [fixture]` (e.g. a policy); no actor when undefined. */
  actorYaml?: string[];
}

/**
 * Writes `<dir>/.agents` with skill `fixture` (the fixture MCP server's basic tools over stdio,
 * annotations trusted so its read tools count as read-only) and, when asked, actor `coder`
 * using it. The actor keeps the defaults (model `scripted` without a script file, a sandbox of
 * the project, an SQLite checkpointer) unless `actorYaml` says otherwise.
 */
export async function writeServeWorkspace(
  dir: string,
  options: ServeWorkspaceOptions = {},
): Promise<string> {
  const workspace = join(dir, '.agents');
  await mkdir(join(workspace, 'skills'), { recursive: true });
  await mkdir(join(workspace, 'actors'), { recursive: true });
  const args = ['--import', TSX_LOADER, FIXTURE_SERVER_PATH, '--transport', 'stdio'];
  args.push('--tools', 'basic');
  await writeFile(
    join(workspace, 'skills', 'fixture.yaml'),
    [
      "description: The fixture server's basic tools",
      'mcpServers:',
      '  - name: fixture',
      '    transport: stdio',
      `    command: ${JSON.stringify(process.execPath)}`,
      `    args: ${JSON.stringify(args)}`,
      '    trusted: true',
      ...(options.serverYaml ?? []).map((line) => `    ${line}`),
      '',
    ].join('\n'),
  );
  if (options.actorYaml !== undefined) {
    await writeFile(
      join(workspace, 'actors', 'coder.yaml'),
      ['description: Serves the fixture tools', 'skills: [fixture]', ...options.actorYaml, ''].join(
        '\n',
      ),
    );
  }
  return workspace;
}
