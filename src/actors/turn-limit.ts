import { interrupt } from '@langchain/langgraph';
import { z } from 'zod';

/**
 * Supersteps LangGraph counts per model turn in the actor graph: the agent step, then one tools
 * step. Parallel calls do not add steps: each call is its own `Send` task, and all tasks of a
 * turn run in the same superstep.
 */
const STEPS_PER_TURN = 2;
/** Room for the step that pauses at the limit, a resumed tools step and the input step. */
const SPARE_STEPS = 5;

/**
 * The LangGraph `recursionLimit` (supersteps per invocation) that lets a run reach `maxTurns`
 * model turns. The turn counter in state pauses the run at the limit first, so LangGraph's own
 * `GraphRecursionError` is only a backstop (a graph that loops without calling the model).
 */
export function recursionLimitFor(maxTurns: number): number {
  return maxTurns * STEPS_PER_TURN + SPARE_STEPS;
}

/** The value of the interrupt a run pauses with at its turn limit. */
export interface TurnLimitPause {
  type: 'turn-limit';
  /**
   * Which limit stopped the run: `turns` (`maxTurns`), `tool-calls` (`maxToolCalls`) or `time`
   * (`maxTimeMs`). Absent in pauses stored before budgets existed: `turns`.
   */
  limit?: 'turns' | 'tool-calls' | 'time';
  /** Model turns this run took. */
  turns: number;
  maxTurns: number;
  /** Tool calls this run made (budget pauses). */
  toolCalls?: number;
  /** Wall time this run took, ms (budget pauses). */
  elapsedMs?: number;
  /** What to tell the user. */
  message: string;
}

/** The resume value that continues a run paused at its turn limit (counting turns afresh). */
export interface TurnLimitContinue {
  type: 'continue';
}

/** True for the value of an interrupt made by {@link pauseAtTurnLimit}. */
export function isTurnLimitPause(value: unknown): value is TurnLimitPause {
  return (
    typeof value === 'object' &&
    value !== null &&
    (value as { type?: unknown }).type === 'turn-limit' &&
    typeof (value as { maxTurns?: unknown }).maxTurns === 'number'
  );
}

/** The turn-limit pause among an `__interrupt__` value's interrupts, if any. */
export function turnLimitPauseOf(interrupts: unknown): TurnLimitPause | undefined {
  if (!Array.isArray(interrupts)) return undefined;
  for (const item of interrupts) {
    if (typeof item !== 'object' || item === null || !('value' in item)) continue;
    const value: unknown = item.value;
    if (isTurnLimitPause(value)) return value;
  }
  return undefined;
}

/**
 * State field counting the model turns of the current run. `run()` writes 0 with the user's
 * input; the agent node adds one per turn. A plain number: only the agent node writes it.
 */
export const turnStateFields = {
  runTurns: z
    .number()
    .int()
    .min(0)
    .default(0)
    .describe('Model turns since the latest user input (or since continuing at the turn limit).'),
};

/**
 * Called by the agent node before it calls the model. Below the limit it returns the turn
 * count to write after this turn. At the limit it pauses the run with a LangGraph `interrupt`
 * (the thread stays resumable: its checkpoint has every tool result), and when the run is
 * resumed with `{ type: 'continue' }` it counts afresh from this turn.
 */
export function pauseAtTurnLimit(turnsSoFar: number, maxTurns: number, actorName: string): number {
  if (turnsSoFar < maxTurns) return turnsSoFar + 1;
  const pause: TurnLimitPause = {
    type: 'turn-limit',
    limit: 'turns',
    turns: turnsSoFar,
    maxTurns,
    message:
      `Actor "${actorName}" stopped after ${turnsSoFar} model turns (maxTurns ${maxTurns}); ` +
      'the thread is saved and can be continued.',
  };
  // The resume value is not inspected: any answer to this pause means "go on".
  interrupt(pause);
  return 1;
}

/** Checks a `maxTurns` value given in code or on the command line. */
export function isValidMaxTurns(value: number): boolean {
  return Number.isInteger(value) && value >= 1 && value <= 100_000;
}

/** The `{ type: 'continue' }` resume value (goes on past a turn limit, or after a crash). */
export function isContinue(value: unknown): boolean {
  return (
    typeof value === 'object' && value !== null && (value as { type?: unknown }).type === 'continue'
  );
}
