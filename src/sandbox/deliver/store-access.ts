import { AgentsError, AgentsErrorCode } from '../../errors.js';
import type { GitStoreAccess, RunSandbox } from '../backend.js';
import { runGitBytes } from '../git.js';
import type { RawTreeChange } from '../raw-tree-diff.js';

export { literalPathspec } from '../git/git-store.js';

/**
 * What delivering a sandbox's work needs from it: its snapshot store, its tree, the user's
 * folder it was made from, and the base and latest snapshots. Any {@link RunSandbox} has it.
 */
export type DeliverySandbox = Pick<
  RunSandbox,
  'id' | 'store' | 'root' | 'source' | 'base' | 'head' | 'kind' | 'sourceCommit'
>;

/** True when `sandbox` carries a snapshot store delivery can read. */
export function isDeliverySandbox(sandbox: object): sandbox is DeliverySandbox {
  const record = sandbox as Partial<Record<keyof DeliverySandbox, unknown>>;
  return (
    typeof record.store === 'object' &&
    record.store !== null &&
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

/**
 * The git access of the sandbox's store, for the delivery steps that need git itself (a commit
 * on the user's branch, a text patch); `SANDBOX_FAILED` naming the backend when it has none.
 */
export function storeGitAccess(sandbox: DeliverySandbox, what: string): GitStoreAccess {
  const git = sandbox.store.git;
  if (git === undefined) {
    throw new AgentsError(
      AgentsErrorCode.SandboxFailed,
      `Cannot ${what} for sandbox "${sandbox.id}": its ${sandbox.store.backend} backend keeps no git store; apply the changes to your files instead (agents sandbox apply).`,
      { details: { sandboxId: sandbox.id, backend: sandbox.store.backend } },
    );
  }
  return git;
}

/** Runs git (text output) on the sandbox's snapshot store (a git store only). */
export function storeRun(
  sandbox: DeliverySandbox,
  args: readonly string[],
  options: DeliveryGitOptions & { okExitCodes?: number[]; input?: string } = {},
) {
  return storeGitAccess(sandbox, `run git ${args[0] ?? ''}`.trim()).run(args, options);
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

/** The exact bytes of a file content id in the sandbox's store. */
export function readBlob(
  sandbox: DeliverySandbox,
  id: string,
  options: DeliveryGitOptions = {},
): Promise<Buffer> {
  return sandbox.store.readBlob(id, options);
}

/**
 * The full id of a snapshot of the sandbox's store, or `CHECKPOINT_NOT_FOUND` naming the
 * sandbox when there is none (or `rev` is not hex).
 */
export async function resolveSnapshot(
  sandbox: DeliverySandbox,
  rev: string,
  options: DeliveryGitOptions = {},
): Promise<string> {
  const sha = /^[0-9a-f]{4,64}$/.test(rev) ? await sandbox.store.resolve(rev, options) : undefined;
  if (sha === undefined) {
    throw new AgentsError(
      AgentsErrorCode.CheckpointNotFound,
      `"${rev}" is not a snapshot of sandbox "${sandbox.id}"; list the thread's checkpoints (agents checkpoints --thread ID) to pick one.`,
      { details: { sandboxId: sandbox.id, rev } },
    );
  }
  return sha;
}

/**
 * The files that differ between snapshots `from` and `to` (under `paths`, literally), with both
 * content ids: no rename detection, so a move is a delete and an add.
 */
export function rawSnapshotDiff(
  sandbox: DeliverySandbox,
  from: string,
  to: string,
  paths: readonly string[] | undefined,
  options: DeliveryGitOptions,
): Promise<RawTreeChange[]> {
  return sandbox.store.diff(from, to, { ...options, paths });
}
