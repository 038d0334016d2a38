/**
 * The file side of `agents thread replay`: each recorded call's change set is written into the
 * replay's sandbox just before the recorded answer reaches the client (where the server wrote
 * it), so the pipeline's change tracking snapshots it for real; after each call, the policy's
 * outcome and the sandbox's tree id are compared with the recording. A cassette may come from a
 * bug report: its paths are checked to stay inside the sandbox, through no symlink.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { chmod, lstat, mkdir, rm, symlink, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { ResultMetaKey, type ToolResult } from '../core/tool-descriptor.js';
import type { ToolMiddleware } from '../core/tool-middleware.js';
import { AgentsError, AgentsErrorCode } from '../errors.js';
import { changeRecordOfError, findChangeRecord } from '../pipeline/change-tracking.js';
import type { RunSandbox, SnapshotStore } from '../sandbox/backend.js';
import type {
  CallEntry,
  Cassette,
  ListedFile,
  McpExchangeEntry,
  RecordedChange,
  RecordedFile,
} from './cassette.js';
import { ReplayDivergenceError } from './divergence.js';
import { fileBytes, treeIdOf } from './file-content.js';

/** Refuses a recorded path that is absolute, climbs out, or goes through a symlink. */
async function safeTarget(root: string, path: string): Promise<string> {
  const parts = path.split('/');
  if (path === '' || path.startsWith('/') || parts.some((part) => part === '..' || part === '')) {
    throw new AgentsError(
      AgentsErrorCode.CassetteInvalid,
      `Cassette path "${path}" is not a plain relative path inside the sandbox; the cassette was edited or damaged. Record the run again.`,
      { details: { path } },
    );
  }
  let at = root;
  for (const part of parts.slice(0, -1)) {
    at = join(at, part);
    const stat = await lstat(at).catch(() => undefined);
    if (stat?.isSymbolicLink()) {
      throw new AgentsError(
        AgentsErrorCode.CassetteInvalid,
        `Cassette path "${path}" goes through the symlink ${at.slice(root.length + 1)}; a replay writes only inside the sandbox. Record the run again.`,
        { details: { path } },
      );
    }
  }
  return join(root, path);
}

/** Writes recorded files (or deletions) under `root`, as a server would have. */
export async function applyRecordedChanges(
  root: string,
  changes: readonly RecordedChange[],
): Promise<void> {
  for (const change of changes) {
    const target = await safeTarget(root, change.path);
    if ('deleted' in change) {
      await rm(target, { force: true, recursive: true });
      continue;
    }
    await mkdir(dirname(target), { recursive: true });
    await rm(target, { force: true, recursive: true });
    if (change.mode === '120000') {
      await symlink(fileBytes(change).toString('utf8'), target);
      continue;
    }
    await writeFile(target, fileBytes(change));
    await chmod(target, change.mode === '100755' ? 0o755 : 0o644);
  }
}

/**
 * `value` with the sandbox's logical `.` (what a recording writes for its sandbox path) put back
 * as `root` where it starts a path: `./a.txt`, `"."`, `at ./x`. The inverse of the recording's
 * mapping; a literal `./x` the server itself wrote is expanded too (then the replay diverges at
 * the next model turn, naming it).
 */
