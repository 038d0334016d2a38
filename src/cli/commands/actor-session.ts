import { resolve } from 'node:path';
import type { ActorInstance, ActorRunEvent } from '../../actors/actor-types.js';
import type { PendingApproval, PendingInput } from '../../actors/approvals.js';
import type { ServerLogger } from '../../servers/server-logger.js';
import { parseDuration } from '../../config/duration.js';
import { AgentsError, AgentsErrorCode, errorMessage } from '../../errors.js';
import { storeOf, usageError } from '../args.js';
import { createProgress } from '../progress.js';
import type { CommandContext } from '../command.js';
import { ExitCode } from '../exit-codes.js';
import { println } from '../output.js';
import { createRunOutput } from '../run-output.js';
import { isEndOfInput } from '../../policy/terminal-approval.js';
import { createAnswerSource } from './actor-answers.js';
import {
  printContinueHint,
  printLoginPause,
  printResumeHint,
  printRunEnd,
} from './actor-run-hints.js';
import type { LineQueue } from '../line-queue.js';

/** `--max-turns N` as a number; a usage error unless a whole number from 1 to 100,000. */
function parseMaxTurns(text: string | undefined, usage: string): number | undefined {
  if (text === undefined) return undefined;
  const value = Number(text);
  if (!/^\d+$/.test(text.trim()) || value < 1 || value > 100_000)
    throw usageError(`--max-turns ${text}: give a whole number from 1 to 100000.`, usage);
  return value;
}

/** The limits of one run given on the command line (each overrides the actor's YAML). */
export interface RunLimits {
  maxTurns?: number;
  maxToolCalls?: number;
  /** Milliseconds. */
  maxTimeMs?: number;
}

/**
 * `--max-turns N`, `--max-tool-calls N` and `--max-time DURATION` (`10m`, `90s`, `1h`, or
 * seconds); a usage error naming the flag for a bad value.
 */
export function parseRunLimits(
  values: { 'max-turns'?: string; 'max-tool-calls'?: string; 'max-time'?: string },
  usage: string,
): RunLimits {
  const limits: RunLimits = {};
  const turns = parseMaxTurns(values['max-turns'], usage);
  if (turns !== undefined) limits.maxTurns = turns;
  const calls = values['max-tool-calls'];
  if (calls !== undefined) {
    if (!/^\d+$/.test(calls.trim()) || Number(calls) < 1)
      throw usageError(`--max-tool-calls ${calls}: give a whole number of at least 1.`, usage);
    limits.maxToolCalls = Number(calls);
  }
  const time = values['max-time'];
  if (time !== undefined) {
    const trimmed = time.trim();
    try {
      limits.maxTimeMs = parseDuration(
        /^\d+(\.\d+)?$/.test(trimmed) ? Number(trimmed) : trimmed,
        '--max-time',
      );
    } catch (error) {
      throw usageError(errorMessage(error), usage, error);
    }
  }
  return limits;
}

/**
 * Prints a run's events; when it pauses for approval, asks (stdin) and resumes, until the run
 * ends (0) or an approval stays unanswered (8, with how to resume).
 */
