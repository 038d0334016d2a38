import { randomUUID } from 'node:crypto';
import { resolve } from 'node:path';
import type { ActorInstance, ActorRunEvent } from '../../actors/actor-types.js';
import { errorMessage } from '../../errors.js';
import { parseCommandLine, requirePositional, withOptionalValue } from '../args.js';
import type { Command, CommandContext } from '../command.js';
import { ExitCode } from '../exit-codes.js';
import { agentsCommandLine, printError, println } from '../output.js';

const CHAT_USAGE = `Usage: agents chat NAME [--thread ID] [--from worktree|head|REV] [--record [PATH]] [--by NAME] [--verbose]

A conversation with an actor on one thread. Each line you type is a turn: the actor runs on it
as \`agents actor run NAME --thread ID --input LINE\` would, printing tool calls, changes and
progress as they happen, and asking for approvals and a server's questions inline (answer a,
r [MESSAGE] or e JSON on the next line). Input that is not a terminal works the same, one turn
per line, so a script can drive a conversation: \`printf 'Write hello.txt\\na\\n/diff\\n' | agents
chat coder --thread t1\`. The actor's servers and sandbox stay up between turns.

Commands, on a line of their own (each takes the options of the command it stands for):
  /diff [--patch|--stat]  what the thread changed in its sandbox (agents sandbox diff)
  /checkpoints [--all]    the thread's checkpoints (agents checkpoints)
  /rollback ID            roll files and conversation back to a checkpoint (agents rollback
                          --to ID); /rollback --undo undoes the latest rollback
  /undo                   undo the last turn: roll back to the checkpoint its input made
  /apply [--undo]         take the thread's work into your files (agents sandbox apply)
  /exit                   leave (so does the end of input, Ctrl-D)

Ctrl-C stops the current turn (the thread keeps its last checkpoint); a second Ctrl-C leaves.
A call left waiting for approval is not run: the next line rejects it, as the message to the
model (a server's question is declined). On leaving, the line that goes on with the conversation is printed:
  agents chat NAME --thread ID

Options:
  --thread ID   the thread to talk on; an existing one goes on where it stopped (default: a new
                thread, whose id is printed; its sandbox is kept, as with --thread)
  --from WHAT   what a new thread's sandbox starts from (see agents actor run --help)
  --record [PATH]  record the conversation into a cassette (every turn, approval and MCP
                exchange; replay it with \`agents thread replay PATH\`); the last line says
                \`cassette: PATH\` (default PATH: THREAD.cassette.jsonl here). /rollback and
                /undo are refused while recording. See docs/replay.md
  --by NAME     who answers approvals, recorded in the audit log (default: your user name)
  --verbose     also print what the servers write on stderr
  --json        one JSON event per line (prompts go to stderr)`;

/** What a line asked the chat to do next. */
type Next =
  | { kind: 'read' }
  | { kind: 'leave'; code: number }
  /** A command that changes the thread: run with the actor stopped (it holds the thread). */
  | { kind: 'locked'; argv: string[] };

/** Slash commands that read the thread, and the `agents` command each stands for. */
const READERS: Record<string, 'diff' | 'checkpoints' | 'apply'> = {
  '/diff': 'diff',
  '/checkpoints': 'checkpoints',
  '/apply': 'apply',
};

/**
 * `agents chat NAME [--thread ID]`. Lines come from `node:readline` over stdin, not from a prompt
 * library: it adds no dependency, reads a pipe exactly as a terminal (one turn per line, so
 * scripts and tests drive a chat), and the terminal's own line editing is enough for one line.
 * One {@link LineQueue} feeds both the turns and the approval prompts of `actor run`
 * (`driveRun`), so an answer never takes the next turn's line or the other way round.
 */
