import { interrupt } from '@langchain/langgraph';
import { parseDuration } from '../config/duration.js';
import { AgentsError, AgentsErrorCode } from '../errors.js';
import type { TurnLimitPause } from './turn-limit.js';

/** The budgets of one actor run besides `maxTurns` (see `ActorSchema`). */
export interface RunBudgetSettings {
  /** Tool calls one run may make. */
  maxToolCalls?: number | undefined;
  /** Wall time one run may take, in milliseconds. */
  maxTimeMs?: number | undefined;
}

/** Where a run's time budget is set: `maxTimeMs`, or the deprecated `maxTime` (a duration). */
export interface MaxTimeSetting {
  maxTimeMs?: number | undefined;
  /** Deprecated: `10m`, `90s`, `500ms` or a number of seconds. */
  maxTime?: string | number | undefined;
}

/**
 * The milliseconds of a time budget: `maxTimeMs`, or the deprecated `maxTime` converted (with a
 * deprecation warning through `warn`, naming `where` and the `maxTimeMs` value to write instead).
 * Both set is `INVALID_ARGUMENTS`: which one wins would be a guess.
 */
export function resolveMaxTimeMs(
  setting: MaxTimeSetting,
  where: string,
  warn: (message: string) => void,
): number | undefined {
  const { maxTimeMs, maxTime } = setting;
  if (maxTime === undefined) return maxTimeMs;
  if (maxTimeMs !== undefined) {
    throw new AgentsError(
      AgentsErrorCode.InvalidArguments,
      `${where} sets both maxTimeMs and the deprecated maxTime; keep only maxTimeMs (milliseconds).`,
      { details: { where, maxTimeMs, maxTime } },
    );
  }
  const ms = parseDuration(maxTime, `maxTime of ${where}`);
  warn(
    `${where}: "maxTime" is deprecated; write maxTimeMs: ${Math.round(ms)} (milliseconds, like every other ...Ms setting). The old key still works for now.`,
  );
  return Math.round(ms);
}

/** What one run has spent so far. */
interface Spent {
  toolCalls: number;
  startedAt: number;
}

/** Per-thread budget accounting of an actor's runs; see {@link createRunBudgets}. */
export interface RunBudgets {
  /** A run (or a resume) starts on the thread: budgets count afresh from here. */
  start(threadId: string): void;
  /** The run on the thread ended; forget it. */
  end(threadId: string): void;
  /** The model asked for `calls` tool calls on the thread. */
  countCalls(threadId: string, calls: number): void;
  /**
   * Called by the agent node before a model turn: pauses the run with a LangGraph `interrupt`
   * (a {@link TurnLimitPause} with `limit` `tool-calls` or `time`) when a budget is spent. On
   * resume the budgets count afresh.
   */
  check(threadId: string, turns: number, maxTurns: number): void;
}

/**
 * Checks the settings (a bad `maxToolCalls` or `maxTimeMs` throws `INVALID_ARGUMENTS` naming the
 * actor) and returns the accounting the actor's agent node uses. Budgets are checked between
 * model turns, so a run stops cleanly with every result saved: the parallel calls of the turn
 * that crosses `maxToolCalls` all run, and a tool call running at `maxTimeMs` is not cut off.
 */
export function createRunBudgets(settings: RunBudgetSettings, actorName: string): RunBudgets {
  const { maxToolCalls } = settings;
  if (maxToolCalls !== undefined && (!Number.isInteger(maxToolCalls) || maxToolCalls < 1)) {
    throw new AgentsError(
      AgentsErrorCode.InvalidArguments,
      `maxToolCalls ${maxToolCalls} of actor "${actorName}" is not a whole number of at least 1.`,
      { details: { actor: actorName, maxToolCalls } },
    );
  }
  const { maxTimeMs } = settings;
  if (maxTimeMs !== undefined && (!Number.isFinite(maxTimeMs) || maxTimeMs <= 0)) {
    throw new AgentsError(
      AgentsErrorCode.InvalidArguments,
      `maxTimeMs ${maxTimeMs} of actor "${actorName}" is not a positive number of milliseconds.`,
      { details: { actor: actorName, maxTimeMs } },
    );
  }
  const runs = new Map<string, Spent>();
  const spentOn = (threadId: string): Spent => {
    let spent = runs.get(threadId);
    // A graph invoked directly (not through run()) counts from its first turn.
    if (spent === undefined) {
      spent = { toolCalls: 0, startedAt: performance.now() };
      runs.set(threadId, spent);
    }
    return spent;
  };
  return {
    start(threadId) {
      runs.set(threadId, { toolCalls: 0, startedAt: performance.now() });
    },
    end(threadId) {
      runs.delete(threadId);
    },
    countCalls(threadId, calls) {
      if (calls > 0) spentOn(threadId).toolCalls += calls;
    },
    check(threadId, turns, maxTurns) {
      if (maxToolCalls === undefined && maxTimeMs === undefined) return;
      const spent = spentOn(threadId);
      const elapsedMs = Math.round(performance.now() - spent.startedAt);
      const overCalls = maxToolCalls !== undefined && spent.toolCalls >= maxToolCalls;
      const overTime = maxTimeMs !== undefined && elapsedMs >= maxTimeMs;
      if (!overCalls && !overTime) return;
      const what = overCalls
        ? `${spent.toolCalls} tool calls (maxToolCalls ${maxToolCalls})`
        : `${(elapsedMs / 1000).toFixed(1)} s (maxTimeMs ${maxTimeMs})`;
      const pause: TurnLimitPause = {
        type: 'turn-limit',
        limit: overCalls ? 'tool-calls' : 'time',
        turns,
        maxTurns,
        toolCalls: spent.toolCalls,
        elapsedMs,
        message: `Actor "${actorName}" stopped after ${what}; the thread is saved and can be continued.`,
      };
      interrupt(pause);
      // Resumed ("continue"): a fresh budget from here.
      runs.set(threadId, { toolCalls: 0, startedAt: performance.now() });
    },
  };
}