export async function driveRun(
  context: CommandContext,
  actor: ActorInstance,
  first: AsyncGenerator<ActorRunEvent, void, undefined>,
  settings: {
    name: string;
    threadId: string;
    prompt: boolean;
    by: string;
    /** Called when the run stops resumable (a resume hint was printed). */
    paused?: () => void;
    /** Where answers are read (`agents chat` shares its turns' lines); default: stdin. */
    lines?: LineQueue;
  },
): Promise<number> {
  const answers = createAnswerSource(
    context,
    settings.by,
    (toolId) =>
      actor.entries().find((entry) => entry.descriptor.id === toolId)?.descriptor.inputSchema,
    settings.lines,
  );
  const output = createRunOutput(context);
  try {
    let events = first;
    for (;;) {
      const pending: PendingApproval[] = [];
      const inputs: PendingInput[] = [];
      let otherInterrupt = false;
      let stoppedBy: string | undefined;
      try {
        for await (const event of events) {
          output.event(event);
          if (event.type === 'turn-limit') stoppedBy = event.limit ?? 'turns';
          if (event.type !== 'interrupt') continue;
          if (event.approvals) pending.push(...event.approvals);
          if (event.inputs) inputs.push(...event.inputs);
          if (!event.approvals && !event.inputs) otherInterrupt = true;
        }
      } catch (error) {
        // A login (or scope step-up) only a person can give: the run stops at its last
        // checkpoint; after the login, --continue runs the call again.
        if (!AgentsError.hasCode(error, AgentsErrorCode.AuthRequired)) throw error;
        settings.paused?.();
        printLoginPause(context, settings.name, settings.threadId, error);
        return ExitCode.Server;
      }
      // Ctrl-C can land just as the run pauses: the user asked to stop, not to be asked.
      context.signal.throwIfAborted();
      if (stoppedBy !== undefined) {
        settings.paused?.();
        printContinueHint(context, settings.name, settings.threadId, stoppedBy);
        return ExitCode.TurnLimit;
      }
      if (pending.length === 0 && inputs.length === 0 && !otherInterrupt) return ExitCode.Ok;
      const given: unknown[] = [];
      try {
        if (otherInterrupt || !settings.prompt || !(await answers.hasInput())) {
          settings.paused?.();
          printResumeHint(context, settings.name, settings.threadId, pending, inputs);
          return ExitCode.Policy;
        }
        for (const item of pending) given.push(await answers.ask(item.preview));
        for (const item of inputs) given.push(await answers.askInput(item.preview));
      } catch (error) {
        // Ctrl-D at the prompt: nothing answered, the run stays paused as with a closed stdin.
        if (isEndOfInput(error)) {
          settings.paused?.();
          printResumeHint(context, settings.name, settings.threadId, pending, inputs);
          return ExitCode.Policy;
        }
        // Ctrl-C at the prompt: the run stays paused on its thread, so say how to go on.
        if (context.signal.aborted) {
          settings.paused?.();
          printResumeHint(context, settings.name, settings.threadId, pending, inputs);
        }
        throw error;
      }
      const { toResumeValue } = await import('../../actors/approvals.js');
      events = actor.resume(toResumeValue([...pending, ...inputs], given), {
        threadId: settings.threadId,
        signal: context.signal,
      });
    }
  } finally {
    output.close();
    answers.close();
  }
}

/**
 * Server problems (warnings, errors) always go to stderr; with `--verbose` also what servers
 * print on their stderr and other lifecycle notes.
 */
function cliServerLogger(context: CommandContext, verbose: boolean): ServerLogger {
  const line = (message: string) => println(context.stderr, `server: ${message}`);
  return {
    debug: verbose ? line : () => {},
    info: verbose ? line : () => {},
    warn: line,
    error: line,
  };
}

/**
 * Prints restarts and tool-list changes of the actor's servers while it runs, so a crash or a
 * new tool is visible in the terminal. Returns the unsubscribe function.
 */
function watchServers(context: CommandContext, actor: ActorInstance): () => void {
  const servers = actor.servers();
  const say = (message: string) => println(context.stderr, `server: ${message}`);
  const stops = [
    servers.on('server-restart', (event) =>
      say(
        // The cause itself was just logged (with the server's last stderr lines).
        `"${event.serverName}" stopped; restart ${event.attempt}/${event.maxAttempts} in ${event.delayMs} ms`,
      ),
    ),
    servers.on('server-start', (event) => {
      if (event.restart)
        say(`"${event.serverName}" is back${event.pid === undefined ? '' : ` (pid ${event.pid})`}`);
    }),
    servers.on('tools-changed', (event) => {
      const parts = [
        ...event.added.map((id) => `+${id}`),
        ...event.removed.map((id) => `-${id}`),
        ...event.changed.map((id) => `~${id}`),
      ];
      if (parts.length > 0)
        say(`"${event.serverName}" tools changed (${event.reason}): ${parts.join(' ')}`);
    }),
  ];
  return () => {
    for (const stop of stops) stop();
  };
}

/**
 * Runs `work` with the workspace's actor for one thread activated (warnings and server events
 * on stderr), then deactivates it, also on Ctrl-C: the abort ends the run's stream, and servers
 * and sandbox go away here.
 */
