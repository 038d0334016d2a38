import { AgentsError, AgentsErrorCode } from '../errors.js';
import { canonicalJson } from '../mcp/fingerprint.js';
import { resolveToolNames, type ToolNameCandidate } from '../mcp/naming.js';
import type { ToolEntry } from '../core/tool-descriptor.js';

export type { ToolEntry } from '../core/tool-descriptor.js';

/** What one registry change did, by tool id. */
export interface ToolRegistryChange {
  /** The group that was replaced or removed. */
  groupKey: string;
  added: string[];
  removed: string[];
  /** Same id, but a different definition, capabilities or model-facing name. */
  changed: string[];
}

/** Listener for the registry's `change` event. */
export type ToolRegistryListener = (change: ToolRegistryChange) => void;

/**
 * The live set of tools from every source, grouped by owner (one group per server or skill).
 * Model-facing names are unique across all groups: server tools that clash are renamed
 * `server__tool` (see `resolveToolNames`), so a tool's `descriptor.name` may differ from the
 * entry that was put in.
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
  /** Looks up by stable id (`mcp:SERVER/TOOL`). O(1). */
  get(id: string): ToolEntry | undefined;
  /** Looks up by model-facing name. O(1). */
  getByName(name: string): ToolEntry | undefined;
  /** All entries, groups in insertion order. The array is a snapshot; do not mutate it. */
  list(): readonly ToolEntry[];
  /** Entries of one group. */
  listGroup(groupKey: string): readonly ToolEntry[];
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
    const change: ToolRegistryChange = { groupKey, added: [], removed: [], changed: [] };
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
      if (!view.groups.has(groupKey)) return { groupKey, added: [], removed: [], changed: [] };
      const next = new Map(view.groups);
      next.delete(groupKey);
      return commit(groupKey, next);
    },
    get: (id) => view.byId.get(id),
    getByName: (name) => view.byName.get(name),
    list: () => view.list,
    listGroup: (groupKey) => view.resolvedGroups.get(groupKey) ?? [],
    groups: () => [...view.groups.keys()],
    on(_event, listener) {
      listeners.add(listener);
      return () => {
        listeners.delete(listener);
      };
    },
  };
}
