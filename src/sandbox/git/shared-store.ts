import { createHash } from 'node:crypto';
import { AgentsError, AgentsErrorCode, errorMessage } from '../../errors.js';
import { killPoint } from '../../core/kill-point.js';
import { redactUrl } from '../../redact.js';
import type { GitStoreAccess, ShareRequest, SnapshotReplica, SnapshotStore } from '../backend.js';
import { runGit, type RunGitResult } from '../git.js';
import { gitRemoteEnv } from '../git-env.js';

/**
 * Where threads live in a shared snapshot store:
 * `refs/agents/projects/<project>/threads/<actor>/<thread>/keep` for a project whose id is the
 * same on every machine (`.agents/project-id`, `git-<root commit>`), so projects sharing a store
 * keep threads of one name apart; `refs/agents/threads/<actor>/<thread>/keep` otherwise (and for
 * threads pushed before projects had a namespace). Private refs (not branches or tags), so a
 * store that is also someone's repository shows none.
 */
export const SHARED_REF_ROOT = 'refs/agents/threads';
const SHARED_PROJECTS_ROOT = 'refs/agents/projects';
/** The local copy of the thread's `keep` ref, in the sandbox's own store. */
const LOCAL_REF_ROOT = 'refs/shared';
const LOCAL_KEEP_REF = `${LOCAL_REF_ROOT}/keep`;
/** File in every keep commit's tree: what a fresh worker needs to rebuild the sandbox. */
const META_FILE = 'thread.json';
/** Parents per keep commit besides the previous keep (git takes any number; argv does not). */
const MAX_PARENTS_PER_KEEP = 100;
/** A name used as a ref component as is; anything else is hashed (ref names are picky). */
const SAFE_REF_SEGMENT = /^[A-Za-z0-9][A-Za-z0-9_-]{0,99}$/;

/** What the shared store records about a thread, for a worker that has never seen it. */
export interface SharedThreadMeta {
  /** The sandbox's base snapshot (the root of the thread's snapshot history). */
  base: string;
  /** The user's commit the sandbox was first made from (repository mode). */
  sourceCommit?: string;
}

/** A snapshot store the shared store can work with: a git store that fetches and pushes. */
type ShareableStore = SnapshotStore &
  Required<Pick<SnapshotStore, 'fetch' | 'push'>> & {
    git: GitStoreAccess;
  };

/** The part of a sandbox the replica works on. */
export interface ReplicatedSandbox {
  readonly store: SnapshotStore;
  readonly base: string;
  readonly sourceCommit: string | undefined;
  /** Calls `listener` with every new snapshot commit, right after it is made. */
  onSnapshotCommit(listener: ((sha: string) => void) | undefined): void;
}

function refSegment(name: string, what: string): string {
  if (SAFE_REF_SEGMENT.test(name)) return name;
  return `${what}-${createHash('sha256').update(name).digest('hex').slice(0, 24)}`;
}

/**
 * The ref namespace of one thread in a shared store (no trailing slash); under its project's
 * when `project` is given (see {@link SHARED_REF_ROOT}).
 */
export function sharedThreadNamespace(actor: string, threadId: string, project?: string): string {
  const thread = `${refSegment(actor, 'actor')}/${refSegment(threadId, 'thread')}`;
  return project === undefined
    ? `${SHARED_REF_ROOT}/${thread}`
    : `${SHARED_PROJECTS_ROOT}/${refSegment(project, 'project')}/threads/${thread}`;
}

/**
 * True when the shared store `remote` holds the thread (under its project's namespace, or the
 * one threads were pushed to before projects had one): one `git ls-remote`; an unreachable
 * store holds nothing.
 */
export async function remoteHoldsThread(
  request: ShareRequest & { cwd: string; signal?: AbortSignal },
): Promise<boolean> {
  const { remote, actor, threadId, project, cwd, signal } = request;
  const refs = [
    ...(project === undefined ? [] : [`${sharedThreadNamespace(actor, threadId, project)}/keep`]),
    `${sharedThreadNamespace(actor, threadId)}/keep`,
  ];
  const listed = await runGit(['ls-remote', '--end-of-options', remote, ...refs], {
    cwd,
    env: gitRemoteEnv(),
    ...(signal === undefined ? {} : { signal }),
  }).catch(() => undefined);
  return refs.some((ref) => listed?.stdout.includes(`\t${ref}`) === true);
}

