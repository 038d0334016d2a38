import { AgentsError, AgentsErrorCode } from '../../errors.js';
import { runGitBytes } from '../git.js';
import type { LocalSandbox } from '../local-sandbox.js';
import { parseRawTreeDiff, type RawTreeChange } from '../raw-tree-diff.js';
import { storeEnv, storeGit } from '../snapshot-store.js';

/**
 * What delivering a sandbox's work needs from it: its snapshot store (run dir + tree), the
 * user's folder it was made from, and the base and latest snapshots. A `LocalSandbox` (made or
 * reopened) has all of it.
 */
export type DeliverySandbox = Pick<
  LocalSandbox,
  'id' | 'runDir' | 'root' | 'source' | 'base' | 'head' | 'kind' | 'sourceCommit'
>;

/** True when `sandbox` carries a snapshot store this module can read (a `LocalSandbox`). */
export function isDeliverySandbox(sandbox: object): sandbox is DeliverySandbox {
  const record = sandbox as Partial<Record<keyof DeliverySandbox, unknown>>;
  return (
    typeof record.runDir === 'string' &&
    typeof record.root === 'string' &&
    typeof record.source === 'string' &&
    typeof record.base === 'string'
  );
}

/** Options shared by the delivery functions. */
export interface DeliveryGitOptions {
  signal?: AbortSignal | undefined;
  timeoutMs?: number | undefined;
}

/** Runs git (text output) on the sandbox's snapshot store. */
export function storeRun(
  sandbox: DeliverySandbox,
  args: readonly string[],
  options: DeliveryGitOptions & { okExitCodes?: number[]; input?: string } = {},
) {
  return storeGit(sandbox.runDir, sandbox.root, args, options);
}

/**
 * Runs git and returns stdout as bytes (file contents must round-trip exactly; the text runner
 * decodes as UTF-8). Exit codes in `okExitCodes` are returned, others throw `SANDBOX_FAILED`.
 */
export function gitBytes(
  args: readonly string[],
  options: {
    cwd: string;
    env: Record<string, string>;
    signal?: AbortSignal | undefined;
    timeoutMs?: number | undefined;
    okExitCodes?: readonly number[];
  },
): Promise<{ stdout: Buffer; exitCode: number }> {
  return runGitBytes(args, {
    cwd: options.cwd,
    env: options.env,
    ...(options.signal === undefined ? {} : { signal: options.signal }),
    ...(options.timeoutMs === undefined ? {} : { timeoutMs: options.timeoutMs }),
    ...(options.okExitCodes === undefined ? {} : { okExitCodes: options.okExitCodes }),
  });
}

/** The exact bytes of a blob in the sandbox's store. */
export async function readBlob(
  sandbox: DeliverySandbox,
  sha: string,
  options: DeliveryGitOptions = {},
): Promise<Buffer> {
  return (
    await gitBytes(['cat-file', 'blob', sha], {
      cwd: sandbox.root,
      env: storeEnv(sandbox.runDir, sandbox.root),
      signal: options.signal,
      timeoutMs: options.timeoutMs,
    })
  ).stdout;
}

/**
 * The full sha of a snapshot commit of the sandbox's store, or `CHECKPOINT_NOT_FOUND` naming
 * the sandbox when there is none (or `rev` is not hex).
 */
export async function resolveSnapshot(
  sandbox: DeliverySandbox,
  rev: string,
  options: DeliveryGitOptions = {},
): Promise<string> {
  const missing = () =>
    new AgentsError(
      AgentsErrorCode.CheckpointNotFound,
      `"${rev}" is not a snapshot of sandbox "${sandbox.id}"; list the thread's checkpoints (agents checkpoints --thread ID) to pick one.`,
      { details: { sandboxId: sandbox.id, rev } },
    );
  if (!/^[0-9a-f]{4,64}$/.test(rev)) throw missing();
  const result = await storeRun(sandbox, ['rev-parse', '--verify', '--quiet', `${rev}^{commit}`], {
    ...options,
    okExitCodes: [1, 128],
  });
  const sha = result.stdout.trim();
  if (result.exitCode !== 0 || sha === '') throw missing();
  return sha;
}

/** Pathspec arguments for git: everything after `--`, read literally (no globs, no magic). */
export function literalPathspec(paths: readonly string[] | undefined): string[] {
  if (paths === undefined || paths.length === 0) return [];
  return ['--', ...paths.map((path) => `:(literal)${path.replace(/^\.\/+/, '')}`)];
}

/**
 * The files that differ between snapshots `from` and `to` (under `paths`, literally), as
 * `diff-tree --raw` gives them with both blob ids: no rename detection, so a move is a delete
 * and an add.
 */
export async function rawSnapshotDiff(
  sandbox: DeliverySandbox,
  from: string,
  to: string,
  paths: readonly string[] | undefined,
  options: DeliveryGitOptions,
): Promise<RawTreeChange[]> {
  const output = await storeRun(
    sandbox,
    ['diff-tree', '-r', '-z', '--raw', '--no-renames', from, to, ...literalPathspec(paths)],
    options,
  );
  return parseRawTreeDiff(output.stdout);
}
