import { formatSkippedPaths } from '../sandbox/skipped-paths.js';
import pc from 'picocolors';
import type { ActorRunEvent } from '../actors/actor-types.js';
import { CONFINEMENT_REFUSAL_PREFIX } from '../confinement/confinement.js';
import type { CommandContext } from './command.js';
import { isInteractive, println, wantsColor } from './output.js';

/** Prints the events of an actor run, as they come. */
export interface RunOutput {
  event(event: ActorRunEvent): void;
  /** Stops the status line and its timer. Idempotent. */
  close(): void;
}

/** Options for {@link createRunOutput}; the defaults read the process. */
export interface RunOutputOptions {
  /** Environment for `NO_COLOR` and `TERM` (default `process.env`). */
  env?: NodeJS.ProcessEnv;
  /** Clock in ms (default `Date.now`). */
  now?: () => number;
  /** Redraw period of the status line on a terminal, ms (default 100). */
  tickMs?: number;
}

const MAX_SHOWN = 300;
const SPINNER = ['⠋', '⠙', '⠹', '⠸', '⠼', '⠴', '⠦', '⠧', '⠇', '⠏'];
/** Calls shorter than this get no elapsed time and, in a pipe, no progress lines. */
const SLOW_CALL_MS = 1_000;

interface InFlight {
  name: string;
  startedAt: number;
  progress?: { progress: number; total?: number; message?: string };
  /** When a progress line was last printed (pipes only). */
  printedAt?: number;
}

function shorten(text: string): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length > MAX_SHOWN ? `${flat.slice(0, MAX_SHOWN)}…` : flat;
}

function seconds(ms: number): string {
  return `${(ms / 1000).toFixed(1)} s`;
}

/** `50% half-way`, `3/10`, or the message alone, from an MCP progress notification. */
export function formatProgress(progress: InFlight['progress']): string {
  if (!progress) return '';
  const { total, message } = progress;
  const amount =
    total !== undefined && total > 0
      ? `${Math.min(100, Math.round((progress.progress / total) * 100))}%`
      : progress.progress > 0
        ? String(progress.progress)
        : '';
  return [amount, message ?? ''].filter((part) => part !== '').join(' ');
}

/**
 * The run printer of `agents actor run|resume`. With `--json`: one JSON event per line. On a
 * terminal: coloured lines, and while a tool call runs, one status line redrawn in place with a
 * spinner, the elapsed time and the server's progress (percentage, message). In a pipe: plain
 * lines; a call running longer than a second prints its progress at most once a second.
 */
