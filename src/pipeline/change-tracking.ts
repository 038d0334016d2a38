import { AsyncLocalStorage } from 'node:async_hooks';
import { killPoint } from '../core/kill-point.js';
import { AgentsError, AgentsErrorCode, errorMessage } from '../errors.js';
import { ResultMetaKey } from '../core/tool-descriptor.js';
import type { ChangeRecord } from '../core/change-record.js';
import type { ToolDescriptor, ToolResult } from '../core/tool-descriptor.js';
import { formatSkippedPaths, newSkippedPaths } from '../sandbox/skipped-paths.js';
import type { Sandbox } from '../sandbox/types.js';
import { ChangeRecordSchema } from '../core/change-record.js';
import type { ToolMiddleware } from '../core/tool-middleware.js';

/**
 * True when a tool may change files and so must be serialized and snapshotted. Only tools whose
 * verdicts say read-only and not writing skip tracking; anything unknown is treated as a write,
 * because a missed snapshot loses work while an extra one costs ~20 ms.
 */
export function isWriteClassTool(descriptor: Pick<ToolDescriptor, 'capabilities'>): boolean {
  const { readOnly, writes } = descriptor.capabilities;
  return !(readOnly.value && !writes.value);
}

/** Identifies one tracked call. */
export interface TrackedCall {
  /** Stable tool id, e.g. `mcp:fs/write_file`. */
  toolId: string;
  toolCallId?: string;
}

/**
 * What {@link ChangeTracker.track} returns. `record` is absent when an enclosing tracker on the
 * same sandbox already holds the lock for this call (it takes the snapshot instead).
 */
export type TrackedOutcome<T> =
  | { ok: true; value: T; record?: ChangeRecord }
  | { ok: false; error: unknown; record?: ChangeRecord };

/**
 * The framework-neutral core of change tracking, shared by the `ToolMiddleware`, the tracked
 * `ToolNode` and the `createAgent` middleware. All trackers of one sandbox share one lock and
 * one record stash, so mixing the adapters never double-snapshots or deadlocks.
 */
export interface ChangeTracker {
  readonly sandbox: Sandbox;
  /**
   * Runs `run` under the sandbox's write lock, then snapshots, also when `run` threw (a failed
   * tool may have written half a file). Never throws the tool's error: it comes back as
   * `{ ok: false, error, record }`, and the record is also stashed for
   * {@link ChangeTracker.takeFailedRecord}. Throws `SANDBOX_FAILED` if the snapshot fails.
   */
  track<T>(call: TrackedCall, run: () => Promise<T>): Promise<TrackedOutcome<T>>;
  /**
   * Returns (once) the record of a call that threw, by tool call id. Adapters that only see the
   * error text (LangGraph's ToolNode turns thrown errors into messages) recover records this way.
   */
  takeFailedRecord(toolCallId: string): ChangeRecord | undefined;
  /** Resolves when no write call on this sandbox is queued or running. */
  idle(): Promise<void>;
  /**
   * The snapshots `sha` descends from, newest first: the parents of the snapshots trackers of
   * this sandbox took in this process, ending with the first one they did not take (the head
   * the sandbox was opened or restored at), or with `stopAt` (the head the step started from)
   * when the walk reaches it. What a head claim carries (see `core/head-claim.ts`).
   */
  ancestors(sha: string, stopAt?: string): string[];
}

/** How many records of failed calls are kept for pick-up before the oldest is dropped. */
const MAX_STASHED_RECORDS = 256;
/** How many snapshot parents are kept for head claims (far more than one step's calls). */
const MAX_REMEMBERED_PARENTS = 4_096;

/** Per-sandbox shared state: the write lock, the idle waiters and the failed-record stash. */
class SandboxLock {
  private tail: Promise<void> = Promise.resolve();
  private pending = 0;
  private idleWaiters: Array<() => void> = [];
  readonly stash = new Map<string, ChangeRecord>();
  /** Parent of each snapshot taken here (bounded: only a step's recent chain is ever walked). */
  readonly parents = new Map<string, string>();

  rememberParent(sha: string, parent: string): void {
    if (sha === parent) return;
    this.parents.set(sha, parent);
    if (this.parents.size > MAX_REMEMBERED_PARENTS) {
      const oldest = this.parents.keys().next().value;
      if (oldest !== undefined) this.parents.delete(oldest);
    }
  }

