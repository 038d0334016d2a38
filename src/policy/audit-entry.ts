/** The shape of one audit log line. */
import type { ClientRequestOutcome } from '../core/client-requests.js';
import type { InputAnswerSource, InputQuestionOutcome } from '../core/input-requests.js';
import type { CapabilitySource } from '../core/tool-descriptor.js';
import type { BudgetRecord } from './output-budget.js';
import type { PolicyRecord } from './policy-middleware.js';

/** One capability verdict as recorded: value and where it came from. */
export interface AuditVerdict {
  value: boolean;
  source: CapabilitySource;
}

/** One line of the audit log. */
export interface AuditEntry {
  /** ISO time the call started. */
  time: string;
  /**
   * `tool-call-start` when a call starts (written before it runs, so a call whose process was
   * killed still has one); `tool-call` when it finished (or failed); `approval-requested` when it
   * paused for a human; `pause-deferred` when it would have paused inside a task of grouped
   * read-only calls, and runs again alone after them (where it pauses for real); `client-request` for a request the call's upstream server made of the
   * MCP client (sampling, elicitation), forwarded or refused: `args` then holds its summary;
   * `input-request` for a question a 2026-07-28 server asked before running the tool
   * (`input_required`: elicitation, sampling, roots) and how it ended: `args` holds its summary;
   * `unattributed-changes` for file changes found when a thread was reopened that no recorded
   * call made (a call killed before its snapshot); `network` for a connection a server with
   * network host lists made (through the proxy) or the library made to a remote server: allowed or
   * refused, filed under the server (`toolId` `network:SERVER`) with the calls in flight then.
   */
  event:
    | 'tool-call'
    | 'tool-call-start'
    | 'approval-requested'
    | 'pause-deferred'
    | 'client-request'
    | 'input-request'
    | 'unattributed-changes'
    | 'network';
  /** Links a call's `tool-call-start` entry to its other entries. */
  callId?: string;
  actor?: string;
  thread?: string;
  toolCallId?: string;
  toolId: string;
  toolName: string;
  serverName?: string;
  fingerprint: string;
  capabilities: {
    readOnly: AuditVerdict;
    writes: AuditVerdict;
    destructive: AuditVerdict;
    openWorld: AuditVerdict;
    /** Claims that were overruled (e.g. a `readOnlyHint` on a tool named like a write); absent when none. */
    disagreements?: string[];
  };
  /** Arguments as the model (or the editing human) gave them, capped. */
  args: unknown;
  /** The policy decision and who decided (absent when no policy middleware ran). */
  policy?: PolicyRecord;
  durationMs: number;
  /** Bytes of the result the model sees (text and JSON). */
  resultBytes?: number;
  isError?: boolean;
  /** Error text: the thrown error, or the text of an `isError` result (capped). */
  error?: string;
  /** Snapshot sha when the call changed files. */
  snapshot?: string;
  changed?: number;
  budget?: Pick<BudgetRecord, 'originalBytes' | 'cutBytes' | 'spilledTo'>;
  /** For `event: 'network'`: the connection and the decision. */
  network?: {
    serverName: string;
    /** `approval`: a human's answer to a network approval (policy `network` rule `ask`). */
    protocol: 'http' | 'connect' | 'socks5' | 'remote' | 'approval';
    host: string;
    port: number;
    address?: string;
    decision: 'allow' | 'deny';
    reason: string;
    rule?: string;
    /**
     * The tool calls in flight on the server (their tool call ids) when a connection was made or
     * refused. The proxy sees only the server's socket, not which of its processes connected
     * (a background process may connect between or during calls), so a connection is filed
     * under the server (`toolId` `network:SERVER`) and names these calls as "during", never as
     * the call that made it.
     */
    during?: string[];
    /**
     * A summary of refusals like the entry before it (same server, host, port and reason)
     * that were counted rather than written one by one: `count` more in `windowMs` since `since`.
     */
    repeated?: { count: number; windowMs: number; since: string };
    /** For a request the proxy could not parse: its first bytes (escaped when printed). */
    unparsed?: string;
    /** `needed`: refused until a human approves; `approved` / `rejected`: the answer. */
    approval?: 'needed' | 'approved' | 'rejected';
  };
  /** For `event: 'client-request'`: what was asked and how it ended. */
  clientRequest?: {
    method: string;
    /** The upstream server that asked. */
    serverName: string;
    outcome: ClientRequestOutcome['outcome'];
    /** The client's answer to an elicitation: accept, decline or cancel. */
    action?: string;
    /** The model that answered a sampling request. */
    model?: string;
  };
  /** For `event: 'input-request'`: who asked what, and who answered or refused it. */
  inputRequest?: {
    method: string;
    /** The server that asked (the tool is the entry's). */
    serverName: string;
    /**
     * The question's key in the server's `inputRequests` (empty when the server refused to ask
     * for a capability the policy withheld), and its round (1 first).
     */
    key: string;
    round: number;
    outcome: InputQuestionOutcome['outcome'];
    /** person, model, policy, or client (roots answered from the sandbox, a built-in refusal). */
    by: InputAnswerSource['by'];
    /** The person's, model's or policy's name. */
    name?: string;
    /** An elicitation answer's action. */
    action?: string;
    /** The model named in a sampling answer. */
    model?: string;
  };
}
