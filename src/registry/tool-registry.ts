import { AgentsError, AgentsErrorCode } from '../errors.js';
import { canonicalJson } from '../mcp/fingerprint.js';
import { resolveToolNames, type ToolNameCandidate } from '../mcp/naming.js';
import type { ToolEntry } from '../core/tool-descriptor.js';

/**
 * The registry's one change event: what one swap did, by tool id, and the whole set after it.
 * Every reader (an actor's graph, `agents serve`, the CLI) follows this one event.
 */
export interface ToolRegistryChange {
  /** The group that was replaced or removed. */
  groupKey: string;
  added: string[];
  removed: string[];
  /** Same id, but a different definition, capabilities or model-facing name. */
  changed: string[];
  /** Every entry after the change (the array {@link ToolRegistry.entries} returns). */
  entries: readonly ToolEntry[];
}

/** Listener for the registry's `change` event. */
export type ToolRegistryListener = (change: ToolRegistryChange) => void;

/**
 * The live set of tools from every source, grouped by owner (one group per server, per skill
 * set, or per caller-chosen key): the one registry of {@link ToolEntry}s that skills, actors,
 * `agents serve` and policy read. Model-facing names are unique across all groups: server tools
 * that clash are renamed `server__tool` (see `resolveToolNames`), so a tool's `descriptor.name`
 * may differ from the entry that was put in.
 *
 * Ids: `descriptor.id` is the tool's stable id, the one policy rules, pins, known tools and the
 * audit log use. A tool reached through a tool resource (ADR-0027 "AEP tool contributions
 * resolve to MCP") has the resource's id
 * (`repo.status`), which stays the same when the server record is renamed; a tool included
 * with its whole server has `mcp:SERVER/TOOL`; others `builtin:NAME`, `custom:NAME`,
 * `skill:NAME`.
 */
export interface ToolRegistry {
  /**
   * Atomically replaces all entries of one group (adds the group if new). Either the whole new
   * set is in, or (on error) nothing changed. Emits `change` when anything differs.
   * @throws AgentsError `TOOL_NAME_COLLISION` for a duplicate id or unresolvable name clash.
   */
  replaceGroup(groupKey: string, entries: readonly ToolEntry[]): ToolRegistryChange;
  /** Removes a group; a no-op for an unknown key. */
  removeGroup(groupKey: string): ToolRegistryChange;
  /** Looks up by stable id (a tool resource id, `mcp:SERVER/TOOL`, `builtin:NAME`, ...). O(1). */
  get(id: string): ToolEntry | undefined;
  /** Looks up by model-facing name. O(1). */
  getByName(name: string): ToolEntry | undefined;
  /**
   * All entries (groups in insertion order), or one group's. The array is a snapshot, replaced
   * on every change; do not mutate it.
   */
  entries(groupKey?: string): readonly ToolEntry[];
  /** Group keys in insertion order. */
  groups(): string[];
  /** Subscribes to changes; returns the unsubscribe function. Listener errors are ignored. */
  on(event: 'change', listener: ToolRegistryListener): () => void;
}

/** Options for {@link createToolRegistry}. */
export interface ToolRegistryOptions {
  /** Prefix every server tool with its server name, not only on collision. */
  alwaysPrefix?: boolean;
}

interface View {
  groups: Map<string, readonly ToolEntry[]>;
  byId: Map<string, ToolEntry>;
  byName: Map<string, ToolEntry>;
  list: readonly ToolEntry[];
  groupOf: Map<string, string>;
  resolvedGroups: Map<string, readonly ToolEntry[]>;
}

function signature(entry: ToolEntry): string {
  const descriptor = entry.descriptor;
  return `${descriptor.fingerprint}\u0000${descriptor.name}\u0000${canonicalJson(descriptor.capabilities)}\u0000${canonicalJson(descriptor.pathArguments)}`;
}

