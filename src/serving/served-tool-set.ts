import type { ToolEntry } from '../core/tool-descriptor.js';
import { composeMiddleware } from '../core/tool-middleware.js';
import type { ToolCallHandler, ToolMiddleware } from '../core/tool-middleware.js';
import type { ToolRegistry } from '../registry/tool-registry.js';

/**
 * The part of the tool registry the MCP server needs: the current entries and the change event
 * (`createToolRegistry()`, and the skill registry built on it, are one).
 */
export type ServedToolRegistry = Pick<ToolRegistry, 'entries' | 'on'>;

/** Where served tools come from: a function returning the current entries, or a registry. */
export type ServedToolSource = (() => readonly ToolEntry[]) | ServedToolRegistry;

/** Options of {@link createServedToolSet}. */
export interface ServedToolSetOptions {
  /** The tools to serve. A function is called on every `tools/list` and `tools/call`. */
  entries: ServedToolSource;
  /**
   * Middleware wrapped around every tool (outermost first), the same list a graph uses, so a
   * call over MCP runs path rewriting, change tracking and policy exactly like one from a graph.
   */
  middleware?: readonly ToolMiddleware[];
  /**
   * Extra change source for a plain `entries` function (e.g. the server manager's
   * `tools-changed` event). Returns an unsubscribe function.
   */
  subscribe?: (listener: () => void) => () => void;
  /**
   * False hides a tool from `tools/list` (e.g. its upstream server is down); a call to it
   * then gets an `isError` result saying it is unavailable. Default: every entry is available.
   */
  isAvailable?: (entry: ToolEntry) => boolean;
}

/** One served tool: its entry and the composed handler every call goes through. */
export interface ServedTool {
  entry: ToolEntry;
  handler: ToolCallHandler;
}

/**
 * The tools one MCP server (or many HTTP sessions) serve, with the middleware composed once per
 * entry. Close it to drop the registry subscription.
 */
export interface ServedToolSet {
  /** Tools to advertise now, in source order, without unavailable ones or duplicate names. */
  list(): ServedTool[];
  /** The tool a `tools/call` names; `available: false` when it exists but is hidden. */
  get(name: string): { tool: ServedTool; available: boolean } | undefined;
  /** Calls `listener` (coalesced per microtask) whenever the tool set may have changed. */
  onChange(listener: () => void): () => void;
  /** Tells listeners the set changed (for sources with no change event of their own). */
  notifyChanged(): void;
  /** Drops subscriptions; idempotent. */
  close(): void;
}

function isRegistry(source: ServedToolSource): source is ServedToolRegistry {
  return typeof source === 'object' && source !== null;
}

/**
 * Builds a {@link ServedToolSet}. Composition (`composeMiddleware(middleware, entry.execute)`)
 * happens once per entry object: a registry refresh swaps entries, so a new tool set version
 * gets freshly composed handlers while calls in flight finish on the old ones.
 */
export function createServedToolSet(options: ServedToolSetOptions): ServedToolSet {
  const middleware = options.middleware ?? [];
  const source = options.entries;
  const readEntries = isRegistry(source) ? () => source.entries() : source;
  const composed = new WeakMap<ToolEntry, ServedTool>();
  const listeners = new Set<() => void>();
  const cleanups: Array<() => void> = [];
  let pending = false;
  let closed = false;

  const served = (entry: ToolEntry): ServedTool => {
    let tool = composed.get(entry);
    if (tool === undefined) {
      tool = {
        entry,
        handler: composeMiddleware(middleware, (request) =>
          entry.execute(request.args, request.context, request.capabilities),
        ),
      };
      composed.set(entry, tool);
    }
    return tool;
  };

  // Coalesce bursts (a registry emitting once per server on refresh) into one notification.
  const notifyChanged = (): void => {
    if (closed || pending) return;
    pending = true;
    queueMicrotask(() => {
      pending = false;
      if (closed) return;
      for (const listener of [...listeners]) listener();
    });
  };

  if (isRegistry(source)) {
    cleanups.push(source.on('change', () => notifyChanged()));
  }
  if (options.subscribe) cleanups.push(options.subscribe(notifyChanged));

  const available = options.isAvailable ?? (() => true);

  return {
    list() {
      const seen = new Set<string>();
      const tools: ServedTool[] = [];
      for (const entry of readEntries()) {
        const name = entry.descriptor.name;
        // The registry keeps names unique; if a plain function does not, the first one wins so
        // a name always means one tool.
        if (seen.has(name)) continue;
        seen.add(name);
        if (available(entry)) tools.push(served(entry));
      }
      return tools;
    },
    get(name) {
      for (const entry of readEntries()) {
        if (entry.descriptor.name === name)
          return { tool: served(entry), available: available(entry) };
      }
      return undefined;
    },
    onChange(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    notifyChanged,
    close() {
      if (closed) return;
      closed = true;
      listeners.clear();
      for (const cleanup of cleanups.splice(0)) cleanup();
    },
  };
}
