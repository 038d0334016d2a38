import { screenChanges, type DeliveryScreenOptions, type SkippedChange } from './screen.js';
import { deliveryHead, rawSnapshotDiff, resolveSnapshot, storeRun } from './store-access.js';
import type { DeliveryGitOptions, DeliverySandbox } from './store-access.js';
import { literalPathspec } from '../git/git-store.js';

/**
 * A patch never runs a program: no external diff, no textconv (a `.gitattributes` in the
 * sandbox is the tool's to write; plumbing leaves both off already, this says so).
 */
const NO_PROGRAMS = ['--no-ext-diff', '--no-textconv'] as const;

/** One line of a hunk. `no-newline` is git's "\ No newline at end of file" after a line. */
export interface DiffLine {
  kind: 'context' | 'add' | 'remove' | 'no-newline';
  text: string;
}

/** One hunk of a unified diff (`@@ -oldStart,oldLines +newStart,newLines @@ section`). */
export interface DiffHunk {
  oldStart: number;
  oldLines: number;
  newStart: number;
  newLines: number;
  /** The function or section name git prints after the second `@@`, or `''`. */
  section: string;
  lines: DiffLine[];
}

/** What changed in one file between two snapshots. */
export interface FileDiff {
  /** Path after the change (before it, for a deletion), relative to the project. */
  path: string;
  /** The path before a rename or copy. */
  oldPath?: string;
  /** `A` added, `M` modified, `D` deleted, `T` type changed, `R` renamed, `C` copied. */
  status: string;
  /** Rename or copy similarity in percent. */
  similarity?: number;
  /** Git file modes (`100644`, `100755`, `120000` symlink, `160000` nested repo). */
  oldMode?: string;
  newMode?: string;
  /** True when git treats the content as binary: no hunks, no line counts. */
  binary: boolean;
  /** Lines added and removed (`null` for binary files). */
  additions: number | null;
  deletions: number | null;
  hunks: DiffHunk[];
  /**
   * Set when apply and commit leave this file out by default: `config` (under `.agents/`, the
   * library's own configuration), `symlink-out` (a link out of the tree or into `.git`),
   * `nested-repo`; with the reason.
   */
  leftOut?: Pick<SkippedChange, 'kind' | 'reason'>;
}

/** The work of a sandbox between two snapshots, as structured hunks and as git's patch. */
export interface SandboxDiff {
  from: string;
  to: string;
  files: FileDiff[];
  /** The unified diff as `git diff` prints it (renames detected, binary files named). */
  patch: string;
}

/** Options of {@link diffSandbox} and {@link formatSandboxDiff}. */
export interface DiffSandboxOptions
  extends DeliveryGitOptions, Pick<DeliveryScreenOptions, 'configPrefixes'> {
  /** Snapshot to diff from (sha, or `'base'`, the default). */
  from?: string;
  /**
   * Snapshot to diff to (sha, or `'head'`, the default): the thread's latest checkpoint when
   * `thread` is given, else the sandbox's latest snapshot.
   */
  to?: string;
  /** Only these paths (files or folders, relative to the project; literal, no globs). */
  paths?: readonly string[];
}

/**
 * Resolves `from`/`to` to full snapshot shas: a sha, `'base'` (the default `from`) or `'head'`
 * (the default `to`: the thread's latest checkpoint with `options.thread`, see `deliveryHead`).
 */
export async function snapshotRange(
  sandbox: DeliverySandbox,
  options: Pick<DiffSandboxOptions, 'from' | 'to'> & DeliveryGitOptions,
): Promise<{ from: string; to: string }> {
  const word = async (ref: string | undefined, fallback: 'base' | 'head'): Promise<string> => {
    const named = ref ?? fallback;
    if (named === 'base') return sandbox.base;
    if (named === 'head') return deliveryHead(sandbox, options);
    return named;
  };
  return {
    from: await resolveSnapshot(sandbox, await word(options.from, 'base'), options),
    to: await resolveSnapshot(sandbox, await word(options.to, 'head'), options),
  };
}

/**
 * The sandbox's changes between two snapshots (default: everything since the base), made by
 * git's own diff machinery on the private snapshot store: renames detected (`-M`), binary files
 * flagged, every hunk parsed. Reads only the store; the user's repo is not involved.
 */
export async function diffSandbox(
  sandbox: DeliverySandbox,
  options: DiffSandboxOptions = {},
): Promise<SandboxDiff> {
  const { from, to } = await snapshotRange(sandbox, options);
  if (from === to) return { from, to, files: [], patch: '' };
  const spec = literalPathspec(options.paths);
  const names = (
    await storeRun(
      sandbox,
      ['diff-tree', '-r', '-z', '-M', '--name-status', '--no-color', from, to, ...spec],
      options,
    )
  ).stdout;
  const patch = (
    await storeRun(
      sandbox,
      ['diff-tree', '-r', '-p', '-M', '--binary', '--no-color', ...NO_PROGRAMS, from, to, ...spec],
      options,
    )
  ).stdout;
  const entries = parseNameStatusWithRenames(names);
  const sections = splitSections(patch);
  const leftOut = await leftOutByDelivery(sandbox, { ...options, from, to });
  // Both outputs list the files in the same order; pair them up.
  const files = entries.map((entry, index) => {
    const out = leftOut.get(entry.path) ?? (entry.oldPath && leftOut.get(entry.oldPath));
    return {
      ...entry,
      ...parseSection(sections[index] ?? []),
      ...(out ? { leftOut: { kind: out.kind, reason: out.reason } } : {}),
    };
  });
  return { from, to, files, patch };
}