export const chatCommand: Command = {
  path: ['chat'],
  usage: CHAT_USAGE,
  async run(context) {
    const { values, positionals } = parseCommandLine(
      withOptionalValue(context.argv, '--record'),
      {
        thread: { type: 'string' },
        from: { type: 'string' },
        record: { type: 'string' },
        by: { type: 'string' },
        verbose: { type: 'boolean' },
      },
      CHAT_USAGE,
    );
    const name = requirePositional(positionals, 'actor NAME', CHAT_USAGE);
    // Loaded on use: the actor, its output and prompts stay out of `--help`.
    const [{ defaultUser }, { driveRun, withActiveCliActor }, { createLineQueue }, interrupts] =
      await Promise.all([
        import('./actor-answers.js'),
        import('./actor-session.js'),
        import('../line-queue.js'),
        import('../interrupts.js'),
      ]);
    const threadId = values.thread ?? randomUUID();
    const by = values.by ?? defaultUser();
    const lines = createLineQueue(context.stdin);
    const stdin = context.stdin as NodeJS.ReadableStream & { isTTY?: boolean };
    // Leaving: the second Ctrl-C, SIGTERM, or the binary's own abort.
    const leave = new AbortController();
    const onOuterAbort = () => leave.abort(context.signal.reason);
    context.signal.addEventListener('abort', onOuterAbort, { once: true });
    let turn: AbortController | undefined;
    // Set by a Ctrl-C that stopped a turn or warned; the next one leaves. A new line clears it.
    let armed = false;
    const release = interrupts.takeInterrupts(() => {
      if (turn !== undefined && !turn.signal.aborted) {
        turn.abort(new Error('Turn stopped by Ctrl-C'));
        println(context.stderr, '\nStopping this turn (Ctrl-C again leaves the chat)...');
        armed = true;
        return true;
      }
      if (!armed) {
        println(context.stderr, '\n(Ctrl-C again, /exit or Ctrl-D leaves the chat)');
        armed = true;
        return true;
      }
      if (leave.signal.aborted) return false; // a third: the binary's default (force)
      leave.abort(new Error('Interrupted by SIGINT'));
      return true;
    });
    const chat: CommandContext = { ...context, signal: leave.signal };
    const settings = {
      name,
      threadId,
      keepSandbox: false,
      verbose: values.verbose === true,
      limits: {},
      from: values.from,
      ...(values.record === undefined
        ? {}
        : { recordTo: resolve(context.cwd, values.record || `${threadId}.cassette.jsonl`) }),
    };
    // Set while the chat is recorded (--record, or `record:` in the actor's YAML): each turn's
    // line is written as a run of the cassette, which `agents thread replay` runs in order.
    let recordTurn: ((input: string) => void) | undefined;
    if (values.thread === undefined) println(context.stderr, `thread: ${threadId}`);

    /** One line: a turn, or a slash command. */
    const handle = async (actor: ActorInstance, line: string): Promise<Next> => {
      const [word = '', ...args] = line.trim().split(/\s+/);
      if (!word.startsWith('/')) {
        recordTurn?.(line);
        turn = new AbortController();
        const signal = AbortSignal.any([leave.signal, turn.signal]);
        try {
          const events = await startTurn(actor, threadId, line, by, context.stderr, signal);
          await driveRun({ ...chat, signal }, actor, events, {
            name,
            threadId,
            prompt: true,
            by,
            lines,
          });
        } catch (error) {
          if (!turn.signal.aborted || leave.signal.aborted) throw error;
          println(context.stderr, 'Turn stopped; the thread keeps its last checkpoint.');
        } finally {
          turn = undefined;
        }
        return { kind: 'read' };
      }
      if (word === '/exit' || word === '/quit') return { kind: 'leave', code: ExitCode.Ok };
      const reader = READERS[word];
      if (reader !== undefined) {
        await runThreadCommand(chat, threadId, reader, [...args]);
        return { kind: 'read' };
      }
      if ((word === '/rollback' || word === '/undo') && recordTurn !== undefined) {
        // A replay starts a fresh thread and runs the recorded turns in order: it has no way to
        // go back to a checkpoint, so a recorded chat keeps going forward.
        println(
          context.stderr,
          `${word} is not available while the chat is recorded (a replay could not reproduce it). Leave, and chat on this thread again without --record to roll back.`,
        );
        return { kind: 'read' };
      }
      if (word === '/rollback') {
        if (args.length === 0) {
          println(context.stderr, '/rollback needs a checkpoint id (see /checkpoints) or --undo.');
          return { kind: 'read' };
        }
        return { kind: 'locked', argv: args[0]!.startsWith('-') ? args : ['--to', ...args] };
      }
      if (word === '/undo') {
        const input = await lastInputCheckpoint(actor, threadId);
        if (input === undefined) {
          println(context.stderr, 'Nothing to undo: no turn has run on this thread.');
          return { kind: 'read' };
        }
        return { kind: 'locked', argv: ['--to', input] };
      }
      println(
        context.stderr,
        `Unknown command ${word}; one of /diff, /checkpoints, /rollback ID, /undo, /apply, /exit.`,
      );
      return { kind: 'read' };
    };

    try {
      let locked: string[] | undefined;
      let code: number | undefined;
      // An activation per stretch of turns: a rollback needs the actor (which holds the thread)
      // stopped, and the next turn starts it again on the rolled-back sandbox.
      while (code === undefined) {
        if (locked !== undefined) {
          try {
            await runThreadCommand(chat, threadId, 'rollback', locked);
          } catch (error) {
            if (leave.signal.aborted) throw error;
            printError(context.stderr, error);
          }
          locked = undefined;
        }
        await withActiveCliActor(chat, settings, async (actor, _paused, record) => {
          recordTurn = record;
          for (;;) {
            if (stdin.isTTY === true) context.stdout.write(`${name}> `);
            const line = await lines.next(leave.signal);
            if (line === undefined) {
              code = ExitCode.Ok;
              return 0;
            }
            armed = false;
            if (line.trim() === '') continue;
            let next: Next;
            try {
              next = await handle(actor, line);
            } catch (error) {
              if (leave.signal.aborted) throw error;
              // A failed turn or command does not end the conversation.
              printError(context.stderr, error);
              continue;
            }
            if (next.kind === 'leave') code = next.code;
            if (next.kind === 'locked') locked = next.argv;
            if (next.kind !== 'read') return 0;
          }
        });
      }
      return code;
    } catch (error) {
      if (!leave.signal.aborted || context.signal.aborted) throw error;
      println(context.stderr, `Left the chat (${errorMessage(leave.signal.reason)}).`);
      return ExitCode.Interrupted;
    } finally {
      release();
      context.signal.removeEventListener('abort', onOuterAbort);
      lines.close();
      println(
        context.stderr,
        `Go on with this conversation: ${agentsCommandLine(context, ['chat', name, '--thread', threadId])}`,
      );
    }
  },
};

