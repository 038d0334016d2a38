import { AgentsError, AgentsErrorCode } from '../errors.js';
import type { AgentsErrorCode as AgentsErrorCodeType } from '../errors.js';

/** Exit codes of the `agents` binary. Documented in `agents --help`. */
export const ExitCode = {
  Ok: 0,
  /** Anything without a more specific code. */
  Failure: 1,
  /** Bad command line (unknown command or option, missing argument). */
  Usage: 2,
  /** A config file is broken or missing. */
  Config: 3,
  /**
   * A named server, tool, skill, actor or checkpoint does not exist; also "nothing to undo"
   * (`sandbox apply --undo` and `rollback --undo` alike).
   */
  NotFound: 4,
  /**
   * A server did not start, answer or speak the protocol; or it needs a login (`AUTH_REQUIRED`,
   * also a scope step-up during a run: the run pauses and the login line is printed).
   */
  Server: 5,
  /** A tool is disabled, absent, failed, or got bad arguments. */
  Tool: 6,
  /** The sandbox, a path or a rollback failed. */
  Sandbox: 7,
  /** The safety policy refused, or a run waits for an approval. */
  Policy: 8,
  /**
   * A run reached its `maxTurns`, `maxToolCalls` or `maxTimeMs` and paused; its thread is saved and
   * `agents actor resume NAME --thread ID --continue` goes on.
   */
  TurnLimit: 9,
  /**
   * The thread is busy: another run, rollback or worker holds it (`RUN_ACTIVE`). Try again when
   * it is done; nothing was changed.
   */
  Busy: 10,
  /**
   * A replay left its cassette (`REPLAY_DIVERGED`): a request, argument or model turn the
   * recording does not have, or a different tree; the message names the first step.
   */
  ReplayDiverged: 11,
  /** Timed out. */
  Timeout: 124,
  /** Interrupted (Ctrl-C) or aborted. */
  Interrupted: 130,
} as const;
export type ExitCode = (typeof ExitCode)[keyof typeof ExitCode];

/** The one place error codes become exit codes. */
const BY_ERROR_CODE: Record<AgentsErrorCodeType, ExitCode> = {
  [AgentsErrorCode.ConfigInvalid]: ExitCode.Config,
  [AgentsErrorCode.ConfigNotFound]: ExitCode.Config,
  [AgentsErrorCode.ServerStartFailed]: ExitCode.Server,
  [AgentsErrorCode.ServerUnavailable]: ExitCode.Server,
  [AgentsErrorCode.ServerNotFound]: ExitCode.NotFound,
  [AgentsErrorCode.AuthRequired]: ExitCode.Server,
  [AgentsErrorCode.ProtocolError]: ExitCode.Server,
  [AgentsErrorCode.ToolNotFound]: ExitCode.NotFound,
  [AgentsErrorCode.ToolUnavailable]: ExitCode.Tool,
  [AgentsErrorCode.ToolDisabled]: ExitCode.Tool,
  [AgentsErrorCode.ToolNameCollision]: ExitCode.Config,
  [AgentsErrorCode.ToolCallFailed]: ExitCode.Tool,
  [AgentsErrorCode.InvalidArguments]: ExitCode.Usage,
  [AgentsErrorCode.PathOutsideSandbox]: ExitCode.Sandbox,
  [AgentsErrorCode.SandboxFailed]: ExitCode.Sandbox,
  [AgentsErrorCode.RevisionNotFound]: ExitCode.NotFound,
  [AgentsErrorCode.ConfinementUnavailable]: ExitCode.Sandbox,
  [AgentsErrorCode.NetworkRefused]: ExitCode.Server,
  [AgentsErrorCode.CheckpointNotFound]: ExitCode.NotFound,
  [AgentsErrorCode.RunActive]: ExitCode.Busy,
  [AgentsErrorCode.RollbackFailed]: ExitCode.Sandbox,
  [AgentsErrorCode.SkillNotFound]: ExitCode.NotFound,
  [AgentsErrorCode.ActorNotFound]: ExitCode.NotFound,
  [AgentsErrorCode.PolicyDenied]: ExitCode.Policy,
  [AgentsErrorCode.Aborted]: ExitCode.Interrupted,
  [AgentsErrorCode.Timeout]: ExitCode.Timeout,
  [AgentsErrorCode.Closed]: ExitCode.Failure,
  [AgentsErrorCode.CassetteInvalid]: ExitCode.Config,
  [AgentsErrorCode.ReplayDiverged]: ExitCode.ReplayDiverged,
};

/** Maps any thrown value to the exit code `agents` ends with. */
export function exitCodeFor(error: unknown): ExitCode {
  if (AgentsError.isInstance(error)) return BY_ERROR_CODE[error.code] ?? ExitCode.Failure;
  if (error instanceof AggregateError) {
    const first = error.errors.find((item) => AgentsError.isInstance(item));
    return first === undefined ? ExitCode.Failure : exitCodeFor(first);
  }
  if (error instanceof Error && error.name === 'AbortError') return ExitCode.Interrupted;
  return ExitCode.Failure;
}

/** Text for `agents --help`. */
export const EXIT_CODE_HELP = `Exit codes: 0 ok, 1 failure, 2 usage, 3 config, 4 not found (or nothing to undo),
5 server (or a login needed: the run paused), 6 tool, 7 sandbox/path (or a delivery conflict),
8 policy (or waiting for approval: the run paused), 9 turn limit or budget reached (resumable),
10 thread busy (another run, rollback or worker has it), 11 replay diverged from its cassette,
124 timeout, 130 interrupted.`;
