/**
 * Regressions surface the day they happen (issue 37): every ratio with a goal, printed beside
 * its goal and the figure of the last committed full run, and one `REGRESSED` line per row past
 * its goal. Nothing here fails a build (no timing assertions); CI's `bench:quick` prints the
 * lines, and a quick run's few samples make them a smoke signal, not a verdict.
 *
 * The last committed figures live in `bench/goal-figures.json`, written by a full, complete
 * `npm run bench` (the run that also writes `bench/results.md`).
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import type { CallScenarioResult } from './calls.js';
import type { RevisionsRun } from './revisions.js';
import { STACK } from './stacks.js';

/** One ratio with a goal: it meets the goal when `value <= goal` (`< goal` when `strict`). */
export interface GoalRow {
  name: string;
  value: number;
  goal: number;
  strict?: boolean;
}

/** Direct invoke ≤ 1.2× raw on in-memory rows; through ToolNode < 1× the peer on every row. */
export function callGoalRows(results: readonly CallScenarioResult[]): GoalRow[] {
  const rows: GoalRow[] = [];
  for (const result of results) {
    const get = (name: string): number => result.medians.get(name) ?? Number.NaN;
    const where = `${result.transport}, ${result.payload}`;
    if (result.transport === 'in-memory') {
      rows.push({
        name: `calls ${where}: ours direct / raw SDK`,
        value: get(STACK.oursDirect) / get(STACK.raw),
        goal: 1.2,
      });
    }
    rows.push({
      name: `calls ${where}: ours ToolNode / peer ToolNode`,
      value: get(STACK.oursToolNode) / get(STACK.peerToolNode),
      goal: 1,
      strict: true,
    });
  }
  return rows;
}

/** Through ToolNode, ours on 2026-07-28 against the peer on 2025-11-25: < 1×. */
export function revisionGoalRows(run: RevisionsRun): GoalRow[] {
  return [
    {
      name: 'revisions: ours ToolNode 2026-07-28 / peer ToolNode 2025-11-25',
      value: run.peer.ours / run.peer.peer,
      goal: 1,
      strict: true,
    },
  ];
}

/**
 * How a bench script run by bench/run.ts hands it a goal row: a line of its output made of this
 * prefix, the row as JSON and ` -->` (an HTML comment, unseen in the rendered report).
 */
export const GOAL_ROW_PREFIX = '<!-- goal-row ';

/** The goal rows a script printed (see {@link GOAL_ROW_PREFIX}). */
export function goalRowsIn(output: string): GoalRow[] {
  return output
    .split('\n')
    .filter((line) => line.startsWith(GOAL_ROW_PREFIX) && line.endsWith(' -->'))
    .map((line) => JSON.parse(line.slice(GOAL_ROW_PREFIX.length, -' -->'.length)) as GoalRow);
}

function meets(row: GoalRow): boolean {
  return row.strict === true ? row.value < row.goal : row.value <= row.goal;
}

/** The figures of the last committed full run, by row name (empty when there are none). */
export function readLastFigures(file: string): Record<string, number> {
  if (!existsSync(file)) return {};
  try {
    const parsed: unknown = JSON.parse(readFileSync(file, 'utf8'));
    return typeof parsed === 'object' && parsed !== null ? (parsed as Record<string, number>) : {};
  } catch {
    return {};
  }
}

/** Writes this run's figures as the last committed ones (a full, complete run only). */
export function writeLastFigures(file: string, rows: readonly GoalRow[]): void {
  const figures = Object.fromEntries(rows.map((row) => [row.name, Number(row.value.toFixed(3))]));
  writeFileSync(file, `${JSON.stringify(figures, null, 2)}\n`);
}

/**
 * One line per row (ratio, goal, last committed figure), then one `REGRESSED` line per row past
 * its goal.
 */
export function goalLines(rows: readonly GoalRow[], last: Record<string, number>): string[] {
  const ratio = (value: number | undefined): string =>
    value === undefined || Number.isNaN(value) ? 'none' : `${value.toFixed(2)}×`;
  const lines = rows.map(
    (row) =>
      `goal ${row.name}: ${ratio(row.value)} (goal ${row.strict === true ? '<' : '≤'} ${row.goal}×, ` +
      `last committed ${ratio(last[row.name])})`,
  );
  for (const row of rows) {
    if (meets(row)) continue;
    lines.push(
      `REGRESSED ${row.name}: ${ratio(row.value)}, past its goal of ${row.goal}× ` +
        `(last committed ${ratio(last[row.name])})`,
    );
  }
  return lines;
}
