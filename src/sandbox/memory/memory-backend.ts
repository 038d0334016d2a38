/** The memory sandbox backend: plain-copy trees, snapshots held by this process. */
import { createHash } from 'node:crypto';
import { cp, mkdir, mkdtemp, realpath, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, relative, resolve, sep } from 'node:path';
import { AgentsError, AgentsErrorCode, errorMessage } from '../../errors.js';
import type {
  CreateSandboxOptions,
  OpenSandboxOptions,
  ReopenedSandbox,
  RunSandbox,
  SandboxBackend,
} from '../backend.js';
import { newSandboxId, prepareEmptyDir } from '../sandbox-marker.js';
import { isInside, realSourceDir } from '../source-dir.js';
import {
  MemorySandbox,
  readTree,
  removeState,
  STATES,
  type MemoryState,
} from './memory-sandbox.js';

async function create(options: CreateSandboxOptions): Promise<RunSandbox> {
  options.signal?.throwIfAborted();
  const id = newSandboxId(options.id);
  const from = options.from ?? 'worktree';
  if (from !== 'worktree' || options.seed !== undefined) {
    throw new AgentsError(
      AgentsErrorCode.ConfigInvalid,
      `The memory sandbox backend copies the source folder as it is; it cannot start from ${options.seed === undefined ? `"${String(from)}"` : 'a shared snapshot store'}. Use the git backend for that.`,
      { details: { id, from: String(from) } },
    );
  }
  const source = await realSourceDir(options.source);
  const container =
    options.dir === undefined
      ? await mkdtemp(
          join(
            await realpath(await ensureDir(options.baseDir ?? tmpdir())),
            'agents-memory-sandbox-',
          ),
        )
      : await prepareEmptyDir(options.dir, id);
  try {
    if (isInside(container, source)) {
      throw new AgentsError(
        AgentsErrorCode.SandboxFailed,
        `The sandbox folder ${container} is inside its source ${source}; a sandbox must live outside the user's files.`,
        { details: { id, source, container } },
      );
    }
    const treeDir = join(container, id);
    await cp(source, treeDir, {
      recursive: true,
      verbatimSymlinks: true,
      errorOnExist: true,
      force: false,
      filter: (path) => relative(source, path).split(sep)[0] !== '.git',
    });
    await mkdir(join(container, 'records'));
    const root = await realpath(treeDir);
    const blobs = new Map<string, Buffer>();
    const tree = await readTree(root, blobs);
    const listing = [...tree].map(([path, { mode, id: blob }]) => `${mode} ${blob}\t${path}`);
    const base = createHash('sha1')
      .update(`base\0${id}\0${listing.join('\0')}`)
      .digest('hex');
    const state: MemoryState = {
      id,
      container,
      root,
      source,
      base,
      head: base,
      blobs,
      snapshots: new Map([[base, tree]]),
      open: true,
    };
    STATES.set(container, state);
    return new MemorySandbox(state);
  } catch (error) {
    await rm(container, { recursive: true, force: true }).catch(() => undefined);
    if (AgentsError.isInstance(error)) throw error;
    throw new AgentsError(
      AgentsErrorCode.SandboxFailed,
      `Could not create sandbox "${id}" from ${source}: ${errorMessage(error)}`,
      { cause: error, details: { id, source } },
    );
  }
}

async function ensureDir(dir: string): Promise<string> {
  await mkdir(dir, { recursive: true });
  return dir;
}

/**
 * The in-memory backend: plain-copy trees, snapshots in this process. `open` reopens a sandbox
 * this process kept (`close({ remove: false })`); one from another process cannot be, since its
 * snapshots died with it.
 */
export const memorySandboxBackend: SandboxBackend = {
  name: 'memory',
  description:
    'a copy of your files with snapshots held in memory: fast, gone when the process ends, so a thread gets a temporary sandbox as with a memory checkpointer; it starts from `worktree` only',
  persistent: false,
  create,
  async open(options: OpenSandboxOptions): Promise<ReopenedSandbox> {
    const dir = resolve(options.dir);
    const state = STATES.get(dir);
    if (state !== undefined) {
      if (options.id !== undefined && options.id !== state.id) {
        throw new AgentsError(
          AgentsErrorCode.SandboxFailed,
          `Cannot reopen sandbox "${state.id}" in ${dir}: it is not "${options.id}".`,
          { details: { sandboxId: state.id, dir } },
        );
      }
      if (state.open) {
        throw new AgentsError(
          AgentsErrorCode.RunActive,
          `Sandbox "${state.id}" is open in this process already; close it before opening it again.`,
          { details: { sandboxId: state.id } },
        );
      }
      state.open = true;
      return Object.assign(new MemorySandbox(state), { reopened: true as const });
    }
    if (options.create === false || options.source === undefined) {
      throw new AgentsError(
        AgentsErrorCode.SandboxFailed,
        `No sandbox in ${dir} in this process; the memory backend keeps snapshots only while the process that made them runs.`,
        { details: { dir } },
      );
    }
    const made = await create({
      source: options.source,
      dir,
      ...(options.id === undefined ? {} : { id: options.id }),
      ...(options.from === undefined ? {} : { from: options.from }),
      ...(options.seed === undefined ? {} : { seed: options.seed }),
      ...(options.signal === undefined ? {} : { signal: options.signal }),
    });
    return Object.assign(made, { reopened: false as const });
  },
  async list({ baseDir }) {
    const base = resolve(baseDir);
    return [...STATES.values()]
      .filter((state) => isInside(state.container, base))
      .map(({ id, container, source }) => ({ id, dir: container, source }));
  },
  async remove(dir) {
    const state = STATES.get(resolve(dir));
    if (state === undefined) return false;
    if (state.open) {
      throw new AgentsError(
        AgentsErrorCode.RunActive,
        `Sandbox "${state.id}" is open in this process; close it before removing it.`,
        { details: { sandboxId: state.id } },
      );
    }
    await removeState(state);
    return true;
  },
};