export function createRunOutput(
  context: CommandContext,
  options: RunOutputOptions = {},
): RunOutput {
  const out = context.stdout;
  if (context.json) {
    return { event: (event) => out.write(`${JSON.stringify(event)}\n`), close: () => {} };
  }
  const env = options.env ?? process.env;
  const now = options.now ?? Date.now;
  const live = isInteractive(out, env);
  const colors = pc.createColors(wantsColor(out, env));
  const calls = new Map<string, InFlight>();
  let timer: NodeJS.Timeout | undefined;
  let frame = 0;
  let statusShown = false;

  const clearStatus = () => {
    if (!statusShown) return;
    out.write('\r\x1b[2K');
    statusShown = false;
  };
  const drawStatus = () => {
    if (calls.size === 0) return;
    const at = now();
    const parts = [...calls.values()].map((call) => {
      const progress = formatProgress(call.progress);
      return `${call.name} ${colors.dim(seconds(at - call.startedAt))}${progress === '' ? '' : ` · ${progress}`}`;
    });
    const spinner = colors.cyan(SPINNER[frame++ % SPINNER.length]!);
    out.write(`\r\x1b[2K${spinner} ${parts.join(colors.dim(' | '))}`);
    statusShown = true;
  };
  const syncTimer = () => {
    if (!live) return;
    if (calls.size > 0 && timer === undefined) {
      timer = setInterval(drawStatus, options.tickMs ?? 100);
      // The run itself keeps the process alive; the status line must never do so.
      timer.unref();
    } else if (calls.size === 0 && timer !== undefined) {
      clearInterval(timer);
      timer = undefined;
      clearStatus();
    }
  };
  const line = (text: string) => {
    clearStatus();
    println(out, text);
    if (live && calls.size > 0) drawStatus();
  };

  const onProgress = (event: Extract<ActorRunEvent, { type: 'tool-progress' }>) => {
    const call = calls.get(event.toolCallId);
    if (!call) return;
    call.progress = {
      progress: event.progress,
      ...(event.total === undefined ? {} : { total: event.total }),
      ...(event.message === undefined ? {} : { message: event.message }),
    };
    if (live) {
      drawStatus();
      return;
    }
    const at = now();
    if (at - call.startedAt < SLOW_CALL_MS) return;
    if (call.printedAt !== undefined && at - call.printedAt < SLOW_CALL_MS) return;
    call.printedAt = at;
    const progress = formatProgress(call.progress);
    println(
      out,
      `… ${call.name} ${seconds(at - call.startedAt)}${progress ? `: ${progress}` : ''}`,
    );
  };

  return {
    event(event) {
      switch (event.type) {
        case 'tool-call-start':
          line(
            `${colors.cyan('→')} ${colors.bold(event.name)} ${shorten(JSON.stringify(event.args))}`,
          );
          calls.set(event.toolCallId, { name: event.name, startedAt: now() });
          syncTimer();
          break;
        case 'tool-progress':
          onProgress(event);
          break;
        case 'tool-retry':
          line(colors.yellow(`↻ ${event.name}: ${event.message}`));
          break;
        case 'tool-call-end': {
          const call = calls.get(event.toolCallId);
          calls.delete(event.toolCallId);
          const elapsed = call === undefined ? 0 : now() - call.startedAt;
          const took = elapsed >= SLOW_CALL_MS ? colors.dim(` (${seconds(elapsed)})`) : '';
          const mark = event.isError ? colors.red('✗') : colors.green('←');
          // What confinement refused is said in full on a line of its own: the cause and the fix.
          const refusal = event.text.indexOf(CONFINEMENT_REFUSAL_PREFIX);
          const text = refusal === -1 ? event.text : event.text.slice(0, refusal);
          line(`${mark} ${event.name}: ${shorten(text)}${took}`);
          if (refusal !== -1)
            line(colors.yellow(`  ${event.text.slice(refusal).replace(/\s+/g, ' ').trim()}`));
          if (event.change && event.change.changed.length > 0) {
            line(
              colors.dim(
                `  changed: ${event.change.changed.map((item) => `${item.status} ${item.path}`).join(', ')}`,
              ),
            );
          }
          if (event.change?.skipped !== undefined) {
            line(
              `  not captured (a rollback will not restore it): ${formatSkippedPaths(event.change.skipped)}`,
            );
          }
          syncTimer();
          break;
        }
        case 'message':
          line(event.text);
          break;
        case 'turn-limit':
          calls.clear();
          syncTimer();
          line(`Stopped: ${event.message}`);
          break;
        case 'interrupt': {
          // A paused call is not running: stop its clock before the prompt takes the line.
          calls.clear();
          syncTimer();
          const count = event.approvals?.length ?? 0;
          const asked = event.inputs?.length ?? 0;
          const parts = [
            ...(count > 0
              ? [`${count} call${count === 1 ? '' : 's'} need${count === 1 ? 's' : ''} approval`]
              : []),
            ...(asked > 0
              ? [`the server of ${asked} call${asked === 1 ? '' : 's'} asks a question`]
              : []),
          ];
          line(
            colors.yellow(
              parts.length > 0
                ? `Paused: ${parts.join('; ')}.`
                : `Paused: ${shorten(JSON.stringify(event.value))}`,
            ),
          );
          break;
        }
      }
    },
    close() {
      calls.clear();
      syncTimer();
    },
  };
}
