import type { BaseChatModel } from '@langchain/core/language_models/chat_models';
import type { StructuredTool } from '@langchain/core/tools';
import type { BaseCheckpointSaver } from '@langchain/langgraph';
import type { z } from 'zod';
import type { ActorSchema } from '../config/actor-schema.js';
import type { Actor as ActorConfig } from '../config/actor-schema.js';
import type { ToolMiddleware } from '../core/tool-middleware.js';
import type { CassetteRecorder } from '../replay/cassette-recorder.js';
import type { Policy, PolicyInput } from '../config/policy-schema.js';
import type { ChangeRecord } from '../core/change-record.js';
import type { ToolEntry } from '../core/tool-descriptor.js';
import type { SandboxFrom, SandboxWarning } from '../sandbox/base-origin.js';
import type { Sandbox } from '../sandbox/types.js';
import type { ManagedServerStatus } from '../servers/server-core.js';
import type { ServerEventSource } from '../servers/server-events.js';
import type { ServerLogger } from '../servers/server-logger.js';
import type { ServerManager } from '../servers/server-manager.js';
import type { AgentSkill } from '../skills/agent-skills.js';
import type { SkillActivation } from '../skills/skill-activation.js';
import type { WorkspaceStore } from '../workspace/workspace-types.js';
import type { ActorConfinement, ActorConfinementOptions } from '../runtime/confinement.js';
import type { AgentsRuntime } from '../runtime/agents-runtime.js';
import type { ActorGraph } from './actor-graph.js';
import type { PendingApproval, PendingInput } from './approvals.js';
import type { TurnLimitPause } from './turn-limit.js';

/** An actor config as written (defaults optional), with its name. */
export type ActorConfigInput = z.input<typeof ActorSchema> & { name: string };

/** Options for {@link createActor}. Give `config`, or `name` (read from the workspace). */
export interface CreateActorOptions {
  /** The actor's config; when absent it is read from `actors/NAME.yaml` in the workspace. */
  config?: ActorConfigInput;
  name?: string;
  /** Workspace folder or store (default `.agents` under the current directory). */
  workspace?: string | WorkspaceStore;
  /** A chat model instance, or a model string; wins over the config's `model`. */
  model?: BaseChatModel | string;
  /** Shared server manager; by default the actor makes its own (cwd = sandbox root). */
  serverManager?: ServerManager;
  /**
   * OS confinement of the stdio servers the actor starts (its own server manager only); each
   * field wins over the config's `sandbox.confine` / `sandbox.network`.
   */
  confinement?: ActorConfinementOptions;
  /** A checkpoint saver; wins over the config's `checkpointer`. */
  checkpointer?: BaseCheckpointSaver;
  /**
   * Shared snapshot store of a thread-bound actor; wins over the config's `snapshots`. See
   * README "Running on several machines".
   */
  snapshots?: { remote: string };
  /** Folder for run sandboxes (default: the project's folder of the per-user state folder, `agentsStateDir()`). */
  sandboxBaseDir?: string;
  /** Leave the sandbox folder in place on deactivate (to inspect or copy results). */
  keepSandbox?: boolean;
  /**
   * The `threadId` was made up for this activation only (`agents actor run` without `--thread`):
   * its sandbox and thread record are removed on deactivate like a temporary sandbox, unless
   * `keepSandbox` (here or in `deactivate()`). Default false: a thread's sandbox is kept.
   */
  ephemeralThread?: boolean;
  /**
   * Binds the actor to one conversation thread, so its files can be rolled back later. On
   * `activate()` the actor opens that thread's own sandbox in the workspace's folder of the
   * per-user state folder (`threadSandboxDir`, outside the project): made on the thread's first
   * run, reopened on later runs and by later processes (same tree and snapshot store, continuing
   * from the latest snapshot), held with a run lock while active. `deactivate()` stops the servers but keeps the
   * sandbox, so `agents checkpoints|rollback|sandbox diff --thread` work after the run;
   * `agents sandbox remove --thread` (or `removeThreadSandbox`) deletes it. `run()` defaults to
   * this thread and refuses another one (the sandbox belongs to this thread).
   *
   * With a memory checkpointer the thread dies with the process, so a temporary sandbox is used
   * and removed on deactivate, as without `threadId`. Without `threadId`, every run of the
   * activation shares one temporary sandbox, removed on deactivate unless `keepSandbox`.
   */
  threadId?: string;
  /** Middleware placed outermost (outside the actor's own audit log). */
  middleware?: readonly ToolMiddleware[];
  /**
   * Records the runs into this cassette recorder: every model turn and every exchange with the
   * actor's MCP servers, the sandbox written as `.` (docs/replay.md). The caller saves it.
   */
  record?: CassetteRecorder;
  /**
   * The safety policy; wins over the config's `policy:`. Without either, the actor uses the
   * default policy: mode `ask` (read-only tools run, every other call waits for approval).
   */
  policy?: PolicyInput;
  /** Audit file (default `<workspace>/audit.jsonl`). */
  auditFile?: string;
  /** Server stderr and lifecycle logs. */
  logger?: ServerLogger;
  /** Non-fatal problems: Agent Skill spec violations, tools that vanished on refresh. */
  onWarning?: (message: string) => void;
  /**
   * What the sandbox starts from; wins over the config's `sandbox.from`. Default `worktree`:
   * the project's files as they are now (uncommitted edits and untracked, not ignored files
   * included; the user's repo is only read). `head`: the last commit. Or a branch, tag or sha
   * (`REVISION_NOT_FOUND` when it names no commit). A thread's sandbox keeps the base of its
   * first run.
   */
  sandboxFrom?: SandboxFrom;
  /**
   * Warnings about the sandbox's base as data (e.g. `uncommitted-changes-left-out` for `head`
   * with a dirty tree), once, when the sandbox is made; the sentence also goes to `onWarning`
   * (with neither, to `process.emitWarning`). Also on `actor.sandbox.baseWarnings`.
   */
  onSandboxWarning?: (warning: SandboxWarning) => void;
  /**
   * Offer the actor's MCP servers sampling and elicitation, forwarded to the MCP client behind
   * each served call (`agents serve` sets it). Default false: in a graph run nothing answers
   * them, so they are not declared. Ignored with a shared `serverManager`.
   */
  forwardClientRequests?: boolean;
  /**
   * Model turns one run may take; wins over the config's `maxTurns` (default 200). At the limit
   * the run pauses: {@link ActorInstance.run} yields a `turn-limit` event and ends, the thread
   * keeps every result, and `resume({ type: 'continue' }, { threadId })` goes on for up to
   * `maxTurns` more turns. Throws `INVALID_ARGUMENTS` unless a whole number from 1 to 100,000.
   */
  maxTurns?: number;
  /**
   * Tool calls one run may make (wins over the config's `maxToolCalls`; default no limit) and
   * its wall time in milliseconds (`maxTimeMs`, wins over the config's). Checked before each
   * model turn; a spent budget pauses the run like `maxTurns` (a `turn-limit` event whose
   * `limit` says which). Throws `INVALID_ARGUMENTS` for a bad value.
   */
  maxToolCalls?: number;
  maxTimeMs?: number;
  /**
   * @deprecated Use `maxTimeMs`. A duration (`10m`, `90s`, `500ms`) or a number of seconds; still
   * read, with a deprecation warning. Setting both is `INVALID_ARGUMENTS`.
   */
  maxTime?: string | number;
}