export function expandSandboxAlias(value: unknown, root: string): unknown {
  if (typeof value === 'string') {
    return value.replace(
      /(^|[\s"'`(=:,[{])\.(?=\/|$|[\s"'`:;,)\]}])/g,
      (_hit, head: string) => head + root,
    );
  }
  if (Array.isArray(value)) return value.map((item) => expandSandboxAlias(item, root));
  if (typeof value === 'object' && value !== null) {
    return Object.fromEntries(
      Object.entries(value).map(([key, item]) => [key, expandSandboxAlias(item, root)]),
    );
  }
  return value;
}

/** What a replayed call did, for the report. */
export interface ReplayedCall {
  toolCallId?: string;
  toolId: string;
  outcome?: string;
  isError: boolean;
}

/** The file side of one replay. */
export interface ReplayFiles {
  /** Outer tool middleware: knows the call in flight, compares outcome and tree after it. */
  readonly middleware: ToolMiddleware;
  /** The replay transports' `beforeAnswer`: writes the call's recorded change set. */
  beforeAnswer(exchange: McpExchangeEntry): Promise<void>;
  /** The recorded call the pipeline is running in this async context (`call 2 (tool, id)`). */
  callInFlight(): string | undefined;
  /** The first divergence found here. */
  readonly divergence: ReplayDivergenceError | undefined;
  /**
   * Calls whose tree was compared, and those left unchecked (a redacted file without its content
   * id, from an older recorder, came before).
   */
  readonly treesChecked: number;
  readonly treesUnchecked: number;
  /** True once a redacted file without a content id was written: trees cannot match from then. */
  readonly redactedSeen: boolean;
  /** Paths written as redacted placeholders so far (their recorded content ids stand in). */
  placeholders(): string[];
  /**
   * The tree id of snapshot `sha`, with each placeholder still as written counted as the real
   * file it stands for (its recorded content id): the recorded trees hold the real bytes.
   */
  treeOf(store: SnapshotStore, sha: string): Promise<string>;
  calls(): ReplayedCall[];
  /** The recorded answer to an approval of `toolCallId`, as a resume value; undefined: none. */
  approvalFor(toolCallId: string | undefined): unknown;
  /**
   * Notes the base files written into the project (its placeholders), and the base files known
   * by content id only (`listing`: not written; they count in every tree until a call changes
   * them).
   */
  baseWritten(files: readonly RecordedFile[], listing?: readonly ListedFile[]): void;
}

function isInterrupt(error: unknown): boolean {
  const name = (error as { name?: unknown } | null)?.name;
  return name === 'GraphInterrupt' || name === 'NodeInterrupt';
}

function stepOf(entry: Pick<CallEntry, 'call' | 'toolId' | 'toolCallId'>): string {
  return `call ${entry.call} (${entry.toolId}${entry.toolCallId ? `, ${entry.toolCallId}` : ''})`;
}

/** Creates the file side of a replay of `cassette` into the sandbox `sandbox()` returns. */
export function createReplayFiles(
  cassette: Cassette,
  sandbox: () => RunSandbox | undefined,
  options: {
    /** `--tools live`: live servers changed the files, no recorded change set was written. */
    liveTools?: boolean;
  } = {},
): ReplayFiles {
  // A tool call id may come back in a later turn (a scripted model's, a chat's): each id keeps
  // its recorded calls in order, and a call that finished moves its id on to the next one.
  const byId = new Map<string, CallEntry[]>();
  for (const entry of cassette.entries) {
    if (entry.kind !== 'call' || entry.toolCallId === undefined) continue;
    byId.set(entry.toolCallId, [...(byId.get(entry.toolCallId) ?? []), entry]);
  }
  const finished = new Map<string, number>();
  const current = (id: string | undefined): CallEntry | undefined =>
    id === undefined ? undefined : byId.get(id)?.[finished.get(id) ?? 0];
  const inFlight = new AsyncLocalStorage<string>();
  const applied = new Set<CallEntry>();
  // Redacted files as written, by path: the bytes written and the real bytes' content id.
  const placeholders = new Map<string, { bytes: Buffer; id: string }>();
  // Base files the cassette lists by content id only, not written, until a call changes them.
  const listed = new Map<string, ListedFile>();
  const notePlaceholders = (changes: readonly RecordedChange[]): void => {
    for (const change of changes) {
      listed.delete(change.path);
      if (!('mode' in change) || change.redacted !== true) placeholders.delete(change.path);
      else if (change.id === undefined) redactedSeen = true;
      else placeholders.set(change.path, { bytes: fileBytes(change), id: change.id });
    }
  };
  const treeOf = async (store: SnapshotStore, sha: string): Promise<string> => {
    const entries = await store.listTree(sha);
    const real = await Promise.all(
      entries.map(async (entry) => {
        const held = placeholders.get(entry.path);
        if (held === undefined) return entry;
        // Still the placeholder written (a call may have changed it since): the real file's id.
        const same = (await store.readBlob(entry.id)).equals(held.bytes);
        return same ? { ...entry, id: held.id } : entry;
      }),
    );
    const held = new Set(entries.map((entry) => entry.path));
    return treeIdOf([...real, ...[...listed.values()].filter((file) => !held.has(file.path))]);
  };
  const done: ReplayedCall[] = [];
  let divergence: ReplayDivergenceError | undefined;
  let checked = 0;
  let unchecked = 0;
  let redactedSeen = false;
  const diverge = (error: ReplayDivergenceError): ReplayDivergenceError => {
    divergence ??= error;
    return error;
  };

  const compare = async (
    entry: CallEntry,
    result: ToolResult | undefined,
    error: unknown,
  ): Promise<ReplayDivergenceError | undefined> => {
    const policy = result?._meta?.[ResultMetaKey.Policy] as { outcome?: string } | undefined;
    if (entry.policy !== undefined && policy?.outcome !== entry.policy.outcome) {
      return diverge(
        new ReplayDivergenceError(
          `Replay diverged at ${stepOf(entry)}: the policy's outcome was ${entry.policy.outcome} in the recording, ${policy?.outcome ?? 'none'} now.`,
          {
            kind: 'policy',
            step: stepOf(entry),
            toolCallId: entry.toolCallId,
            expected: entry.policy.outcome,
            actual: policy?.outcome,
          },
        ),
      );
    }
    const change = result !== undefined ? findChangeRecord(result) : changeRecordOfError(error);
    const opened = sandbox();
    if (entry.tree === undefined || change === undefined || opened === undefined) return undefined;
    if (redactedSeen) {
      unchecked++;
      return undefined;
    }
    const tree = await treeOf(opened.store, change.snapshot);
    if (tree === entry.tree) {
      checked++;
      return undefined;
    }
    const paths = (entry.changes ?? []).map((item) => item.path);
    return diverge(
      new ReplayDivergenceError(
        `Replay diverged at ${stepOf(entry)}: the sandbox's tree after it is ${tree}, the recording has ${entry.tree}` +
          (options.liveTools
            ? `; the live server changed the files otherwise than recorded (recorded change set: ${paths.join(', ') || 'none'}).`
            : paths.length > 0
              ? `; the call's recorded change set (${paths.join(', ')}) does not give the recorded tree (edited or damaged?).`
              : '.'),
        {
          kind: 'tree',
          step: stepOf(entry),
          toolCallId: entry.toolCallId,
          ...(paths.length > 0 ? { path: paths.join(', ') } : {}),
          expected: entry.tree,
          actual: tree,
        },
      ),
    );
  };

  return {
    get divergence() {
      return divergence;
    },
    get treesChecked() {
      return checked;
    },
    get treesUnchecked() {
      return unchecked;
    },
    get redactedSeen() {
      return redactedSeen;
    },
    baseWritten(files, listing) {
      notePlaceholders(files);
      for (const file of listing ?? []) listed.set(file.path, file);
    },
    placeholders: () => [...placeholders.keys()].sort(),
    treeOf,
    calls: () => [...done],
    callInFlight() {
      const entry = current(inFlight.getStore());
      return entry === undefined ? undefined : stepOf(entry);
    },
    async beforeAnswer() {
      const entry = current(inFlight.getStore());
      const opened = sandbox();
      // Once per call: a retried request (a restart) must not write the change set twice.
      if (entry?.changes === undefined || opened === undefined || applied.has(entry)) return;
      applied.add(entry);
      notePlaceholders(entry.changes);
      await applyRecordedChanges(opened.root, entry.changes);
    },
    middleware: {
      name: 'replay-files',
      async wrap(request, next) {
        const id = request.context.toolCallId;
        return inFlight.run(id ?? '', async () => {
          let result: ToolResult | undefined;
          let error: unknown;
          try {
            result = await next(request);
          } catch (thrown) {
            if (isInterrupt(thrown)) throw thrown;
            error = thrown;
          }
          const entry = current(id);
          if (entry !== undefined) finished.set(id!, (finished.get(id!) ?? 0) + 1);
          const policy = result?._meta?.[ResultMetaKey.Policy] as { outcome?: string } | undefined;
          done.push({
            ...(id === undefined ? {} : { toolCallId: id }),
            toolId: request.descriptor.id,
            ...(policy?.outcome === undefined ? {} : { outcome: policy.outcome }),
            isError: error !== undefined || result?.isError === true,
          });
          const found =
            entry === undefined
              ? diverge(
                  new ReplayDivergenceError(
                    `Replay diverged: the run called ${request.descriptor.id}${id ? ` (${id})` : ''}, a call the recording does not have.`,
                    {
                      kind: 'unrecorded-request',
                      step: `call ${done.length}`,
                      tool: request.descriptor.id,
                      ...(id === undefined ? {} : { toolCallId: id }),
                    },
                  ),
                )
              : await compare(entry, result, error);
          if (found !== undefined) throw found;
          if (error !== undefined) throw error;
          return result!;
        });
      },
    },
    approvalFor(toolCallId) {
      const policy = current(toolCallId)?.policy;
      const by = policy?.decidedBy === undefined ? {} : { by: policy.decidedBy };
      switch (policy?.outcome) {
        case 'approved':
          return { type: 'approve', ...by };
        case 'edited':
          return { type: 'edit', args: policy.editedArgs, ...by };
        case 'rejected':
          return {
            type: 'reject',
            ...(policy.message === undefined ? {} : { message: policy.message }),
            ...by,
          };
        default:
          return undefined;
      }
    },
  };
}
