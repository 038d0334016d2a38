/**
 * Flood control for network refusals in the audit log: a server that tries the same refused
 * host 400 times a second must not write 400 lines a second (a log nobody can read, and a disk
 * it fills). The first refusal of a kind is written in full; the ones like it that follow are
 * counted and written as one summary per window ("411 more in 2 s"), so the lines still add up
 * to the exact number of refusals. Allowed connections and human answers are never coalesced.
 */
import type { AuditEntry } from './audit-entry.js';

/** Options of {@link createAuditCoalescer}. */
export interface AuditCoalescerOptions {
  /** Where entries (and summaries) go. */
  write: (entry: AuditEntry) => void;
  /** Length of one counting window. Default 2 s. */
  windowMs?: number;
  /**
   * Distinct refusal kinds tracked at once; past that, refusals of further kinds are counted
   * into one summary per server (host `*`), so a flood of random names stays bounded too.
   * Default 64.
   */
  maxKinds?: number;
  /** Clock (tests). */
  now?: () => number;
}

/** Sorts network refusals into full lines and counted summaries. */
export interface AuditCoalescer {
  /** Writes the entry, or counts it when one like it was written in the current window. */
  add(entry: AuditEntry): void;
  /** Writes every pending summary now (at close) and forgets every kind. */
  flush(): void;
}

interface Kind {
  template: AuditEntry;
  /** Refusals counted (not written) since `since`. */
  count: number;
  since: number;
  during: Set<string>;
}

/** At most this many call ids in a summary's `during`. */
const MAX_DURING = 16;

/** Builds a coalescer; its timer runs only while some kind is tracked, and never holds the process. */
export function createAuditCoalescer(options: AuditCoalescerOptions): AuditCoalescer {
  const windowMs = options.windowMs ?? 2_000;
  const maxKinds = options.maxKinds ?? 64;
  const now = options.now ?? Date.now;
  const kinds = new Map<string, Kind>();
  let timer: ReturnType<typeof setInterval> | undefined;

  const summarize = (kind: Kind, at: number): void => {
    if (kind.count === 0) return;
    const net = kind.template.network!;
    options.write({
      ...kind.template,
      time: new Date(at).toISOString(),
      network: {
        ...net,
        ...(kind.during.size === 0 ? {} : { during: [...kind.during] }),
        repeated: {
          count: kind.count,
          windowMs: at - kind.since,
          since: new Date(kind.since).toISOString(),
        },
      },
    });
  };

  const tick = (): void => {
    const at = now();
    for (const [key, kind] of kinds) {
      if (kind.count === 0) {
        // A quiet window: the next refusal of this kind is written in full again.
        kinds.delete(key);
        continue;
      }
      summarize(kind, at);
      kind.count = 0;
      kind.since = at;
      kind.during.clear();
    }
    if (kinds.size === 0 && timer !== undefined) {
      clearInterval(timer);
      timer = undefined;
    }
  };

  const count = (kind: Kind, entry: AuditEntry): void => {
    kind.count++;
    for (const call of entry.network?.during ?? []) {
      if (kind.during.size < MAX_DURING) kind.during.add(call);
    }
  };

  return {
    add(entry) {
      const net = entry.network;
      if (
        entry.event !== 'network' ||
        net === undefined ||
        net.decision !== 'deny' ||
        net.protocol === 'approval'
      ) {
        options.write(entry);
        return;
      }
      const key = JSON.stringify([net.serverName, net.protocol, net.host, net.port, net.reason]);
      const known = kinds.get(key);
      if (known !== undefined) {
        count(known, entry);
        return;
      }
      if (timer === undefined) {
        timer = setInterval(tick, windowMs);
        timer.unref();
      }
      if (kinds.size < maxKinds) {
        kinds.set(key, { template: entry, count: 0, since: now(), during: new Set() });
        options.write(entry);
        return;
      }
      // Too many kinds at once: one bucket per server for the rest.
      const overflowKey = JSON.stringify([net.serverName, '*']);
      let overflow = kinds.get(overflowKey);
      if (overflow === undefined) {
        overflow = {
          template: {
            ...entry,
            args: { host: '*', port: 0, protocol: net.protocol },
            error: 'refusals of other hosts, too many kinds at once to write each',
            network: {
              serverName: net.serverName,
              protocol: net.protocol,
              host: '*',
              port: 0,
              decision: 'deny',
              reason: 'refusals of other hosts, too many kinds at once to write each',
            },
          },
          count: 0,
          since: now(),
          during: new Set(),
        };
        kinds.set(overflowKey, overflow);
      }
      count(overflow, entry);
    },
    flush() {
      const at = now();
      for (const kind of kinds.values()) summarize(kind, at);
      kinds.clear();
      if (timer !== undefined) clearInterval(timer);
      timer = undefined;
    },
  };
}