  async acquire(): Promise<() => void> {
    this.pending++;
    const previous = this.tail;
    let release!: () => void;
    this.tail = new Promise<void>((resolve) => {
      release = resolve;
    });
    await previous;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      release();
      this.pending--;
      if (this.pending === 0) {
        const waiters = this.idleWaiters;
        this.idleWaiters = [];
        for (const waiter of waiters) waiter();
      }
    };
  }

  idle(): Promise<void> {
    if (this.pending === 0) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  remember(toolCallId: string, record: ChangeRecord): void {
    this.stash.set(toolCallId, record);
    if (this.stash.size > MAX_STASHED_RECORDS) {
      const oldest = this.stash.keys().next().value;
      if (oldest !== undefined) this.stash.delete(oldest);
    }
  }
}

const locks = new WeakMap<Sandbox, SandboxLock>();
/** Which sandbox locks the current async call chain holds (for re-entrant, nested trackers). */
const heldLocks = new AsyncLocalStorage<ReadonlySet<SandboxLock>>();

function lockFor(sandbox: Sandbox): SandboxLock {
  let lock = locks.get(sandbox);
  if (lock === undefined) {
    lock = new SandboxLock();
    locks.set(sandbox, lock);
  }
  return lock;
}

const ERROR_RECORD = Symbol.for('agents.change-record');

/** Attaches a change record to a thrown value (when it is an object) so callers can find it. */
function attachToError(error: unknown, record: ChangeRecord): void {
  if (typeof error === 'object' && error !== null && Object.isExtensible(error)) {
    Object.defineProperty(error, ERROR_RECORD, { value: record, configurable: true });
  }
}

/** The change record of a tool call that threw, if change tracking attached one. */
export function changeRecordOfError(error: unknown): ChangeRecord | undefined {
  if (typeof error !== 'object' || error === null) return undefined;
  const value: unknown = (error as Record<symbol, unknown>)[ERROR_RECORD];
  return readChangeRecord(value);
}

/** Narrows an unknown value to a `ChangeRecord`, or `undefined` when it is not one. */
export function readChangeRecord(value: unknown): ChangeRecord | undefined {
  const parsed = ChangeRecordSchema.safeParse(value);
  if (!parsed.success) return undefined;
  const { toolCallId, ...rest } = parsed.data;
  return toolCallId === undefined ? rest : { toolCallId, ...rest };
}

/**
 * Finds the change record in a tool result's `_meta` or in a ToolMessage artifact that carries
 * the result's `_meta` (`artifact._meta['agents/change']`), or in an artifact that is the record.
 */
export function findChangeRecord(value: unknown): ChangeRecord | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const meta: unknown = (value as Record<string, unknown>)['_meta'];
  if (typeof meta === 'object' && meta !== null) {
    const record = readChangeRecord((meta as Record<string, unknown>)[ResultMetaKey.Change]);
    if (record !== undefined) return record;
  }
  return readChangeRecord((value as Record<string, unknown>)[ResultMetaKey.Change]);
}

/** Returns a copy of `result` with `record` under `_meta['agents/change']`. */
export function withChangeRecord(result: ToolResult, record: ChangeRecord): ToolResult {
  return { ...result, _meta: { ...result._meta, [ResultMetaKey.Change]: record } };
}

/**
 * Returns the change tracker of a sandbox. Trackers of the same sandbox share their lock and
 * stash; the tracker holds no resources of its own (the caller closes the sandbox).
 */
