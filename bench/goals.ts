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
import type { DiscoveryResult } from './discovery.js';
import type { RevisionsRun } from './revisions.js';
import { STACK } from './stacks.js';

/** One ratio with a goal: it meets the goal when `value <= goal` (`< goal` when `strict`). */
export interface GoalRow {
  name: string;
  value: number;
  goal: number;
  strict?: boolean;
  /** Unit of `value` and `goal` when not a ratio (`×`), e.g. `ms`. */
  unit?: string;
}

/** How a bench script run as a child states a goal row: this prefix, then the row as JSON. */
export const GOAL_ROW_PREFIX = 'goal-row ';

/** The goal rows a child bench script printed (see {@link GOAL_ROW_PREFIX}). */
export function printedGoalRows(output: string): GoalRow[] {
  const rows: GoalRow[] = [];
  for (const line of output.split('\n')) {
    if (!line.startsWith(GOAL_ROW_PREFIX)) continue;
    try {
      const row = JSON.parse(line.slice(GOAL_ROW_PREFIX.length)) as GoalRow;
      if (typeof row.name === 'string' && typeof row.value === 'number') rows.push(row);
    } catch {
      // Not a row: the line stays in the report as printed.
    }
  }
  return rows;
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

/** Through ToolNode, ours on 2026-07-28 and on 2025-11-25 against the peer on 2025-11-25: < 1×. */
export function revisionGoalRows(run: RevisionsRun): GoalRow[] {
  return [
    {
      name: 'revisions: ours ToolNode 2026-07-28 / peer ToolNode 2025-11-25',
      value: run.peer.ours / run.peer.peer,
      goal: 1,
      strict: true,
    },
    {
      name: 'revisions: ours ToolNode 2025-11-25 / peer ToolNode 2025-11-25',
      value: run.peer.ours2025 / run.peer.peer,
      goal: 1,
      strict: true,
    },
  ];
}

/** Listing and wrapping 500 tools: ours ≤ 1× `loadMcpTools` on every transport. */
export function discoveryGoalRows(results: readonly DiscoveryResult[]): GoalRow[] {
  return results.map((result) => ({
    name: `discovery ${result.transport}, ${result.tools} tools: ours / peer`,
    value: result.ours / result.peer,
    goal: 1,
  }));
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
  const ratio = (value: number | undefined, unit = '×'): string =>
    value === undefined || Number.isNaN(value)
      ? 'none'
      : `${value.toFixed(2)}${unit === '×' ? unit : ` ${unit}`}`;
  const lines = rows.map(
    (row) =>
      `goal ${row.name}: ${ratio(row.value, row.unit)} (goal ${row.strict === true ? '<' : '≤'} ${ratio(row.goal, row.unit)}, ` +
      `last committed ${ratio(last[row.name], row.unit)})`,
  );
  for (const row of rows) {
    if (meets(row)) continue;
    lines.push(
      `REGRESSED ${row.name}: ${ratio(row.value, row.unit)}, past its goal of ${ratio(row.goal, row.unit)} ` +
        `(last committed ${ratio(last[row.name], row.unit)})`,
    );
  }
  return lines;
}
