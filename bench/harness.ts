/**
 * Measurement helpers: interleaved rounds so that machine noise (a shared, 2-core box) hits
 * every contender alike, per-call samples, medians in microseconds.
 */
import { runInNewContext } from 'node:vm';
import { setFlagsFromString } from 'node:v8';

/** One thing being measured: an async call made once per sample. */
export interface Contender {
  name: string;
  call: () => Promise<unknown>;
}

/** How much to measure. */
export interface CompareOptions {
  /** Calls per contender before measuring (JIT, caches). */
  warmup: number;
  /** Rounds; each round runs every contender `perRound` times, in a rotated order. */
  rounds: number;
  perRound: number;
}

/** Per-contender samples in microseconds. */
export type Samples = Map<string, number[]>;

/** Microseconds since an arbitrary origin, with sub-microsecond resolution. */
export function nowMicros(): number {
  return Number(process.hrtime.bigint()) / 1_000;
}

/** Median of a list of numbers (NaN for an empty list). */
export function median(values: readonly number[]): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((left, right) => left - right);
  const middle = sorted.length >> 1;
  return sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
}

/** The p-th percentile (0–100), nearest rank. */
export function percentile(values: readonly number[], p: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((left, right) => left - right);
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[rank]!;
}

/**
 * Runs contenders in interleaved rounds (the order rotates each round) and returns every
 * per-call sample. Calls are made one after another, never concurrently.
 */
export async function compare(
  contenders: readonly Contender[],
  options: CompareOptions,
): Promise<Samples> {
  for (const contender of contenders) {
    for (let index = 0; index < options.warmup; index++) await contender.call();
  }
  const samples: Samples = new Map(contenders.map((contender) => [contender.name, []]));
  for (let round = 0; round < options.rounds; round++) {
    for (let offset = 0; offset < contenders.length; offset++) {
      const contender = contenders[(round + offset) % contenders.length]!;
      const list = samples.get(contender.name)!;
      for (let index = 0; index < options.perRound; index++) {
        const started = nowMicros();
        await contender.call();
        list.push(nowMicros() - started);
      }
    }
  }
  return samples;
}

/** Medians per contender. */
export function medians(samples: Samples): Map<string, number> {
  return new Map([...samples].map(([name, list]) => [name, median(list)]));
}

/**
 * Returns a working `gc()`: `global.gc` under `--expose-gc`, otherwise one obtained by setting
 * the V8 flag at run time (a fresh context then sees `gc`), so `npm run bench` needs no flags.
 */
export function getGc(): () => void {
  const existing: unknown = (globalThis as Record<string, unknown>)['gc'];
  if (typeof existing === 'function') return () => void (existing as () => unknown)();
  setFlagsFromString('--expose-gc');
  const fromContext: unknown = runInNewContext('gc');
  if (typeof fromContext !== 'function') throw new Error('could not obtain gc()');
  return () => void (fromContext as () => unknown)();
}

/** Formats microseconds for a table: integers, thousands separated. */
export function formatMicros(value: number): string {
  if (!Number.isFinite(value)) return 'n/a';
  return value >= 100 ? Math.round(value).toLocaleString('en-US') : value.toFixed(1);
}

/** Formats a ratio like `1.23×`. */
export function formatRatio(value: number): string {
  return Number.isFinite(value) ? `${value.toFixed(2)}×` : 'n/a';
}

/** A markdown table. */
export function table(header: readonly string[], rows: readonly (readonly string[])[]): string {
  const align = header.map((_, index) => (index === 0 ? '---' : '---:'));
  return [header, align, ...rows].map((row) => `| ${row.join(' | ')} |`).join('\n');
}

/**
 * Rounds for a bench script: `full` normally, at most `quick` when `bench/run.ts --quick` runs
 * it (it sets `BENCH_QUICK=1`): a smoke run that proves the script still works, not a figure.
 */
export function benchRounds(full: number, quick = 2): number {
  return process.env['BENCH_QUICK'] === '1' ? Math.min(full, quick) : full;
}
