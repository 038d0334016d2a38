import { readFile } from 'node:fs/promises';
import { z } from 'zod';
import { AgentsError, AgentsErrorCode, errorMessage, isErrno } from '../errors.js';
import type { ToolDescriptor } from '../core/tool-descriptor.js';
import { writeFileAtomic } from '../core/atomic-write.js';

/** The definition of a tool as it was when it was first allowed or approved. */
export interface ToolPin {
  toolId: string;
  /** `ToolDescriptor.fingerprint` at approval time (sha256 of the whole wire definition). */
  fingerprint: string;
  /** ISO time of the approval. */
  approvedAt: string;
  /** `policy` when a rule or the mode allowed it, otherwise who approved (`user` by default). */
  approvedBy: string;
}

/** Read access to pins; all `decide()` needs. */
export interface PinLookup {
  get(toolId: string): ToolPin | undefined;
}

/**
 * A network host a human approved for one server (policy `network` rule `ask`), keyed
 * `SERVER/HOST:PORT` (see {@link hostPinKey}): later connections to it are allowed.
 */
export interface HostPin {
  key: string;
  approvedAt: string;
  approvedBy: string;
}

/** The key of a host pin: the server that connects, and the host and port it connects to. */
export function hostPinKey(serverName: string, host: string, port: number): string {
  return `${serverName}/${host.includes(':') ? `[${host}]` : host}:${port}`;
}

/** A pin store: pins are written at a tool's first approval and re-written on re-approval. */
export interface PinStore extends PinLookup {
  /** The JSON file backing the store, or undefined for an in-memory store. */
  readonly file: string | undefined;
  /** Pins `descriptor.fingerprint` for `descriptor.id` (replacing an older pin) and persists it. */
  pin(descriptor: Pick<ToolDescriptor, 'id' | 'fingerprint'>, approvedBy: string): Promise<ToolPin>;
  /** Removes a pin (the next call is treated as a first use). */
  unpin(toolId: string): Promise<void>;
  list(): ToolPin[];
  /** The approval of a network host, by {@link hostPinKey}. */
  getHost(key: string): HostPin | undefined;
  /** Pins a network host (after a human approved it) and persists it. */
  pinHost(key: string, approvedBy: string): Promise<HostPin>;
  listHosts(): HostPin[];
  /** Re-reads the file (another process may have approved tools meanwhile). */
  reload(): Promise<void>;
}

const PinFileSchema = z.object({
  version: z.literal(1),
  pins: z.record(
    z.string(),
    z.object({
      fingerprint: z.string(),
      approvedAt: z.string(),
      approvedBy: z.string(),
    }),
  ),
  /** Approved network hosts (added later: absent in older files). */
  hosts: z
    .record(z.string(), z.object({ approvedAt: z.string(), approvedBy: z.string() }))
    .optional(),
});

/** Everything a pin file holds. */
interface PinFile {
  pins: Map<string, ToolPin>;
  hosts: Map<string, HostPin>;
}

/** The default pin file name inside a workspace folder. */
export const DEFAULT_PIN_FILE = 'pins.json';

/** An in-memory pin store (tests, or runs that must not remember approvals). */
export function createMemoryPinStore(initial: readonly ToolPin[] = []): PinStore {
  return new PinStoreImpl(undefined, {
    pins: new Map(initial.map((pin) => [pin.toolId, pin])),
    hosts: new Map(),
  });
}

/**
 * Opens (or starts) a JSON pin file, e.g. `<workspace>/pins.json`. A missing file is an empty
 * store; a corrupt one throws `CONFIG_INVALID` naming the file (delete it to re-approve all tools).
 * Writes are atomic (temp file + rename) and merge with what other processes wrote meanwhile.
 */
export async function createPinStore(file: string): Promise<PinStore> {
  const store = new PinStoreImpl(file, await readPinFile(file));
  return store;
}

async function readPinFile(file: string): Promise<PinFile> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (error) {
    if (isErrno(error, 'ENOENT')) return { pins: new Map(), hosts: new Map() };
    throw new AgentsError(
      AgentsErrorCode.ConfigInvalid,
      `Cannot read the pin file ${file}: ${errorMessage(error)}.`,
      {
        cause: error,
        details: { file },
      },
    );
  }
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (error) {
    throw corrupt(file, error);
  }
  const parsed = PinFileSchema.safeParse(raw);
  if (!parsed.success) throw corrupt(file, parsed.error);
  const pins = new Map<string, ToolPin>();
  for (const [toolId, pin] of Object.entries(parsed.data.pins))
    pins.set(toolId, { toolId, ...pin });
  const hosts = new Map<string, HostPin>();
  for (const [key, pin] of Object.entries(parsed.data.hosts ?? {})) hosts.set(key, { key, ...pin });
  return { pins, hosts };
}