export function createChangeTracker(sandbox: Sandbox): ChangeTracker {
  const lock = lockFor(sandbox);
  return {
    sandbox,
    async track<T>(call: TrackedCall, run: () => Promise<T>): Promise<TrackedOutcome<T>> {
      const held = heldLocks.getStore();
      if (held?.has(lock)) {
        // An outer adapter (e.g. createAgent middleware around an adapter tool that is itself
        // tracked) already serializes and snapshots this call.
        try {
          return { ok: true, value: await run() };
        } catch (error) {
          return { ok: false, error };
        }
      }
      const release = await lock.acquire();
      try {
        // In memory, no git: what the snapshots already leave out, to name only what is new.
        const skippedBefore = sandbox.skippedPaths?.();
        let outcome: { ok: true; value: T } | { ok: false; error: unknown };
        try {
          const inner = new Set(held ?? []);
          inner.add(lock);
          outcome = { ok: true, value: await heldLocks.run(inner, run) };
        } catch (error) {
          outcome = { ok: false, error };
        }
        const label = `${call.toolId}${call.toolCallId === undefined ? '' : ` ${call.toolCallId}`}`;
        let record: ChangeRecord;
        try {
          // No call signal here on purpose: an aborted call may still have written files.
          killPoint('after-answer');
          const snapshot = await sandbox.snapshot(label);
          killPoint('after-snapshot');
          lock.rememberParent(snapshot.sha, snapshot.parent);
          const skipped =
            skippedBefore === undefined
              ? []
              : newSkippedPaths(skippedBefore, sandbox.skippedPaths?.() ?? []);
          record = {
            ...(call.toolCallId === undefined ? {} : { toolCallId: call.toolCallId }),
            toolId: call.toolId,
            snapshot: snapshot.sha,
            parent: snapshot.parent,
            changed: snapshot.changed,
            ...(skipped.length === 0 ? {} : { skipped }),
            ...(snapshot.scan === undefined ? {} : { scan: snapshot.scan }),
            ...(snapshot.scanReason === undefined ? {} : { scanReason: snapshot.scanReason }),
          };
        } catch (snapshotError) {
          throw new AgentsError(
            AgentsErrorCode.SandboxFailed,
            `Snapshot of sandbox "${sandbox.id}" after tool "${call.toolId}" failed: ${errorMessage(snapshotError)}. ` +
              'The tool call ran but its changes are not recorded; check the sandbox folder and git.',
            {
              cause: snapshotError,
              details: {
                sandboxId: sandbox.id,
                toolId: call.toolId,
                ...(call.toolCallId === undefined ? {} : { toolCallId: call.toolCallId }),
                ...(outcome.ok ? {} : { toolError: errorMessage(outcome.error) }),
              },
            },
          );
        }
        if (outcome.ok) return { ...outcome, record };
        attachToError(outcome.error, record);
        if (call.toolCallId !== undefined) lock.remember(call.toolCallId, record);
        return { ...outcome, record };
      } finally {
        release();
      }
    },
    takeFailedRecord(toolCallId: string): ChangeRecord | undefined {
      const record = lock.stash.get(toolCallId);
      lock.stash.delete(toolCallId);
      return record;
    },
    idle: () => lock.idle(),
    ancestors(sha: string, stopAt?: string): string[] {
      const chain: string[] = [];
      const visited = new Set<string>([sha]);
      let parent = sha === stopAt ? undefined : lock.parents.get(sha);
      while (parent !== undefined && !visited.has(parent)) {
        chain.push(parent);
        if (parent === stopAt) break;
        visited.add(parent);
        parent = lock.parents.get(parent);
      }
      return chain;
    },
  };
}

/** Options of {@link createChangeTrackingMiddleware}. */
export interface ChangeTrackingOptions {
  /** Decides which calls are tracked. Default {@link isWriteClassTool}. */
  isWriteClass?: (descriptor: ToolDescriptor) => boolean;
}

/**
 * A `ToolMiddleware` that records what each write-class tool call changed in the sandbox.
 *
 * - Read-only tools pass straight through: no lock, no git.
 * - Write-class calls are serialized per sandbox (parallel calls get correct attribution), run,
 *   then snapshotted; the `ChangeRecord` goes into `result._meta['agents/change']`.
 * - A call that throws is snapshotted too, and its error is rethrown unchanged; the record is
 *   attached to the error ({@link changeRecordOfError}) and kept for
 *   {@link ChangeTracker.takeFailedRecord}. A failure result (`isError: true`) carries its record
 *   like any other result.
 * - Throws `SANDBOX_FAILED` when the snapshot itself fails.
 */
export function createChangeTrackingMiddleware(
  sandbox: Sandbox,
  options: ChangeTrackingOptions = {},
): ToolMiddleware {
  const tracker = createChangeTracker(sandbox);
  const isWriteClass = options.isWriteClass ?? isWriteClassTool;
  return {
    name: 'change-tracking',
    async wrap(request, next) {
      if (!isWriteClass(request.descriptor)) return next(request);
      const toolCallId = request.context.toolCallId;
      const outcome = await tracker.track(
        { toolId: request.descriptor.id, ...(toolCallId === undefined ? {} : { toolCallId }) },
        () => next(request),
      );
      if (!outcome.ok) throw outcome.error;
      if (outcome.record === undefined) return outcome.value;
      const result = withChangeRecord(outcome.value, outcome.record);
      const skipped = outcome.record.skipped;
      if (skipped === undefined) return result;
      // The model must know too: it may count on a rollback that cannot bring these back.
      return {
        ...result,
        content: [
          ...(Array.isArray(result.content) ? result.content : []),
          {
            type: 'text',
            text: `Note: not captured by the sandbox snapshots, so a rollback will neither restore nor remove them: ${formatSkippedPaths(skipped)}.`,
          },
        ],
      };
    },
  };
}
