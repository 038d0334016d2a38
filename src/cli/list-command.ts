import type {
  WorkspaceKind,
  WorkspaceListing,
  WorkspaceRecord,
} from '../workspace/workspace-types.js';
import { parseCommandLine, storeOf } from './args.js';
import type { Command, CommandContext } from './command.js';
import { ExitCode } from './exit-codes.js';
import { formatTable, printJson, println } from './output.js';

/** What {@link createListCommand} needs to list one kind of workspace record. */
export interface ListCommandSpec<K extends WorkspaceKind> {
  /** The kind listed: the command is `KIND list`, its records go under `KINDs` in `--json`. */
  kind: K;
  usage: string;
  /** One record in `--json` output; default its file and value. */
  toJson?: (record: WorkspaceRecord<K>) => unknown;
  /** Further top-level members of the `--json` output. */
  extraJson?: Record<string, unknown>;
  headers: readonly string[];
  /** The table rows; may be async so a command can load a heavy module only when printing. */
  rows: (records: WorkspaceRecord<K>[]) => string[][] | Promise<string[][]>;
  /** What an empty table prints instead of `(none)`, when that would mislead. */
  empty?: string;
  /** Prints what follows the table (human output only). */
  after?: (context: CommandContext, listing: WorkspaceListing<K>) => Promise<void> | void;
}

/**
 * Builds a `KIND list [--json]` command: a table (or JSON) of the good records, each broken file
 * reported with its reason on stderr (or under `problems`), exit code `Config` (3) when any file
 * is broken so scripts notice.
 */
export function createListCommand<K extends WorkspaceKind>(spec: ListCommandSpec<K>): Command {
  return {
    path: [spec.kind, 'list'],
    usage: spec.usage,
    async run(context) {
      parseCommandLine(context.argv, {}, spec.usage);
      const listing = await storeOf(context).list(spec.kind);
      const { records, problems } = listing;
      if (context.json) {
        printJson(context.stdout, {
          [`${spec.kind}s`]: records.map(
            spec.toJson ?? ((record) => ({ file: record.file, ...record.value })),
          ),
          ...spec.extraJson,
          problems: problems.map((problem) => ({
            name: problem.name,
            file: problem.file,
            message: problem.error.message,
          })),
        });
      } else {
        const rows = await spec.rows(records);
        println(
          context.stdout,
          rows.length === 0 && spec.empty !== undefined
            ? spec.empty
            : formatTable(spec.headers, rows),
        );
        await spec.after?.(context, listing);
        for (const problem of problems)
          println(context.stderr, `warning: ${problem.error.message}`);
      }
      return problems.length > 0 ? ExitCode.Config : ExitCode.Ok;
    },
  };
}
