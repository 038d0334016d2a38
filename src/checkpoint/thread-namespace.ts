import type { RunnableConfig } from '@langchain/core/runnables';
import type { BaseCheckpointSaver, CheckpointTuple } from '@langchain/langgraph-checkpoint';
import { withSaverMethods } from './saver-proxy.js';

/**
 * Whose threads a saver keeps in a store several projects and actors share (a Postgres
 * database): thread `t1` of actor `coder` in project `git-4b82…` is stored as
 * `git-4b82…/coder/t1`, so two projects (or two actors) using the same thread id never read or
 * write each other's checkpoints.
 */
export interface ThreadScope {
  /** The project id (`projectIdOf`: `.agents/project-id`, `git-<root commit>` or a path hash). */
  project: string;
  actor: string;
}

/** The thread id a shared store keeps for thread `threadId` of `scope`. */
export function storedThreadIdOf(scope: ThreadScope, threadId: string): string {
  return `${scope.project}/${scope.actor}/${threadId}`;
}

/** Options of {@link withThreadNamespace}. */
export interface ThreadNamespaceOptions {
  /**
   * Moves a thread stored under its bare id (written before ids were namespaced) to its
   * namespaced id when the namespaced one has no checkpoint yet. Called once per thread id,
   * before the first read or write of it through this saver.
   */
  adoptLegacyThread?: (legacyId: string, storedId: string) => Promise<void>;
}

/**
 * The saver with every thread id namespaced by `scope` in what it stores: callers (LangGraph,
 * the CLI) keep using the bare id (`t1`) in their configs, and get it back in the configs it
 * returns. A listing across threads (no `thread_id`) yields only this scope's threads. A Proxy,
 * as `withSnapshotBarrier`, so the saver keeps its class (`instanceof`, private fields).
 */
export function withThreadNamespace(
  saver: BaseCheckpointSaver,
  scope: ThreadScope,
  options: ThreadNamespaceOptions = {},
): BaseCheckpointSaver {
  const prefix = storedThreadIdOf(scope, '');
  const adopted = new Map<string, Promise<void>>();
  const ready = (threadId: unknown): Promise<void> => {
    if (typeof threadId !== 'string' || options.adoptLegacyThread === undefined) {
      return Promise.resolve();
    }
    let done = adopted.get(threadId);
    if (done === undefined) {
      done = options.adoptLegacyThread(threadId, prefix + threadId);
      adopted.set(threadId, done);
      // A failed adoption is retried on the next use, not remembered.
      done.catch(() => adopted.delete(threadId));
    }
    return done;
  };
  const inward = (config: RunnableConfig): RunnableConfig => {
    const threadId: unknown = config.configurable?.['thread_id'];
    if (typeof threadId !== 'string') return config;
    return { ...config, configurable: { ...config.configurable, thread_id: prefix + threadId } };
  };
  /** The config with its stored id made bare; undefined for another scope's thread. */
  const outward = (config: RunnableConfig): RunnableConfig | undefined => {
    const stored: unknown = config.configurable?.['thread_id'];
    if (typeof stored !== 'string') return config;
    if (!stored.startsWith(prefix)) return undefined;
    return {
      ...config,
      configurable: { ...config.configurable, thread_id: stored.slice(prefix.length) },
    };
  };
  const outwardTuple = (tuple: CheckpointTuple): CheckpointTuple | undefined => {
    const config = outward(tuple.config);
    if (config === undefined) return undefined;
    const parentConfig = tuple.parentConfig === undefined ? undefined : outward(tuple.parentConfig);
    return { ...tuple, config, ...(parentConfig === undefined ? {} : { parentConfig }) };
  };
  const threadOf = (config: RunnableConfig | undefined): unknown =>
    config?.configurable?.['thread_id'];
  const wrapped: Partial<Record<keyof BaseCheckpointSaver, (...args: never[]) => unknown>> = {
    async get(config: RunnableConfig) {
      await ready(threadOf(config));
      return saver.get(inward(config));
    },
    async getTuple(config: RunnableConfig) {
      await ready(threadOf(config));
      const tuple = await saver.getTuple(inward(config));
      return tuple === undefined ? undefined : outwardTuple(tuple);
    },
    async *list(config: RunnableConfig, listOptions?: Parameters<BaseCheckpointSaver['list']>[1]) {
      await ready(threadOf(config));
      const before = listOptions?.before;
      const translated =
        listOptions === undefined
          ? undefined
          : { ...listOptions, ...(before === undefined ? {} : { before: inward(before) }) };
      for await (const tuple of saver.list(inward(config), translated)) {
        const mine = outwardTuple(tuple);
        if (mine !== undefined) yield mine;
      }
    },
    async put(config: RunnableConfig, ...rest: unknown[]) {
      await ready(threadOf(config));
      const put = saver.put.bind(saver) as (...args: unknown[]) => Promise<RunnableConfig>;
      const stored = await put(inward(config), ...rest);
      return outward(stored) ?? stored;
    },
    async putWrites(config: RunnableConfig, ...rest: unknown[]) {
      await ready(threadOf(config));
      const putWrites = saver.putWrites.bind(saver) as (...args: unknown[]) => Promise<void>;
      return putWrites(inward(config), ...rest);
    },
    async getDeltaChannelHistory(historyOptions: { config: RunnableConfig }) {
      await ready(threadOf(historyOptions.config));
      return saver.getDeltaChannelHistory({
        ...historyOptions,
        config: inward(historyOptions.config),
      } as Parameters<BaseCheckpointSaver['getDeltaChannelHistory']>[0]);
    },
    async deleteThread(threadId: string) {
      await ready(threadId);
      return saver.deleteThread(prefix + threadId);
    },
  };
  return withSaverMethods(saver, wrapped);
}
