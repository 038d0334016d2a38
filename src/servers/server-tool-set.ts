import type { Tool } from '@modelcontextprotocol/client';
import { AgentsErrorCode, ServerError } from '../errors.js';
import { listToolsWithHints } from '../mcp/list-tools.js';
import { createMcpToolEntries } from '../mcp/tool-adapter.js';
import type { McpToolCaller } from '../mcp/tool-call.js';
import { knownServerVerdicts } from '../registry/known-servers.js';
import type { ToolEntry } from '../core/tool-descriptor.js';
import { knownPathArgumentsOf } from '../mcp/path-arguments.js';
import type { Connection, ServerCore } from './server-core.js';
import type { ToolsChangedReason } from './server-events.js';

/**
 * The tools of one managed server: built from each listing and swapped in as a whole (never a
 * partial mix), compared with the last listing (added, removed, changed definitions, reported
 * as `tools-changed`), and listed again on `notifications/tools/list_changed` (debounced, at
 * most one listing in flight and one queued). A failed re-listing keeps the last good set and
 * marks it stale.
 *
 * Caching hints (2026-07-28): a list with `ttlMs` is listed again when it runs out, unless
 * changes reach us live (a `list_changed` always re-lists at once, whatever the TTL said, and
 * asks the server, never a cache). Without a `ttlMs`, or with 0, nothing is polled: the set
 * follows notifications and restarts, as for 2025 servers.
 */
export class ServerToolSet {
  /** Ids of tools whose definition (fingerprint) changed since the first listing. */
  readonly changedToolIds = new Set<string>();
  /** True when the last refresh failed: the entries are the last good set. */
  stale = false;
  private current: readonly ToolEntry[] = [];
  private byName = new Map<string, ToolEntry>();
  private listed = false;
  private debounceTimer: NodeJS.Timeout | undefined;
  private refreshing: Promise<void> | undefined;
  private refreshQueued = false;
  private warnedUndeclaredListChanged = false;
  private expiryTimer: NodeJS.Timeout | undefined;

  constructor(
    private readonly core: ServerCore,
    /** Sends the calls of the entries built here (the managed server, with its supervision). */
    private readonly caller: McpToolCaller,
  ) {}

  entries(): readonly ToolEntry[] {
    return this.current;
  }

  /** True once a listing was installed (before that, every name is let through to the server). */
  get isListed(): boolean {
    return this.listed;
  }

  /** The entry of a tool by its server-side name, if the server lists it now. */
  get(toolName: string): ToolEntry | undefined {
    return this.byName.get(toolName);
  }

  /** Builds the whole new set, then swaps it in one assignment: never a partial mix. */
  swap(tools: Tool[], reason: ToolsChangedReason | undefined): void {
    const { config, options } = this.core;
    const launched = config.transport === 'stdio' ? [config.command, ...(config.args ?? [])] : [];
    const known = config.transport === 'stdio' ? knownPathArgumentsOf(launched) : undefined;
    // Matched on what was launched and what it says it is (see known-servers.ts).
    const knownVerdict =
      config.transport === 'stdio'
        ? knownServerVerdicts(launched, this.core.serverInfo?.name)
        : undefined;
    const built = createMcpToolEntries({
      serverName: this.core.name,
      tools,
      caller: this.caller,
      ...(known === undefined ? {} : { knownPathArguments: (name: string) => known[name] }),
      // A remote server's paths name its own disk, not ours: rewriting them would refuse or
      // corrupt them. Off unless the config turns it on (explicit overrides still apply).
      ...((config.rewritePaths ?? config.transport === 'stdio')
        ? {}
        : { detectPathArguments: () => [] }),
      overrides: { ...config.overrides, ...options.overrides },
      trusted: config.trusted,
      ...(config.trustedTools === undefined ? {} : { trustedTools: config.trustedTools }),
      ...(knownVerdict === undefined ? {} : { knownVerdict }),
      prefixToolNames: config.prefixToolNames,
    });
    const previous = new Map(this.current.map((entry) => [entry.descriptor.id, entry]));
    const added: string[] = [];
    const changed: string[] = [];
    const next = built.map((entry) => {
      const old = previous.get(entry.descriptor.id);
      if (!old) {
        if (this.listed) added.push(entry.descriptor.id);
        return entry;
      }
      previous.delete(entry.descriptor.id);
      if (old.descriptor.fingerprint === entry.descriptor.fingerprint) {
        // Unchanged since the last listing, but a read-only upgrade withheld then stays
        // withheld: re-inferring from the same definition must not grant it later.
        return this.changedToolIds.has(entry.descriptor.id)
          ? withheldReadOnlyUpgrade(old, entry)
          : entry;
      }
      changed.push(entry.descriptor.id);
      this.changedToolIds.add(entry.descriptor.id);
      return withheldReadOnlyUpgrade(old, entry);
    });
    const removed = this.listed ? [...previous.keys()] : [];
    this.current = Object.freeze(next);
    this.byName = new Map(next.map((entry) => [entry.descriptor.originalName, entry]));
    this.listed = true;
    this.stale = false;
    if (reason && (added.length > 0 || removed.length > 0 || changed.length > 0)) {
      this.core.logger.info(`Server "${this.core.name}" tools changed (${reason})`, {
        added,
        removed,
        changed,
      });
      this.core.events.emit('tools-changed', {
        serverName: this.core.name,
        reason,
        added,
        removed,
        changed,
        entries: this.current,
      });
    }
  }

