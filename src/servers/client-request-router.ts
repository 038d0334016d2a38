import {
  INVALID_REQUEST,
  type Client,
  type ClientCapabilities,
  type CreateMessageResult,
  type ElicitResult,
} from '@modelcontextprotocol/client';
import { JsonRpcError } from '../core/client-requests.js';
import type {
  ClientRequestForwarder,
  UpstreamClientRequest,
  UpstreamClientResult,
} from '../core/client-requests.js';
import type { ServerLogger } from './server-logger.js';

/** The client capabilities an upstream server is offered when its requests can be forwarded. */
export const FORWARDED_CLIENT_CAPABILITIES: ClientCapabilities = {
  sampling: {},
  elicitation: { form: {} },
};

/**
 * Routes what one upstream server asks of its client (sampling, elicitation, log messages) to
 * the {@link ClientRequestForwarder} of the tool call in flight. On stdio a server's request
 * carries no link to the call it belongs to, so a request is routed only when every call in
 * flight on the server has the same owner (the same downstream connection); with calls from
 * several clients, or none, it is refused, never sent to a client that did not make the call.
 */
export class ClientRequestRouter {
  private readonly inFlight = new Set<ClientRequestForwarder>();

  constructor(
    private readonly serverName: string,
    private readonly logger: ServerLogger,
  ) {}

  /** Makes `forwarder` a destination while one call runs; call the result when it ends. */
  enter(forwarder: ClientRequestForwarder): () => void {
    // A Set keeps one entry per forwarder object; each call brings its own.
    this.inFlight.add(forwarder);
    return () => this.inFlight.delete(forwarder);
  }

  /**
   * Installs the handlers on a fresh client (before connect). With `forward` the client must
   * have declared {@link FORWARDED_CLIENT_CAPABILITIES}; log messages are always handled (sent to
   * the caller, or to the server logger when there is none).
   */
  install(client: Client, forward: boolean): void {
    if (forward) {
      // The forwarder answers with the downstream client's result, checked there.
      client.setRequestHandler(
        'sampling/createMessage',
        async (request, ctx) =>
          (await this.request(
            { method: request.method, params: request.params } as UpstreamClientRequest,
            ctx.mcpReq.signal,
          )) as CreateMessageResult,
      );
      client.setRequestHandler(
        'elicitation/create',
        async (request, ctx) =>
          (await this.request(
            { method: request.method, params: request.params } as UpstreamClientRequest,
            ctx.mcpReq.signal,
          )) as ElicitResult,
      );
    }
    client.setNotificationHandler('notifications/message', (notification) => {
      const target = this.destination();
      if (typeof target === 'object') {
        target.log(notification.params, { serverName: this.serverName });
        return;
      }
      const { level, logger, data } = notification.params;
      const text = typeof data === 'string' ? data : JSON.stringify(data);
      this.logger.debug(
        `Server "${this.serverName}" log [${level}]${logger === undefined ? '' : ` ${logger}`}: ${text.slice(0, 2_000)}`,
        { serverName: this.serverName },
      );
    });
  }

  private destination(): ClientRequestForwarder | 'none' | 'ambiguous' {
    let found: ClientRequestForwarder | undefined;
    for (const forwarder of this.inFlight) {
      if (found === undefined) found = forwarder;
      else if (forwarder.owner !== found.owner) return 'ambiguous';
    }
    return found ?? 'none';
  }

  private async request(
    request: UpstreamClientRequest,
    signal: AbortSignal,
  ): Promise<UpstreamClientResult> {
    const target = this.destination();
    if (target === 'none') {
      throw new JsonRpcError(
        INVALID_REQUEST,
        `${request.method} from server "${this.serverName}" came while no tool call from an MCP ` +
          'client was in progress on it; it can only be forwarded during such a call.',
      );
    }
    if (target === 'ambiguous') {
      throw new JsonRpcError(
        INVALID_REQUEST,
        `${request.method} from server "${this.serverName}" came while calls from several MCP ` +
          'clients were in progress on it, and nothing in the request says which call it belongs ' +
          'to; it was refused rather than sent to a client that did not make the call. Retry ' +
          'when the other calls have finished.',
      );
    }
    return target.request(request, { serverName: this.serverName, signal });
  }
}

/**
 * The no-answer deadline of one call whose server may ask the client (a human) something: it
 * runs like the SDK's per-call timeout (restarted by progress with `resetOnProgress`) but stands
 * still while a forwarded request waits for the client, so a person answering an elicitation for
 * minutes does not time the call out. `signal` aborts when it expires.
 */
export class ForwardingCallClock {
  private readonly abort = new AbortController();
  private readonly waiting = new Set<UpstreamClientRequest>();
  private timer: NodeJS.Timeout | undefined;
  readonly forwarder: ClientRequestForwarder;

  constructor(
    private readonly idleMs: number,
    forwarder: ClientRequestForwarder,
  ) {
    // Added last, so this gate runs after the policy's: a refused request never stops the clock.
    this.forwarder = forwarder
      .withGate((request) => {
        this.waiting.add(request);
        this.stopTimer();
      })
      .withObserver((outcome) => {
        if (this.waiting.delete(outcome.request) && this.waiting.size === 0) this.touch();
      });
    this.touch();
  }

  get signal(): AbortSignal {
    return this.abort.signal;
  }

  get expired(): boolean {
    return this.abort.signal.aborted;
  }

  /** Restarts the deadline (progress arrived), unless a forwarded request is waiting. */
  touch(): void {
    this.stopTimer();
    if (this.waiting.size > 0 || this.expired) return;
    this.timer = setTimeout(() => this.abort.abort(), this.idleMs);
  }

  stop(): void {
    this.stopTimer();
  }

  private stopTimer(): void {
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
  }
}