/** One thing that happened during {@link ActorInstance.run}, in order. */
export type ActorRunEvent =
  | { type: 'tool-call-start'; toolCallId: string; name: string; args: Record<string, unknown> }
  | {
      type: 'tool-call-end';
      toolCallId: string;
      name: string;
      isError: boolean;
      text: string;
      change?: ChangeRecord;
    }
  | { type: 'message'; text: string }
  /** A progress notification of a running tool call (MCP `notifications/progress`). */
  | {
      type: 'tool-progress';
      toolCallId: string;
      name: string;
      progress: number;
      total?: number;
      message?: string;
    }
  /**
   * A tool call sent again: a read-only call whose server died under it and was restarted
   * (`server-restarted`; write-class calls are never repeated), or a lost HTTP session.
   */
  | {
      type: 'tool-retry';
      toolCallId: string;
      name: string;
      reason: 'server-restarted' | 'session-lost';
      message: string;
    }
  /** The run reached `maxTurns` and paused; resume with `{ type: 'continue' }` to go on. */
  | ({ type: 'turn-limit' } & Omit<TurnLimitPause, 'type'>)
  | {
      type: 'interrupt';
      /** The raw `__interrupt__` update (LangGraph `Interrupt` objects). */
      value: unknown;
      /** The approval requests among them (the run waits for an answer to each). */
      approvals?: PendingApproval[];
      /** Questions a 2026-07-28 server asked before running a tool (answer each, then resume). */
      inputs?: PendingInput[];
    };

/** Options for {@link ActorInstance.run}. */
export interface ActorRunOptions {
  /** Conversation thread (default: a new random one). */
  threadId?: string;
  signal?: AbortSignal;
}

/**
 * An actor: skills + model + instructions + sandbox + checkpointer, as a LangGraph graph.
 * `activate()` starts its servers and sandbox; `deactivate()` stops everything (also via
 * `await using`).
 */
