import { resolve } from 'node:path';
import type { Command, CommandContext } from '../command.js';
import { parseCommandLine, requirePositional, usageError } from '../args.js';
import { ExitCode } from '../exit-codes.js';
import { printJson, println } from '../output.js';

const REPLAY_USAGE = `Usage: agents thread replay CASSETTE [--model cassette|live] [--tools cassette|live] [--base DIR] [--json]

Rebuilds a recorded run (\\\`agents actor run|chat … --record\\\`) with no model called and no server
started: the actor is rebuilt from the cassette in a throwaway project holding the recorded base
files; the model answers from the cassette, each MCP call is answered from it after its request
matched, and each call's recorded change set is written into the sandbox; the graph, pipeline,
policy, checkpoints and snapshots run for real. Approvals are answered as they were recorded.
A recording that started on a thread with history (\\\`actor resume\\\`, a run after a rollback)
seeds the fresh thread with the state it recorded first.

Prints the final tree id. Exits 0 when every call's tree, the policy's outcomes, the end's tree
and the checkpoint count match the recording; 11 naming the first divergence (the step, the
call, what differed); 3 for a cassette it cannot replay (format 1, edited paths, a pause it
cannot rebuild). See
docs/replay.md.

Options:
  --model live   the actor's own model (the model of the recorded config, resolved in the
                 rebuilt project) answers instead of the cassette, against the recorded tools:
                 test a new prompt or model; a call the recording lacks diverges (exit 11)
  --tools live   start the recorded servers for real (the commands of the cassette's actor
                 entry: check a server upgrade) and answer them with the recorded model
                 turns; a tool result or a tree that differs from the recording diverges
                 (exit 11, naming the call)
  --base DIR     the project folder as it was recorded: the base of a large project is in the
                 cassette as content ids only (enough for a cassette replay); --tools live
                 needs the files, read from DIR (the base tree is checked)
  --json         print the report as one JSON object`;

/** `agents thread replay CASSETTE`. */
export const threadReplayCommand: Command = {
  path: ['thread', 'replay'],
  usage: REPLAY_USAGE,
  async run(context: CommandContext): Promise<number> {
    const { values, positionals } = parseCommandLine(
      context.argv,
      { model: { type: 'string' }, tools: { type: 'string' }, base: { type: 'string' } },
      REPLAY_USAGE,
    );
    if (values.model !== undefined && values.model !== 'live' && values.model !== 'cassette') {
      throw usageError('--model is cassette (the default) or live.', REPLAY_USAGE);
    }
    if (values.tools !== undefined && values.tools !== 'live' && values.tools !== 'cassette') {
      throw usageError('--tools is cassette (the default) or live.', REPLAY_USAGE);
    }
    if (values.model === 'live' && values.tools === 'live') {
      throw usageError(
        '--model live and --tools live together leave nothing to replay: run the actor (agents actor run).',
        REPLAY_USAGE,
      );
    }
    const file = resolve(context.cwd, requirePositional(positionals, 'CASSETTE', REPLAY_USAGE));
    const [{ readCassette }, { replayThread }] = await Promise.all([
      import('../../replay/cassette.js'),
      import('./thread-replay-run.js'),
    ]);
    const cassette = await readCassette(file);
    const report = await replayThread(
      cassette,
      file,
      (message) => println(context.stderr, `warning: ${message}`),
      context.signal,
      {
        liveModel: values.model === 'live',
        liveTools: values.tools === 'live',
        ...(values.base === undefined ? {} : { baseDir: resolve(context.cwd, values.base) }),
      },
    );
    const { divergence } = report;
    if (context.json) {
      printJson(context.stdout, {
        ...report,
        divergence:
          divergence === undefined
            ? undefined
            : { message: divergence.message, ...divergence.details },
      });
    } else {
      for (const call of report.calls) {
        println(
          context.stdout,
          `call ${call.toolId}${call.toolCallId ? ` ${call.toolCallId}` : ''}: ${call.outcome ?? 'no policy'}${call.isError ? ', error' : ''}`,
        );
      }
      println(context.stdout, `checkpoints: ${report.checkpoints}`);
      if (report.redacted.length > 0) {
        println(
          context.stdout,
          `redacted: ${report.redacted.join(', ')} (written as recorded, masked; compared by the real files' recorded content ids)`,
        );
      }
      if (report.treesUnchecked > 0) {
        println(
          context.stdout,
          `unchecked: ${report.treesUnchecked} tree(s) after a file the recording redacted`,
        );
      }
      if (report.pausedAt !== undefined) {
        println(context.stdout, `paused: ${report.pausedAt} waits for an approval, as recorded`);
      }
      println(context.stdout, `tree: ${report.tree ?? '(no sandbox)'}`);
    }
    if (divergence === undefined) return ExitCode.Ok;
    if (!context.json) println(context.stderr, `error: ${divergence.message}`);
    return ExitCode.ReplayDiverged;
  },
};