function buildView(groups: Map<string, readonly ToolEntry[]>, options: ToolRegistryOptions): View {
  const candidates: ToolNameCandidate[] = [];
  const groupOf = new Map<string, string>();
  for (const [groupKey, entries] of groups) {
    for (const entry of entries) {
      const descriptor = entry.descriptor;
      const previous = groupOf.get(descriptor.id);
      if (previous !== undefined) {
        throw new AgentsError(
          AgentsErrorCode.ToolNameCollision,
          `Tool id "${descriptor.id}" is in both "${previous}" and "${groupKey}"; a tool id belongs to one group.`,
          { details: { toolId: descriptor.id, groups: [previous, groupKey] } },
        );
      }
      groupOf.set(descriptor.id, groupKey);
      candidates.push({
        id: descriptor.id,
        originalName: descriptor.name,
        ...(descriptor.serverName === undefined ? {} : { serverName: descriptor.serverName }),
      });
    }
  }
  const names = resolveToolNames(
    candidates,
    options.alwaysPrefix === true ? { alwaysPrefix: true } : {},
  );
  const byId = new Map<string, ToolEntry>();
  const byName = new Map<string, ToolEntry>();
  const list: ToolEntry[] = [];
  const resolvedGroups = new Map<string, readonly ToolEntry[]>();
  for (const [groupKey, entries] of groups) {
    const resolved: ToolEntry[] = [];
    for (const entry of entries) {
      const name = names.get(entry.descriptor.id)!;
      // Keep the caller's object when its name stands; copy only when renamed.
      const finalEntry: ToolEntry =
        name === entry.descriptor.name
          ? entry
          : { descriptor: { ...entry.descriptor, name }, execute: entry.execute.bind(entry) };
      byId.set(finalEntry.descriptor.id, finalEntry);
      byName.set(name, finalEntry);
      list.push(finalEntry);
      resolved.push(finalEntry);
    }
    resolvedGroups.set(groupKey, resolved);
  }
  return { groups, byId, byName, list, groupOf, resolvedGroups };
}

/**
 * Creates an empty {@link ToolRegistry}. Each change rebuilds the lookup maps (O(n) per swap)
 * so look-ups stay O(1) and a reader never sees a half-applied change.
 */
export function createToolRegistry(options: ToolRegistryOptions = {}): ToolRegistry {
  let view: View = buildView(new Map(), options);
  const listeners = new Set<ToolRegistryListener>();

  function commit(groupKey: string, next: Map<string, readonly ToolEntry[]>): ToolRegistryChange {
    const nextView = buildView(next, options);
    const previous = view;
    const change: ToolRegistryChange = {
      groupKey,
      added: [],
      removed: [],
      changed: [],
      entries: nextView.list,
    };
    for (const [id, entry] of nextView.byId) {
      const before = previous.byId.get(id);
      if (before === undefined) change.added.push(id);
      else if (before !== entry && signature(before) !== signature(entry)) change.changed.push(id);
    }
    for (const id of previous.byId.keys()) {
      if (!nextView.byId.has(id)) change.removed.push(id);
    }
    view = nextView;
    if (change.added.length + change.removed.length + change.changed.length > 0) {
      for (const listener of [...listeners]) {
        try {
          listener(change);
        } catch {
          // A faulty listener must not undo or block a committed swap.
        }
      }
    }
    return change;
  }

  return {
    replaceGroup(groupKey, entries) {
      const next = new Map(view.groups);
      next.set(groupKey, [...entries]);
      return commit(groupKey, next);
    },
    removeGroup(groupKey) {
      if (!view.groups.has(groupKey))
        return { groupKey, added: [], removed: [], changed: [], entries: view.list };
      const next = new Map(view.groups);
      next.delete(groupKey);
      return commit(groupKey, next);
    },
    get: (id) => view.byId.get(id),
    getByName: (name) => view.byName.get(name),
    entries: (groupKey) =>
      groupKey === undefined ? view.list : (view.resolvedGroups.get(groupKey) ?? []),
    groups: () => [...view.groups.keys()],
    on(_event, listener) {
      listeners.add(listener);
      return () => {
        listeners.delete(listener);
      };
    },
  };
}