export async function withActiveCliActor(
  context: CommandContext,
  settings: {
    name: string;
    threadId: string;
    /** The thread id was made up for this run (no --thread): see `ephemeralThread`. */
    ephemeralThread?: boolean;
    keepSandbox: boolean;
    verbose: boolean;
    limits: RunLimits;
    /** `--from`: what a new sandbox starts from. */
    from?: string | undefined;
    /** `--record`: the cassette file the run is recorded into. */
    recordTo?: string;
    /**
     * What the recorded run starts with (a replay starts it the same way). None: `work` records
     * each run with its third argument (a chat's turns).
     */
    recordRun?: { mode: 'run' | 'continue'; input?: string };
  },
  work: (
    actor: ActorInstance,
    paused: () => void,
    /** Set when the run is recorded: records a run of `input` on the thread (a chat's turn). */
    recordTurn: ((input: string) => void) | undefined,
  ) => Promise<number>,
): Promise<number> {
  // Loaded on use: LangGraph and the servers are heavy, and `--help` should be quick.
  const { createActor } = await import('../../actors/actor.js');
  // `record:` in the actor's YAML records like `--record` (which wins). A config that does not
  // read is left to createActor, which says what is wrong with it.
  const config = await storeOf(context)
    .get('actor', settings.name)
    .catch(() => undefined);
  const configured = config?.record;
  const recordTo =
    settings.recordTo ??
    (configured === undefined || configured === false
      ? undefined
      : resolve(
          context.cwd,
          configured === true ? `${settings.threadId}.cassette.jsonl` : configured,
        ));
  const recording = recordTo === undefined ? undefined : await import('../../replay/record-cli.js');
  const recorder = await recording?.startCliRecording(
    storeOf(context),
    settings.name,
    settings.recordRun,
  );
  const actor = await createActor({
    ...(recorder === undefined ? {} : { record: recorder }),
    name: settings.name,
    workspace: storeOf(context),
    threadId: settings.threadId,
    ephemeralThread: settings.ephemeralThread === true,
    keepSandbox: settings.keepSandbox,
    ...(settings.from === undefined ? {} : { sandboxFrom: settings.from }),
    ...(settings.limits.maxTurns === undefined ? {} : { maxTurns: settings.limits.maxTurns }),
    ...(settings.limits.maxToolCalls === undefined
      ? {}
      : { maxToolCalls: settings.limits.maxToolCalls }),
    ...(settings.limits.maxTimeMs === undefined ? {} : { maxTimeMs: settings.limits.maxTimeMs }),
    logger: cliServerLogger(context, settings.verbose),
    onWarning: (message) => println(context.stderr, `warning: ${message}`),
  });
  let unwatch: (() => void) | undefined;
  // A run that pauses must keep its thread's sandbox: the printed resume command needs it.
  let resumable = false;
  // Only a run that got the thread stores its listing: a refused one (a thread another worker
  // holds) must leave nothing of the thread on this worker, not even a sandbox opened to list it.
  let activated = false;
  try {
    // The model first: a missing script or provider package fails before anything is made.
    // A line per slow step (sandbox, servers): a first `npx` server can take many seconds.
    const progress = createProgress(context.stderr);
    await actor.activate({
      signal: context.signal,
      checkModel: true,
      step: (text, work) => progress.step(text, work),
    });
    activated = true;
    unwatch = watchServers(context, actor);
    const checkpointsBefore =
      recorder && (await recording!.recordThreadStart(recorder, actor, settings.threadId));
    const code = await work(
      actor,
      () => (resumable = true),
      recorder && ((input) => recorder.record({ kind: 'run', mode: 'run', input })),
    );
    // While the sandbox is open: the end's tree id is read from its snapshot store.
    if (recorder)
      await recording!.endCliRecording(recorder, actor, settings.threadId, checkpointsBefore);
    const kept = settings.keepSandbox || resumable || settings.ephemeralThread !== true;
    printRunEnd(context, settings.threadId, actor, settings.keepSandbox, kept);
    return code;
  } finally {
    unwatch?.();
    await actor.deactivate({ keepSandbox: resumable });
    // A kept thread's checkpoint listing, stored now: `agents checkpoints` then needs no LangGraph.
    // Only a store kept in a local file (SQLite) holds a listing: for another one, opening the
    // thread again (its sandbox, a shared store's fetch) would find nothing to store.
    if (
      activated &&
      (settings.ephemeralThread !== true || resumable) &&
      config !== undefined &&
      (await (await import('../../runtime/agents-runtime.js')).checkpointStores()).resolve(
        config.checkpointer,
      ).backend.localFile !== undefined
    )
      await (
        await import('./record-thread-listing.js')
      ).recordThreadListing(context, settings.threadId);
    // After deactivate: the servers' open streams are recorded when their connections close.
    if (recorder !== undefined && recordTo !== undefined) {
      await recorder.save(recordTo);
      if (context.json) {
        context.stdout.write(`${JSON.stringify({ type: 'cassette', path: recordTo })}\n`);
      } else println(context.stdout, `cassette: ${recordTo}`);
    }
  }
}
