/**
 * What a thread's read-only commands need from its actor's config, recorded in the thread's
 * sandbox record (`thread.json`) at run time, so that `agents sandbox diff` / `checkpoints` can
 * skip reading and validating the actor's YAML (the yaml package and the zod schemas are most of
 * their start-up, issue 29). The facts are a cache of a function of the config file's bytes: they
 * are used only while the file still has the bytes they were derived from (its fingerprint), and
 * are derived by {@link actorConfigFacts}, the same function the full read uses.
 *
 * Loads nothing heavy on import: the parsers and the checkpoint table load inside the functions
 * that derive facts (at run time, or on the read-only commands' full path).
 */
import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { isAbsolute, join, resolve } from 'node:path';
import type { CheckpointerSettings } from '../runtime/agents-runtime.js';

/** Bump when {@link actorConfigFacts} or a default it relies on changes: older facts are ignored. */
const FACTS_VERSION = 1;
const SHA256 = /^[0-9a-f]{64}$/;
/** A sandbox or checkpoint backend name as the tables spell them (the opener checks it is known). */
const BACKEND_NAME = /^[a-z][a-z0-9-]{0,31}$/;

/** Which bytes of the actor's config file the facts were derived from. */
export interface ActorFileFingerprint {
  /** Absolute path of the file (`actors/NAME.yaml`, or `.yml` when only that exists). */
  file: string;
  /** Its size in bytes. */
  size: number;
  /** sha256 of its bytes (hex). */
  sha256: string;
}

/** The facts of an actor's config that a thread's read-only commands need. */
export interface ActorConfigFacts {
  /** `sandbox.backend`. */
  sandboxBackend: string;
  /** `snapshots.remote`, resolved against the project folder; null without a shared store. */
  sharedRemote: string | null;
  /** `checkpointer.type`. */
  checkpointer: string;
  /** The store's file, resolved as the store opens it: only for a store kept in one (`localFile`). */
  checkpointFile?: string;
}

/** What `thread.json` records under `config`: the facts and the bytes they came from. */
export interface ThreadConfigFacts extends ActorConfigFacts {
  version: typeof FACTS_VERSION;
  source: ActorFileFingerprint;
}

/**
 * `snapshots.remote` as git gets it: URLs (`scheme://…`, `host:path`) as written, paths resolved
 * with `resolvePath` (the project folder for relative ones).
 */
export function resolveSharedRemote(
  remote: string | undefined,
  resolvePath: (path: string) => string,
): string | undefined {
  if (remote === undefined) return undefined;
  const isUrl = /^[a-z][a-z0-9+.-]*:\/\//i.test(remote) || /^[^/]+:/.test(remote);
  return isUrl ? remote : resolvePath(remote);
}

/**
 * The facts of a parsed actor config, relative paths resolved against `projectDir` (the folder
 * the thread's run resolved them against). The one derivation: run time records it, the
 * read-only commands' full path computes it, so both paths agree by construction.
 */
export async function actorConfigFacts(
  config: {
    sandbox: { backend: string };
    snapshots?: { remote: string } | undefined;
    checkpointer: CheckpointerSettings;
  },
  projectDir: string,
): Promise<ActorConfigFacts> {
  // The table says whether the store is kept in a local file (and which), not a name check.
  const { checkpointStores } = await import('../runtime/agents-runtime.js');
  const { backend } = (await checkpointStores()).resolve(config.checkpointer);
  const sharedRemote =
    resolveSharedRemote(config.snapshots?.remote, (path) =>
      // As `WorkspaceStore.resolvePath` does (an absolute path stays as written).
      isAbsolute(path) ? path : resolve(projectDir, path),
    ) ?? null;
  const checkpointFile = backend.localFile?.(config.checkpointer, projectDir);
  return {
    sandboxBackend: config.sandbox.backend,
    sharedRemote,
    checkpointer: backend.type,
    ...(checkpointFile === undefined ? {} : { checkpointFile }),
  };
}

/**
 * The actor's config file as the workspace store finds it (`NAME.yaml`, else `NAME.yml`) with
 * its bytes and fingerprint; undefined when neither exists or cannot be read.
 */