/**
 * The events of a turn on `line`. A thread still waiting for an answer (a turn stopped at its
 * approval, an earlier run left paused) would keep a tool call without its result, which models
 * refuse; so the waiting calls are rejected (a server's questions declined) with the line as the
 * message, and the run goes on from there with what the person wrote.
 */
async function startTurn(
  actor: ActorInstance,
  threadId: string,
  line: string,
  by: string,
  stderr: NodeJS.WritableStream,
  signal: AbortSignal,
): Promise<AsyncGenerator<ActorRunEvent, void, undefined>> {
  const state = await actor.graph.getState({ configurable: { thread_id: threadId } });
  const interrupts = state.tasks.flatMap((task) => task.interrupts);
  if (interrupts.length === 0) return actor.run(line, { threadId, signal });
  const [{ pendingApprovalsOf, pendingInputsOf, toResumeValue }, { answerInputRequest }] =
    await Promise.all([
      import('../../actors/approvals.js'),
      import('../../policy/input-answer.js'),
    ]);
  const approvals = pendingApprovalsOf(interrupts);
  const inputs = pendingInputsOf(interrupts);
  if (approvals.length === 0 && inputs.length === 0) return actor.run(line, { threadId, signal });
  const waiting = [...approvals, ...inputs].map((item) => item.preview.toolId).join(', ');
  println(
    stderr,
    `(${waiting} waited for an answer: not run; your line goes to the model with that.)`,
  );
  const message = `Not run: the user did not approve it and wrote instead: ${line}`;
  const answers: unknown[] = [
    ...approvals.map(() => ({ type: 'reject', message, by })),
    ...inputs.map((item) =>
      answerInputRequest(
        item.preview,
        Object.fromEntries(item.preview.questions.map((q) => [q.key, { action: 'decline' }])),
        by,
      ),
    ),
  ];
  return actor.resume(toResumeValue([...approvals, ...inputs], answers), { threadId, signal });
}

/**
 * The checkpoint the last turn's input made (its files and messages are those before the turn):
 * the newest input checkpoint on the thread's current branch with a step run after it, so a
 * second /undo goes one turn further back instead of to the same place.
 */
async function lastInputCheckpoint(
  actor: ActorInstance,
  threadId: string,
): Promise<string | undefined> {
  const idOf = (config: { configurable?: Record<string, unknown> } | undefined) => {
    const id = config?.configurable?.['checkpoint_id'];
    return typeof id === 'string' ? id : undefined;
  };
  const byId = new Map<string, { source: unknown; parent: string | undefined }>();
  let latest: string | undefined;
  for await (const snapshot of actor.graph.getStateHistory({
    configurable: { thread_id: threadId },
  })) {
    const id = idOf(snapshot.config);
    if (id === undefined) continue;
    latest ??= id;
    byId.set(id, { source: snapshot.metadata?.source, parent: idOf(snapshot.parentConfig) });
  }
  let stepAfter = false;
  for (let at = latest; at !== undefined; at = byId.get(at)?.parent) {
    const source = byId.get(at)?.source;
    if (source === 'input' && stepAfter) return at;
    if (source === 'loop') stepAfter = true;
  }
  return undefined;
}

/** Runs an `agents` thread command on the chat's thread, as `agents WORDS --thread ID ARGS`. */
async function runThreadCommand(
  context: CommandContext,
  threadId: string,
  which: 'diff' | 'checkpoints' | 'apply' | 'rollback',
  args: string[],
): Promise<number> {
  const { threadOpener } = await import('./record-thread-listing.js');
  // Rollback changes the thread: it holds its lock (the chat stopped its actor first).
  const open = await threadOpener(which === 'rollback');
  const command =
    which === 'diff'
      ? (await import('./sandbox.js')).createSandboxDiffCommand(open)
      : which === 'checkpoints'
        ? (await import('./checkpoints.js')).createCheckpointsCommand(open)
        : which === 'apply'
          ? (await import('./sandbox-apply.js')).createSandboxApplyCommand(open)
          : (await import('./rollback.js')).createRollbackCommand(open);
  return command.run({ ...context, argv: ['--thread', threadId, ...args] });
}