function corrupt(file: string, cause: unknown): AgentsError {
  return new AgentsError(
    AgentsErrorCode.ConfigInvalid,
    `The pin file ${file} is not a valid pin store (${errorMessage(cause)}). ` +
      'Delete it to start over; every tool will then need approval again.',
    { cause, details: { file } },
  );
}

class PinStoreImpl implements PinStore {
  readonly file: string | undefined;
  #pins: Map<string, ToolPin>;
  #hosts: Map<string, HostPin>;
  // Serializes writes so two approvals in one process never interleave their read-merge-write.
  #queue: Promise<unknown> = Promise.resolve();

  constructor(file: string | undefined, contents: PinFile) {
    this.file = file;
    this.#pins = contents.pins;
    this.#hosts = contents.hosts;
  }

  getHost(key: string): HostPin | undefined {
    return this.#hosts.get(key);
  }

  listHosts(): HostPin[] {
    return [...this.#hosts.values()];
  }

  pinHost(key: string, approvedBy: string): Promise<HostPin> {
    const pin: HostPin = { key, approvedAt: new Date().toISOString(), approvedBy };
    this.#hosts.set(key, pin);
    return this.#persist((contents) => contents.hosts.set(key, pin)).then(() => pin);
  }

  get(toolId: string): ToolPin | undefined {
    return this.#pins.get(toolId);
  }

  list(): ToolPin[] {
    return [...this.#pins.values()];
  }

  async reload(): Promise<void> {
    if (this.file === undefined) return;
    const contents = await readPinFile(this.file);
    this.#pins = contents.pins;
    this.#hosts = contents.hosts;
  }

  pin(
    descriptor: Pick<ToolDescriptor, 'id' | 'fingerprint'>,
    approvedBy: string,
  ): Promise<ToolPin> {
    const pin: ToolPin = {
      toolId: descriptor.id,
      fingerprint: descriptor.fingerprint,
      approvedAt: new Date().toISOString(),
      approvedBy,
    };
    this.#pins.set(pin.toolId, pin);
    return this.#persist((contents) => contents.pins.set(pin.toolId, pin)).then(() => pin);
  }

  unpin(toolId: string): Promise<void> {
    this.#pins.delete(toolId);
    return this.#persist((contents) => contents.pins.delete(toolId));
  }

  #persist(change: (contents: PinFile) => void): Promise<void> {
    const file = this.file;
    if (file === undefined) return Promise.resolve();
    const run = async (): Promise<void> => {
      // Merge with the file as it is now: another process may have pinned other tools.
      const current = await readPinFile(file).catch((): PinFile => ({
        pins: new Map(),
        hosts: new Map(),
      }));
      change(current);
      for (const [toolId, pin] of current.pins)
        if (!this.#pins.has(toolId)) this.#pins.set(toolId, pin);
      for (const [key, pin] of current.hosts) if (!this.#hosts.has(key)) this.#hosts.set(key, pin);
      const hosts = [...current.hosts.values()].sort((a, b) => a.key.localeCompare(b.key));
      const body = {
        version: 1,
        pins: Object.fromEntries(
          [...current.pins.values()]
            .sort((a, b) => a.toolId.localeCompare(b.toolId))
            .map((pin) => [
              pin.toolId,
              {
                fingerprint: pin.fingerprint,
                approvedAt: pin.approvedAt,
                approvedBy: pin.approvedBy,
              },
            ]),
        ),
        ...(hosts.length === 0
          ? {}
          : {
              hosts: Object.fromEntries(
                hosts.map((pin) => [
                  pin.key,
                  { approvedAt: pin.approvedAt, approvedBy: pin.approvedBy },
                ]),
              ),
            }),
      };
      await writeFileAtomic(file, `${JSON.stringify(body, null, 2)}\n`);
    };
    const next = this.#queue.then(run, run);
    this.#queue = next.catch(() => undefined);
    return next;
  }
}