export interface ActorInstance extends AsyncDisposable {
  readonly name: string;
  /** The parsed config (defaults filled in). */
  readonly config: ActorConfig & { name: string };
  readonly active: boolean;
  /**
   * Starts the actor: sandbox (when enabled), its skills' servers (in parallel), the
   * checkpointer, then flattens the tools and compiles the graph. Idempotent while active.
   * On failure everything started is undone (servers stopped, files closed, locks released, a
   * sandbox or thread record it made removed; a reopened thread's sandbox stays) and the error
   * (with its code from ADR-0027 "AEP tool contributions resolve to MCP", or
   * `SERVER_START_FAILED`, `SANDBOX_FAILED`, ...) is thrown.
   */
  activate(options?: ActivateOptions): Promise<void>;
  /**
   * Stops servers (reverse order), closes the checkpointer and removes the sandbox; a
   * thread-bound actor (`CreateActorOptions.threadId`) keeps its thread's sandbox, and
   * `keepSandbox` keeps any. Undoes exactly what `activate()` did, in reverse. Idempotent.
   */
  deactivate(options?: DeactivateOptions): Promise<void>;
  /** The current tools as LangChain StructuredTools (middleware applied). Active only. */
  tools(): StructuredTool[];
  /** The current flattened tool entries (descriptors with capabilities). Active only. */
  entries(): readonly ToolEntry[];
  /**
   * The middleware chain around every tool call, as `createToolPipeline` orders it (outermost
   * first: yours, audit, allowed-tools, policy, output budget, path rewrite, change tracking),
   * for serving the same tools over MCP.
   * Active only. The policy asks through LangGraph `interrupt()` in a graph; outside one it asks
   * the approver bound with `runWithApprover` (the MCP server asks its client), and with none an
   * `ask` call is refused with a message saying so.
   */
  middleware(): readonly ToolMiddleware[];
  /** The parsed safety policy (the config's, or the default: mode `ask`). */
  readonly policy: Policy;
  /** The JSON-lines audit file every tool call is recorded in (`agents audit` reads it). */
  readonly auditFile: string;
  /** Calls `listener` whenever the flattened tool set changes; returns an unsubscribe function. Active only. */
  onToolsChanged(listener: () => void): () => void;
  /**
   * The status, pid and lifecycle events of the actor's MCP servers, e.g. to stop offering the
   * tools of a server that is down when serving them over MCP. Active only.
   */
  servers(): ActorServers;
  /** The compiled graph. Active only (throws `CLOSED` otherwise). */
  readonly graph: ActorGraph;
  /** The sandbox, when enabled and active. */
  readonly sandbox: Sandbox | undefined;
  /** How the actor's own stdio servers are confined, while active. */
  readonly confinement: ActorConfinement | undefined;
  /**
   * What the running activation is made of (sandbox backend, confinement, checkpoint store,
   * servers, tool set) and disposes of on `deactivate`; undefined while inactive. A caller may
   * hand it steps of its own (`runtime.defer`) to run first when the actor stops.
   */
  readonly runtime: AgentsRuntime | undefined;
  /** Agent Skills loaded for this actor. Active only. */
  readonly agentSkills: readonly AgentSkill[];
  readonly activation: SkillActivation;
  /**
   * Runs one user input on a thread and yields tool calls, results and the answer as they
   * happen. Aborting `signal` stops the run (the actor stays active).
   */
  run(input: string, options?: ActorRunOptions): AsyncGenerator<ActorRunEvent, void, undefined>;
  /**
   * Resumes a thread paused for approval with `Command({ resume })` and yields its events like
   * {@link run}. `resume` is an `ApprovalResponse` (`{ type: 'approve' | 'edit' | 'reject', ... }`)
   * or, when several calls wait, a map from interrupt id to answer ({@link toResumeValue}).
   * `options.threadId` is required.
   */
  resume(
    resume: unknown,
    options: ActorRunOptions & { threadId: string },
  ): AsyncGenerator<ActorRunEvent, void, undefined>;
}

/** Options of {@link ActorInstance.activate}. */
export interface ActivateOptions {
  signal?: AbortSignal;
  /**
   * Make the chat model first, before anything starts (`agents actor run` does): a missing
   * script or provider package then fails the activation with nothing made. Default false: the
   * model is made on the first agent turn, so serving the tools never needs it.
   */
  checkModel?: boolean;
  /**
   * Wraps each slow step of the start (making the sandbox, starting the servers) with its
   * description, e.g. to show a spinner: the CLI passes its progress display's `step`.
   */
  step?: ActivationStep;
}

/** Runs one named step of an activation (see {@link ActivateOptions.step}). */
export type ActivationStep = <T>(text: string, work: () => Promise<T>) => Promise<T>;

/** Options of {@link ActorInstance.deactivate}. */
export interface DeactivateOptions {
  /** Keep the sandbox this time (e.g. a run of an `ephemeralThread` that paused for approval). */
  keepSandbox?: boolean;
}

/** A read-only view of an active actor's MCP servers (see {@link ActorInstance.servers}). */
export interface ActorServers extends ServerEventSource {
  /** The server's status (`ready`, `restarting`, `failed`, ...), or undefined for an unknown name. */
  status(serverName: string): ManagedServerStatus | undefined;
  /** The process id of a running stdio server. */
  pid(serverName: string): number | undefined;
  /** Names of the servers the actor's server manager holds. */
  names(): string[];
}