export async function readActorFile(
  actorsDir: string,
  actor: string,
): Promise<{ fingerprint: ActorFileFingerprint; bytes: Buffer } | undefined> {
  for (const file of [join(actorsDir, `${actor}.yaml`), join(actorsDir, `${actor}.yml`)]) {
    let bytes: Buffer;
    try {
      bytes = await readFile(file);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') continue;
      return undefined;
    }
    const sha256 = createHash('sha256').update(bytes).digest('hex');
    return { fingerprint: { file, size: bytes.length, sha256 }, bytes };
  }
  return undefined;
}

/**
 * Reads the actor's config file once and derives its facts from exactly those bytes (parsed
 * and validated as the workspace store does): what `agents actor run --thread` records.
 * Undefined when the file is missing or does not parse (the read-only commands then take the
 * full read, which reports it).
 */
export async function describeActorFile(
  actorsDir: string,
  actor: string,
  projectDir: string,
): Promise<ThreadConfigFacts | undefined> {
  const read = await readActorFile(actorsDir, actor);
  if (read === undefined) return undefined;
  const { configParsers } = await import('../workspace/workspace-files.js');
  const { parseYaml, CONFIG_FILE_SCHEMAS } = await configParsers();
  let parsed: Record<string, unknown>;
  try {
    parsed = parseYaml(read.bytes.toString('utf8'), CONFIG_FILE_SCHEMAS.actor, {
      file: read.fingerprint.file,
      // The run reading the same file has said it already.
      onWarning: () => undefined,
    }) as Record<string, unknown>;
  } catch {
    return undefined;
  }
  // The store refuses a file whose `name:` is another actor's; so does the cache.
  if (typeof parsed['name'] === 'string' && parsed['name'] !== actor) return undefined;
  const facts = await actorConfigFacts(
    parsed as unknown as Parameters<typeof actorConfigFacts>[0],
    projectDir,
  ).catch(() => undefined);
  if (facts === undefined) return undefined;
  return { version: FACTS_VERSION, source: read.fingerprint, ...facts };
}

/**
 * The `config` field of a record, checked by hand (it is a file on disk anyone may have edited):
 * undefined unless every field has the shape the writer gives it.
 */
export function parseThreadConfigFacts(raw: unknown): ThreadConfigFacts | undefined {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) return undefined;
  const value = raw as Record<string, unknown>;
  const source = value['source'] as Record<string, unknown> | null | undefined;
  const { sandboxBackend, sharedRemote, checkpointer, checkpointFile } = value;
  if (
    value['version'] !== FACTS_VERSION ||
    typeof source !== 'object' ||
    source === null ||
    !isPath(source['file']) ||
    !Number.isSafeInteger(source['size']) ||
    (source['size'] as number) < 0 ||
    typeof source['sha256'] !== 'string' ||
    !SHA256.test(source['sha256']) ||
    !isBackendName(sandboxBackend) ||
    !(sharedRemote === null || isRemote(sharedRemote)) ||
    !isBackendName(checkpointer) ||
    !(checkpointFile === undefined || isPath(checkpointFile))
  ) {
    return undefined;
  }
  const { file, size, sha256 } = source as unknown as ActorFileFingerprint;
  return {
    version: FACTS_VERSION,
    source: { file, size, sha256 },
    sandboxBackend,
    sharedRemote,
    checkpointer,
    ...(checkpointFile === undefined ? {} : { checkpointFile }),
  };
}

/**
 * True when the actor's config file (found as the store finds it) still has the bytes the facts
 * were derived from: same file, size and sha256. The hash decides; a changed mtime with the same
 * bytes (a checkout, a copy) keeps the facts, and an edit that keeps size and mtime does not.
 */
export async function actorFileUnchanged(
  facts: ThreadConfigFacts,
  actorsDir: string,
  actor: string,
): Promise<boolean> {
  const read = await readActorFile(actorsDir, actor);
  return (
    read !== undefined &&
    read.fingerprint.file === facts.source.file &&
    read.fingerprint.size === facts.source.size &&
    read.fingerprint.sha256 === facts.source.sha256
  );
}

function isBackendName(value: unknown): value is string {
  return typeof value === 'string' && BACKEND_NAME.test(value);
}

function isPath(value: unknown): value is string {
  return typeof value === 'string' && isAbsolute(value) && !value.includes('\0');
}

function isRemote(value: unknown): value is string {
  return (
    typeof value === 'string' && value !== '' && !value.startsWith('-') && !value.includes('\0')
  );
}