/** A remote as shown in messages: credentials and secret query values hidden. */
export function displayRemote(remote: string): string {
  return /^[a-z][a-z0-9+.-]*:\/\//i.test(remote) ? redactUrl(remote, { query: 'secret' }) : remote;
}

/**
 * Keeps one thread's snapshots in a shared git store, with plain `git fetch` and `git push`.
 *
 * Every snapshot commit of the thread's sandbox is queued ({@link ThreadReplica.add}) and pushed
 * in batches: one "keep" commit per batch, whose parents are the previous keep commit and the
 * new snapshots, pushed (fast-forward only) to `<namespace>/keep`. One ref per thread keeps every
 * snapshot of it reachable, forks and safety snapshots included, and keeps the store's ref list
 * short. {@link ThreadReplica.flush} waits until everything queued is in the store: the
 * checkpoint that names a snapshot is written only after it (see `withSnapshotBarrier`), so a
 * crash at any point leaves no checkpoint naming a snapshot the store lacks.
 *
 * One worker writes a thread at a time (the Postgres lease); a push that is not a fast-forward
 * (another worker moved the thread meanwhile) fails with `SANDBOX_FAILED` and nothing is forced.
 */
export class ThreadReplica implements SnapshotReplica {
  readonly remote: string;
  readonly namespace: string;
  /** Where the thread was pushed before projects had a namespace (read when `namespace` is empty). */
  readonly #legacyNamespace: string | undefined;
  readonly #timeoutMs: number | undefined;
  #store: ShareableStore | undefined;
  #keep: string | undefined;
  #metaTree: string | undefined;
  #meta: SharedThreadMeta | undefined;
  #pending: string[] = [];
  #running: Promise<void> | undefined;
  #failure: unknown;

  constructor(options: {
    remote: string;
    actor: string;
    threadId: string;
    /** A project id the same on every machine; omitted: the namespace without a project. */
    project?: string;
    gitTimeoutMs?: number;
  }) {
    if (options.remote === '' || options.remote.startsWith('-')) {
      throw new AgentsError(
        AgentsErrorCode.ConfigInvalid,
        `snapshots.remote "${options.remote}" is not a git URL or path; give a bare repository path or a git URL.`,
        { details: { problems: [] } },
      );
    }
    this.remote = options.remote;
    this.namespace = sharedThreadNamespace(options.actor, options.threadId, options.project);
    this.#legacyNamespace =
      options.project === undefined
        ? undefined
        : sharedThreadNamespace(options.actor, options.threadId);
    this.#timeoutMs = options.gitTimeoutMs;
  }

  /** The keep commit the store holds for the thread, as last fetched or pushed. */
  get keep(): string | undefined {
    return this.#keep;
  }

  /**
   * Fetches the thread's snapshots from the shared store into the sandbox's `store` (objects
   * and `refs/shared/keep`). Returns what the store records about the thread and the newest
   * snapshot pushed (`head`), or `undefined` when the thread has never been pushed there.
   * Throws `SANDBOX_FAILED` when the store is unreachable, or when the sandbox's store is not a
   * git store (its backend cannot share snapshots).
   */
  async fetchInto(
    store: SnapshotStore,
    signal?: AbortSignal,
  ): Promise<(SharedThreadMeta & { head: string }) | undefined> {
    this.#store = this.#shareable(store);
    await this.#fetchNamespace(this.namespace, signal);
    this.#keep = await this.#localKeep(signal);
    if (this.#keep === undefined && this.#legacyNamespace !== undefined) {
      // Pushed before projects had a namespace: read from there; the next push writes the
      // thread under its project's namespace (the old ref stays, for workers not upgraded).
      await this.#fetchNamespace(this.#legacyNamespace, signal);
      this.#keep = await this.#localKeep(signal);
    }
    if (this.#keep === undefined) return undefined;
    const text = (await this.#git(['cat-file', 'blob', `${this.#keep}:${META_FILE}`], signal))
      .stdout;
    const meta = parseMeta(text);
    if (meta === undefined) {
      throw new AgentsError(
        AgentsErrorCode.SandboxFailed,
        `The shared snapshot store ${displayRemote(this.remote)} holds no readable ${META_FILE} for ${this.namespace}; it was not written by this library, or it is damaged.`,
        { details: { namespace: this.namespace } },
      );
    }
    this.#meta = meta;
    // The newest snapshot pushed is the last parent of the newest keep commit: usually the
    // snapshot the thread's latest checkpoint names, so a rebuilt sandbox starts there.
    const parents = (
      await this.#git(['rev-list', '--parents', '-n', '1', this.#keep], signal)
    ).stdout
      .trim()
      .split(' ');
    return { ...meta, head: parents.length > 1 ? parents.at(-1)! : meta.base };
  }

  async #fetchNamespace(namespace: string, signal: AbortSignal | undefined): Promise<void> {
    try {
      // A glob refspec: a thread the store has never seen is not an error, just nothing.
      await this.#store!.fetch(this.remote, [`+${namespace}/*:${LOCAL_REF_ROOT}/*`], {
        ...(signal === undefined ? {} : { signal }),
        ...(this.#timeoutMs === undefined ? {} : { timeoutMs: this.#timeoutMs }),
      });
    } catch (error) {
      throw this.#storeError('fetch the snapshots of', error);
    }
  }

