import { formatSkippedPaths } from '../../sandbox/skipped-paths.js';
import type { Command, CommandContext } from '../command.js';
import { parseCommandLine, requireOption } from '../args.js';
import type { OpenThreadContext } from '../../actors/open-thread.js';
import { diffSandbox, formatSandboxDiff, leftOutByDelivery } from '../../sandbox/deliver/diff.js';
import { quotePath } from '../../sandbox/deliver/guard.js';
import { configPrefixesOf, THREAD_DELIVERY_OPTIONS, withThreadDelivery } from './sandbox-refs.js';
import { wantsColor } from '../output.js';
import type { ChangedPath } from '../../core/change-record.js';

const SANDBOX_DIFF_USAGE = `Usage: agents sandbox diff --thread ID [--patch] [--stat] [--from REF] [--to REF] [PATH...]

Shows what the thread's run changed in its sandbox, from its base (or --from) to the thread's
latest checkpoint, whichever worker wrote it (or --to). REF is a checkpoint id (agents
checkpoints --thread ID) or a unique prefix of it, a snapshot sha, "base" or "head" (the
thread's latest checkpoint). PATH limits it to files or folders (relative to the project).
  (default)  one "STATUS PATH" per line (A added, M modified, D deleted, T type change);
             names with control characters, " or \\ are quoted as git quotes them; changes
             apply and commit leave out by default are marked: [config] (under .agents/:
             actors, servers, skills, policy) and [link out] (a symlink out of the project
             or into .git)
  --stat     a diffstat, as git prints it
  --patch    the unified diff, as git prints it (renames detected, binary files named);
             coloured on a terminal (NO_COLOR turns that off)
  --json     {threadId, from, to, changed, files: [{path, status, hunks, ...}]} (+ patch)`;

/** Keeps the changes under one of `paths` (a file, or a folder and what is under it). */
function underPaths(changed: ChangedPath[], paths: readonly string[]): ChangedPath[] {
  if (paths.length === 0) return changed;
  const prefixes = paths.map((path) => path.replace(/^\.\/+/, '').replace(/\/+$/, ''));
  return changed.filter((change) =>
    prefixes.some((prefix) => change.path === prefix || change.path.startsWith(`${prefix}/`)),
  );
}

/** `agents sandbox diff --thread ID`: what a run changed against its base. */
export function createSandboxDiffCommand(openThread: OpenThreadContext): Command {
  return {
    path: ['sandbox', 'diff'],
    usage: SANDBOX_DIFF_USAGE,
    async run(context: CommandContext): Promise<number> {
      const { values, positionals: paths } = parseCommandLine(
        context.argv,
        {
          ...THREAD_DELIVERY_OPTIONS,
          patch: { type: 'boolean' },
          stat: { type: 'boolean' },
        },
        SANDBOX_DIFF_USAGE,
      );
      const threadId = requireOption(values.thread, 'thread', SANDBOX_DIFF_USAGE);
      return withThreadDelivery(openThread, context, threadId, values, async (delivery) => {
        const { thread, sandbox } = delivery;
        const { signal } = context;
        const from = delivery.from ?? sandbox.base;
        const to = delivery.to ?? sandbox.head;
        const configPrefixes = configPrefixesOf(context.workspace, sandbox.source);
        // Two git reads of the same range, side by side (start-up counts, issue 29).
        const [names, leftOut] = await Promise.all([
          thread.sandbox.diff(from, to),
          leftOutByDelivery(sandbox, { from, to, paths, signal, configPrefixes }),
        ]);
        const changed = underPaths(names, paths);
        // Left out of every snapshot: the diff cannot show them, and a rollback leaves them.
        const skipped = thread.sandbox.skippedPaths?.() ?? [];
        if (context.json) {
          const diff = await diffSandbox(sandbox, { from, to, paths, signal, configPrefixes });
          const { patch, files } = diff;
          context.stdout.write(
            `${JSON.stringify(
              {
                threadId,
                from,
                to,
                changed,
                files,
                skipped,
                ...(values.patch === true ? { patch } : {}),
              },
              null,
              2,
            )}\n`,
          );
        } else if (values.patch === true || values.stat === true) {
          context.stdout.write(
            await formatSandboxDiff(sandbox, {
              from,
              to,
              paths,
              signal,
              patch: values.patch === true,
              stat: values.stat === true,
              color: wantsColor(context.stdout),
            }),
          );
        } else if (changed.length === 0) {
          const under = paths.length === 0 ? '' : ` under ${paths.map(quotePath).join(', ')}`;
          context.stdout.write(`No changes in thread ${threadId}${under}.\n`);
        } else {
          const mark = { config: ' [config]', 'symlink-out': ' [link out]', 'nested-repo': '' };
          context.stdout.write(
            `${changed
              .map((change) => {
                const out = leftOut.get(change.path);
                return `${change.status} ${quotePath(change.path)}${out === undefined ? '' : mark[out.kind]}`;
              })
              .join('\n')}\n`,
          );
        }
        const config = [...leftOut.values()].filter((item) => item.kind === 'config');
        const links = [...leftOut.values()].filter((item) => item.kind === 'symlink-out');
        if (!context.json && config.length > 0) {
          context.stderr.write(
            `${config.length} configuration change(s) under .agents/ (what the next run may do: actors, servers, skills, policy): apply and commit leave them out unless --include-config.\n`,
          );
        }
        if (!context.json && links.length > 0) {
          context.stderr.write(
            `${links.length} symlink(s) pointing outside the project or into .git (${links.map((item) => quotePath(item.path)).join(', ')}): apply and commit refuse them unless --allow-symlinks-out.\n`,
          );
        }
        if (!context.json && skipped.length > 0) {
          context.stderr.write(
            `Not captured by the snapshots (a rollback will neither restore nor remove them): ${formatSkippedPaths(skipped)}\n`,
          );
        }
        return 0;
      });
    },
  };
}