/**
 * The paths of `from`..`to` that apply and commit leave out by default (configuration,
 * symlinks out, nested repositories), by path, for listings that warn about them.
 */
export async function leftOutByDelivery(
  sandbox: DeliverySandbox,
  options: DiffSandboxOptions & { from: string; to: string },
): Promise<Map<string, SkippedChange>> {
  if (options.from === options.to) return new Map();
  const raw = await rawSnapshotDiff(sandbox, options.from, options.to, options.paths, options);
  const { skipped } = await screenChanges(sandbox, raw, {
    ...options,
    includeConfig: false,
    allowSymlinksOut: false,
  });
  return new Map(skipped.map((item) => [item.path, item]));
}

/** Options of {@link formatSandboxDiff}. */
export interface FormatSandboxDiffOptions extends DiffSandboxOptions {
  /** Diffstat first (`--stat`). */
  stat?: boolean;
  /** The unified diff (`--patch`). */
  patch?: boolean;
  /** ANSI colours, as git prints them on a terminal. */
  color?: boolean;
}

/** The diffstat and/or unified diff as git prints them, for people. */
export async function formatSandboxDiff(
  sandbox: DeliverySandbox,
  options: FormatSandboxDiffOptions,
): Promise<string> {
  const { from, to } = await snapshotRange(sandbox, options);
  if (from === to) return '';
  const what = [
    ...(options.stat === true ? ['--stat'] : []),
    // --binary: binary files as git's binary patches, so `git apply` takes the whole patch.
    ...(options.patch === true ? ['-p', '--binary'] : []),
  ];
  if (what.length === 0) return '';
  const color = options.color === true ? '--color=always' : '--no-color';
  return (
    await storeRun(
      sandbox,
      [
        'diff-tree',
        '-r',
        '-M',
        color,
        ...NO_PROGRAMS,
        ...what,
        from,
        to,
        ...literalPathspec(options.paths),
      ],
      options,
    )
  ).stdout;
}

type Entry = Pick<FileDiff, 'path' | 'oldPath' | 'status' | 'similarity'>;

/** `diff-tree -z -M --name-status`: `R95\0old\0new\0`, `M\0path\0`. */
function parseNameStatusWithRenames(output: string): Entry[] {
  const fields = output.split('\0');
  const entries: Entry[] = [];
  let index = 0;
  while (index < fields.length) {
    const code = fields[index] ?? '';
    if (code === '') break;
    const status = code.charAt(0);
    if (status === 'R' || status === 'C') {
      entries.push({
        status,
        oldPath: fields[index + 1]!,
        path: fields[index + 2]!,
        similarity: Number(code.slice(1)) || 0,
      });
      index += 3;
    } else {
      entries.push({ status, path: fields[index + 1]! });
      index += 2;
    }
  }
  return entries;
}

/** Splits a patch into per-file sections (lines from one `diff --git` to the next). */
function splitSections(patch: string): string[][] {
  const sections: string[][] = [];
  const lines = patch.split('\n');
  if (lines.at(-1) === '') lines.pop();
  for (const line of lines) {
    if (line.startsWith('diff --git ')) sections.push([]);
    sections.at(-1)?.push(line);
  }
  return sections;
}

const HUNK_HEADER = /^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@ ?(.*)$/;

function parseSection(
  lines: readonly string[],
): Pick<FileDiff, 'oldMode' | 'newMode' | 'binary' | 'additions' | 'deletions' | 'hunks'> {
  let oldMode: string | undefined;
  let newMode: string | undefined;
  let binary = false;
  const hunks: DiffHunk[] = [];
  let additions = 0;
  let deletions = 0;
  for (const line of lines) {
    const hunk = hunks.at(-1);
    const header = HUNK_HEADER.exec(line);
    if (header !== null) {
      hunks.push({
        oldStart: Number(header[1]),
        oldLines: header[2] === undefined ? 1 : Number(header[2]),
        newStart: Number(header[3]),
        newLines: header[4] === undefined ? 1 : Number(header[4]),
        section: header[5] ?? '',
        lines: [],
      });
      continue;
    }
    if (hunk !== undefined) {
      const mark = line.charAt(0);
      if (mark === '+') {
        additions++;
        hunk.lines.push({ kind: 'add', text: line.slice(1) });
      } else if (mark === '-') {
        deletions++;
        hunk.lines.push({ kind: 'remove', text: line.slice(1) });
      } else if (mark === ' ') hunk.lines.push({ kind: 'context', text: line.slice(1) });
      else if (mark === '\\') hunk.lines.push({ kind: 'no-newline', text: line.slice(2) });
      continue;
    }
    let match: RegExpExecArray | null;
    if ((match = /^(?:old mode|deleted file mode) (\d+)$/.exec(line)) !== null) oldMode = match[1];
    else if ((match = /^(?:new mode|new file mode) (\d+)$/.exec(line)) !== null) newMode = match[1];
    else if ((match = /^index [0-9a-f]+\.\.[0-9a-f]+ (\d+)$/.exec(line)) !== null) {
      oldMode = match[1];
      newMode = match[1];
    } else if (line.startsWith('Binary files ') || line === 'GIT binary patch') binary = true;
  }
  return {
    ...(oldMode === undefined ? {} : { oldMode }),
    ...(newMode === undefined ? {} : { newMode }),
    binary,
    additions: binary ? null : additions,
    deletions: binary ? null : deletions,
    hunks,
  };
}
