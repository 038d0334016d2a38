import type { ServerError } from '../errors.js';
import type { ToolEntry } from '../core/tool-descriptor.js';
import type { ServerLogger } from './server-logger.js';

/** A server finished starting (first start or a restart) and its tools are listed. */
export interface ServerStartEvent {
  serverName: string;
  /** True when this start is a restart after a crash, a failed health check or a lost session. */
  restart: boolean;
  protocolVersion: string | undefined;
  toolCount: number;
  durationMs: number;
  /** Process id (and process group id) of a stdio server. */
  pid: number | undefined;
}

/** Why a server's connection ended. */
export type ServerEndReason = 'closed' | 'crashed' | 'unresponsive';

/** A server's connection ended: closed on purpose, crashed, or stopped as unresponsive. */
export interface ServerEndEvent {
  serverName: string;
  reason: ServerEndReason;
  exitCode?: number | null;
  signal?: string | null;
  /** For `crashed` / `unresponsive`: what happened, with stderr tail. */
  error?: ServerError;
}

/** A restart is scheduled after a crash (bounded exponential backoff). */
export interface ServerRestartEvent {
  serverName: string;
  /** 1-based attempt number. */
  attempt: number;
  maxAttempts: number;
  delayMs: number;
  cause: ServerError;
}

/** Why a tool set was listed again. */
export type ToolsChangedReason = 'list_changed' | 'restart' | 'reconnect' | 'refresh';

/**
 * A server's tool set was replaced (atomically). Ids are descriptor ids (`mcp:SERVER/TOOL`);
 * `changed` are tools whose fingerprint changed: treat them as new definitions.
 */
export interface ToolsChangedEvent {
  serverName: string;
  reason: ToolsChangedReason;
  added: string[];
  removed: string[];
  changed: string[];
  /** The complete new set. */
  entries: readonly ToolEntry[];
}

/** Lifecycle events of servers, by name. */
export interface ServerEventMap {
  'server-start': ServerStartEvent;
  'server-end': ServerEndEvent;
  'server-restart': ServerRestartEvent;
  'tools-changed': ToolsChangedEvent;
}

/** Name of a lifecycle event. */
export type ServerEventName = keyof ServerEventMap;

/** A listener for one lifecycle event. */
export type ServerEventListener<K extends ServerEventName> = (event: ServerEventMap[K]) => void;

/** Something that emits server lifecycle events. `on` returns a function that unsubscribes. */
export interface ServerEventSource {
  on<K extends ServerEventName>(event: K, listener: ServerEventListener<K>): () => void;
}

/** @internal A small typed emitter; a throwing listener is logged and never breaks the lifecycle. */
export class ServerEventEmitter implements ServerEventSource {
  private readonly listeners = new Map<ServerEventName, Set<(event: never) => void>>();

  constructor(private readonly logger: ServerLogger) {}

  on<K extends ServerEventName>(event: K, listener: ServerEventListener<K>): () => void {
    let set = this.listeners.get(event);
    if (!set) {
      set = new Set();
      this.listeners.set(event, set);
    }
    set.add(listener as (event: never) => void);
    return () => {
      set.delete(listener as (event: never) => void);
    };
  }

  emit<K extends ServerEventName>(event: K, payload: ServerEventMap[K]): void {
    const set = this.listeners.get(event);
    if (!set) return;
    for (const listener of [...set]) {
      try {
        (listener as ServerEventListener<K>)(payload);
      } catch (error) {
        this.logger.error(`A "${event}" listener threw`, { error: String(error) });
      }
    }
  }

  clear(): void {
    this.listeners.clear();
  }
}