  /** `notifications/tools/list_changed` from the connection of `generation`. */
  onListChanged(generation: number): void {
    const core = this.core;
    if (core.closing || generation !== core.generation) return;
    if (
      !core.serverCapabilities?.tools?.listChanged &&
      !this.warnedUndeclaredListChanged &&
      core.status === 'ready'
    ) {
      this.warnedUndeclaredListChanged = true;
      core.logger.warn(
        `Server "${core.name}" sent tools/list_changed without declaring tools.listChanged; refreshing anyway`,
      );
    }
    // Debounced; at most one refresh in flight and one queued (a storm costs a handful of lists).
    clearTimeout(this.debounceTimer);
    this.debounceTimer = setTimeout(() => {
      this.debounceTimer = undefined;
      this.runRefresh();
    }, core.options.refreshDebounceMs ?? 200);
  }

  /**
   * Arms the re-listing of a list whose `ttlMs` runs out (see the class comment). When it fires
   * while changes reach us live, it only waits another TTL: the stream keeps the set current.
   */
  scheduleExpiry(connection: Connection, ttlMs: number | undefined): void {
    clearTimeout(this.expiryTimer);
    this.expiryTimer = undefined;
    if (ttlMs === undefined || ttlMs <= 0 || this.core.closing) return;
    this.expiryTimer = setTimeout(
      () => {
        this.expiryTimer = undefined;
        if (this.core.closing || connection !== this.core.connection) return;
        if (connection.toolChangesLive === true) this.scheduleExpiry(connection, ttlMs);
        else this.runRefresh('refresh');
      },
      Math.max(ttlMs, MIN_RELIST_INTERVAL_MS),
    );
    // A TTL never keeps the process alive.
    this.expiryTimer.unref();
  }

  private runRefresh(reason: ToolsChangedReason = 'list_changed'): void {
    if (this.core.closing) return;
    if (this.refreshing) {
      this.refreshQueued = true;
      return;
    }
    // A list_changed during startup is covered by the initial listing once it is ready.
    this.refreshing = this.refresh({}, reason)
      .catch(() => undefined)
      .finally(() => {
        this.refreshing = undefined;
        if (this.refreshQueued && !this.core.closing) {
          this.refreshQueued = false;
          this.runRefresh();
        }
      });
  }

  /** Lists the tools again now and swaps the set. Throws on failure and keeps the last good set. */
  async refresh(
    options: { signal?: AbortSignal } = {},
    reason: ToolsChangedReason = 'refresh',
  ): Promise<void> {
    const core = this.core;
    const connection = core.connection;
    if (!connection || core.status !== 'ready') {
      if (core.status === 'starting' || core.status === 'restarting') return;
      throw new ServerError(
        AgentsErrorCode.ServerUnavailable,
        `Cannot refresh the tools of server "${core.name}": it is ${core.status}.`,
        core.failures.details('list', connection?.serverTransport),
      );
    }
    const abort = new AbortController();
    const timer = setTimeout(
      () => abort.abort(new Error('tools/list timed out')),
      core.timeouts.callMs,
    );
    const signal = options.signal ? AbortSignal.any([options.signal, abort.signal]) : abort.signal;
    try {
      // cacheMode 'refresh' (the default): a re-list asks the server, never the client's cache.
      const listing = await listToolsWithHints(connection.client, {
        signal,
        serverName: core.name,
      });
      // A restart during the listing installed a newer set; this one is outdated.
      if (connection !== core.connection || core.closing) return;
      this.swap(listing.tools, reason);
      this.scheduleExpiry(connection, listing.ttlMs);
    } catch (error) {
      if (connection !== core.connection || core.closing) return;
      this.stale = true;
      const failure = core.failures.describe(error, connection.serverTransport, 'list');
      core.logger.warn(`${failure.message} Keeping the last known tool set (marked stale).`, {
        serverName: core.name,
      });
      throw failure;
    } finally {
      clearTimeout(timer);
    }
  }

  /** Stops refreshing; resolves once a listing in flight has ended. */
  async close(): Promise<void> {
    clearTimeout(this.debounceTimer);
    clearTimeout(this.expiryTimer);
    await this.refreshing?.catch(() => undefined);
  }
}

/** Shortest wait between TTL re-listings, whatever a server's `ttlMs` says. */
export const MIN_RELIST_INTERVAL_MS = 1_000;

/**
 * A changed definition is inferred again, but a write-class tool never becomes read-only by
 * changing itself (rug pull, T3d): keep the old write verdicts until an operator overrides.
 */
function withheldReadOnlyUpgrade(old: ToolEntry, next: ToolEntry): ToolEntry {
  const before = old.descriptor.capabilities;
  const after = next.descriptor.capabilities;
  if (before.readOnly.value || !after.readOnly.value || after.readOnly.source === 'override')
    return next;
  return {
    execute: (args, context, capabilities) => next.execute(args, context, capabilities),
    descriptor: {
      ...next.descriptor,
      capabilities: {
        ...after,
        readOnly: {
          value: false,
          source: before.readOnly.source,
          reason:
            'definition changed at run time; the read-only upgrade is withheld until an operator overrides it',
        },
        writes: before.writes,
        destructive: before.destructive,
        disagreements: [
          ...after.disagreements,
          'read-only upgrade after a definition change was withheld',
        ],
      },
    },
  };
}
