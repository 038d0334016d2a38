/**
 * The environment of every git process the library starts (`git.ts` starts them): a fixed
 * config that names no program, a fixed identity and locale, and nothing else of the host.
 */
/** Default time a single git command may take before it is killed. */
export const DEFAULT_GIT_TIMEOUT_MS = 120_000;

/** Fixed identity for snapshot commits, so the user's git config never matters. */
export const SNAPSHOT_IDENTITY = {
  GIT_AUTHOR_NAME: 'agents-sandbox',
  GIT_AUTHOR_EMAIL: 'agents-sandbox@localhost',
  GIT_COMMITTER_NAME: 'agents-sandbox',
  GIT_COMMITTER_EMAIL: 'agents-sandbox@localhost',
} as const;

/**
 * Config every git the library runs gets, whatever any config file says: the host never
 * executes anything a tool can write (DESIGN.md, the fourth rule). Set through
 * `GIT_CONFIG_COUNT`/`GIT_CONFIG_KEY_n`/`GIT_CONFIG_VALUE_n`, which beat every config file and,
 * unlike a parent's own config, reach the gits git starts itself (a submodule's `status`): a
 * nested repo's `.git/config` naming `core.fsmonitor` ran it on the host's `add -A`. Keys that
 * name a program are fixed to none; keys that make git enter another repository are off.
 * Filter, textconv and diff/merge drivers are named by attributes: the snapshot store's
 * `info/attributes` turns filters off, and diffs pass `--no-ext-diff --no-textconv`. None of
 * this stops `add -A` from running `git status` inside a gitlink of its index (that child
 * still reads the nested repo's filter drivers): `addAll` in snapshot-store.ts keeps git out
 * of nested repos, and any new code that adds a tree to an index must do the same.
 */
export const FIXED_CONFIG: readonly (readonly [string, string])[] = [
  ['core.fsmonitor', 'false'],
  ['core.hooksPath', '/dev/null'],
  ['core.attributesFile', '/dev/null'],
  ['core.pager', 'cat'],
  ['core.editor', 'false'],
  ['sequence.editor', 'false'],
  ['gpg.program', 'false'],
  ['gpg.ssh.program', 'false'],
  ['gpg.x509.program', 'false'],
  ['commit.gpgSign', 'false'],
  ['tag.gpgSign', 'false'],
  ['submodule.recurse', 'false'],
  ['fetch.recurseSubmodules', 'false'],
  ['push.recurseSubmodules', 'no'],
  ['diff.ignoreSubmodules', 'all'],
  ['status.submoduleSummary', 'false'],
  ['gc.auto', '0'],
  ['maintenance.auto', 'false'],
  ['protocol.ext.allow', 'never'],
];

/**
 * Only for gits that never reach a remote (all but the shared snapshot store's): no transport
 * at all, so no `core.sshCommand`, credential helper or proxy program can run.
 */
export const LOCAL_ONLY_CONFIG: readonly (readonly [string, string])[] = [
  ['protocol.allow', 'never'],
  ['core.sshCommand', 'false'],
  ['credential.helper', ''],
  ['core.askPass', 'false'],
];

function configEnv(entries: readonly (readonly [string, string])[]): Record<string, string> {
  const env: Record<string, string> = { GIT_CONFIG_COUNT: String(entries.length) };
  for (const [index, [key, value]] of entries.entries()) {
    env[`GIT_CONFIG_KEY_${index}`] = key;
    env[`GIT_CONFIG_VALUE_${index}`] = value;
  }
  return env;
}

/** The fixed config of a git that never reaches a remote, as environment variables. */
export const LOCAL_GIT_CONFIG_ENV: Readonly<Record<string, string>> = Object.freeze(
  configEnv([...FIXED_CONFIG, ...LOCAL_ONLY_CONFIG]),
);

/** The fixed config of a git that fetches or pushes (the shared snapshot store). */
export const REMOTE_GIT_CONFIG_ENV: Readonly<Record<string, string>> = Object.freeze(
  configEnv(FIXED_CONFIG),
);

/**
 * The fixed config keys (as environment) added to `env` unless it already carries a
 * `GIT_CONFIG_COUNT` (set by {@link gitEnv} or {@link gitRemoteEnv}). Every runner here calls
 * it, so an environment built by hand still gets them.
 */
export function withFixedGitConfig(env: Record<string, string>): Record<string, string> {
  return env['GIT_CONFIG_COUNT'] === undefined ? { ...env, ...LOCAL_GIT_CONFIG_ENV } : env;
}

/**
 * Builds the environment for a git child process. It never spreads `process.env`: only PATH and
 * HOME (git needs them to run and to find the user's global config), a fixed locale, and our own
 * GIT_* keys. `GIT_OPTIONAL_LOCKS=0` keeps read-only commands from refreshing anyone's index.
 * It carries the fixed config ({@link LOCAL_GIT_CONFIG_ENV}): no hooks, fsmonitor, pager,
 * editor, signing program, submodule recursion or transport of any kind.
 */
export function gitEnv(extra: Record<string, string> = {}): Record<string, string> {
  return baseEnv(LOCAL_GIT_CONFIG_ENV, extra);
}

/**
 * {@link gitEnv} for a git that reaches the shared snapshot store: transports allowed (the
 * user's ssh and credential settings apply to reaching it) except `ext::`, which runs a command.
 */
export function gitRemoteEnv(extra: Record<string, string> = {}): Record<string, string> {
  return baseEnv(REMOTE_GIT_CONFIG_ENV, extra);
}

function baseEnv(
  config: Readonly<Record<string, string>>,
  extra: Record<string, string>,
): Record<string, string> {
  const env: Record<string, string> = {
    PATH: process.env['PATH'] ?? '/usr/bin:/bin',
    LC_ALL: 'C',
    GIT_TERMINAL_PROMPT: '0',
    GIT_OPTIONAL_LOCKS: '0',
    ...SNAPSHOT_IDENTITY,
    ...config,
    ...extra,
  };
  const home = process.env['HOME'];
  if (home !== undefined) env['HOME'] = home;
  return env;
}