  async #localKeep(signal: AbortSignal | undefined): Promise<string | undefined> {
    const resolved = await this.#git(
      ['rev-parse', '--verify', '--quiet', `${LOCAL_KEEP_REF}^{commit}`],
      signal,
      [1],
    );
    return resolved.exitCode === 0 ? resolved.stdout.trim() : undefined;
  }

  /**
   * Starts replicating a sandbox (made by `fetchInto`'s seed, or an existing one): fetches the
   * store's state of the thread when not done yet, queues every local snapshot the store lacks
   * (a new thread's base, snapshots of a run that died before pushing) and every new snapshot
   * from now on. Call {@link flush} before writing a checkpoint.
   */
  async attach(sandbox: ReplicatedSandbox, signal?: AbortSignal): Promise<void> {
    if (this.#store?.location !== sandbox.store.location)
      await this.fetchInto(sandbox.store, signal);
    this.#meta ??= {
      base: sandbox.base,
      ...(sandbox.sourceCommit === undefined ? {} : { sourceCommit: sandbox.sourceCommit }),
    };
    const unmerged = (
      await this.#git(
        [
          'for-each-ref',
          '--format=%(objectname)',
          ...(this.#keep === undefined ? [] : [`--no-merged=${this.#keep}`]),
          'refs/snapshots/',
        ],
        signal,
      )
    ).stdout
      .split('\n')
      .filter((line) => line !== '');
    sandbox.onSnapshotCommit((sha) => this.add(sha));
    for (const sha of unmerged) this.add(sha);
  }

  /** Queues a snapshot commit for the next push (started at once when none is running). */
  add(sha: string): void {
    if (!this.#pending.includes(sha)) this.#pending.push(sha);
    this.#running ??= this.#drain();
  }

  /**
   * Resolves when every snapshot queued so far is in the shared store. Throws `SANDBOX_FAILED`
   * when a push failed (the snapshots stay queued and the next flush tries again).
   */
  async flush(): Promise<void> {
    if (this.#running === undefined && this.#pending.length > 0) {
      this.#running = this.#drain();
    }
    while (this.#running !== undefined) await this.#running;
    if (this.#pending.length > 0) {
      const failure = this.#failure;
      throw AgentsError.isInstance(failure)
        ? failure
        : this.#storeError('push the snapshots of', failure);
    }
  }

  async #drain(): Promise<void> {
    try {
      while (this.#pending.length > 0) {
        const batch = this.#pending.slice(0, MAX_PARENTS_PER_KEEP);
        try {
          await this.#push(batch);
        } catch (error) {
          this.#failure = error;
          return;
        }
        this.#pending = this.#pending.filter((sha) => !batch.includes(sha));
        this.#failure = undefined;
      }
    } finally {
      this.#running = undefined;
    }
  }

  async #push(batch: readonly string[]): Promise<void> {
    const tree = await this.#metaTreeSha();
    const parents = [...(this.#keep === undefined ? [] : [this.#keep]), ...batch];
    const keep = (
      await this.#git([
        'commit-tree',
        tree,
        ...parents.flatMap((sha) => ['-p', sha]),
        '-m',
        `agents: ${batch.length} snapshot(s) of ${this.namespace}`,
      ])
    ).stdout.trim();
    killPoint('during-push');
    try {
      // No `+`: a fast-forward only. If another worker moved the thread, this fails loudly.
      await this.#store!.push(this.remote, [`${keep}:${this.namespace}/keep`], {
        ...(this.#timeoutMs === undefined ? {} : { timeoutMs: this.#timeoutMs }),
      });
    } catch (error) {
      const detail = AgentsError.isInstance(error) ? error.details['stderr'] : undefined;
      const stderr = typeof detail === 'string' ? detail : '';
      if (/non-fast-forward|fetch first|rejected/.test(stderr)) {
        throw new AgentsError(
          AgentsErrorCode.SandboxFailed,
          `The snapshots of ${this.namespace} in ${displayRemote(this.remote)} were moved by another worker while this one held the thread; nothing was overwritten. Use a Postgres checkpointer (its lease keeps one worker per thread), then reopen the thread.`,
          { cause: error, details: { namespace: this.namespace } },
        );
      }
      throw this.#storeError('push the snapshots of', error);
    }
    // Kept in memory only (one git process less per push): the next open fetches the ref.
    this.#keep = keep;
  }

  /** The tree every keep commit carries: `thread.json` with the thread's meta. */
  async #metaTreeSha(): Promise<string> {
    if (this.#metaTree !== undefined) return this.#metaTree;
    const meta = this.#meta;
    if (meta === undefined) throw new Error('ThreadReplica: attach() before pushing');
    const blob = (
      await this.#git(['hash-object', '-w', '--stdin'], undefined, undefined, JSON.stringify(meta))
    ).stdout.trim();
    this.#metaTree = (
      await this.#git(['mktree'], undefined, undefined, `100644 blob ${blob}\t${META_FILE}\n`)
    ).stdout.trim();
    return this.#metaTree;
  }

  /** The store as a git store with push and fetch, or `SANDBOX_FAILED` naming the backend. */
  #shareable(store: SnapshotStore): ShareableStore {
    if (store.git === undefined || store.fetch === undefined || store.push === undefined) {
      throw new AgentsError(
        AgentsErrorCode.SandboxFailed,
        `The ${store.backend} sandbox backend cannot keep snapshots in a shared store (snapshots.remote ${displayRemote(this.remote)}); use the git sandbox backend, or drop snapshots.remote.`,
        { details: { namespace: this.namespace, backend: store.backend } },
      );
    }
    return store as ShareableStore;
  }

  #git(
    args: readonly string[],
    signal?: AbortSignal,
    okExitCodes?: number[],
    input?: string,
  ): Promise<RunGitResult> {
    const store = this.#store;
    if (store === undefined) throw new Error('ThreadReplica: fetchInto() or attach() first');
    return store.git.runRemote(args, {
      ...(signal === undefined ? {} : { signal }),
      ...(this.#timeoutMs === undefined ? {} : { timeoutMs: this.#timeoutMs }),
      ...(okExitCodes === undefined ? {} : { okExitCodes }),
      ...(input === undefined ? {} : { input }),
    });
  }

  #storeError(what: string, error: unknown): AgentsError {
    return new AgentsError(
      AgentsErrorCode.SandboxFailed,
      `Could not ${what} ${this.namespace} with the shared snapshot store ${displayRemote(this.remote)}: ${errorMessage(error)}. Check that every worker can reach it (snapshots.remote).`,
      { cause: error, details: { namespace: this.namespace } },
    );
  }
}

function parseMeta(text: string): SharedThreadMeta | undefined {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (typeof parsed !== 'object' || parsed === null) return undefined;
  const record = parsed as Record<string, unknown>;
  const base = record['base'];
  if (typeof base !== 'string' || !/^[0-9a-f]{40,64}$/.test(base)) return undefined;
  const sourceCommit = record['sourceCommit'];
  return {
    base,
    ...(typeof sourceCommit === 'string' && /^[0-9a-f]{40,64}$/.test(sourceCommit)
      ? { sourceCommit }
      : {}),
  };
}
