import { createHash } from 'node:crypto';
import { mkdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { crc32 } from 'node:zlib';
import { objectId, storedMaxBytes, writeLooseObject, zlibWrap } from './git-objects.js';

/**
 * The objects of one watched snapshot, written together (issue 29). Creating a file costs
 * 0.1–0.3 ms on this ext4 whatever its size (most of a 10-file snapshot's ~22 loose objects),
 * so a snapshot with more than a few objects writes them as one pack file and its index (two
 * files) instead: git reads packs in `objects/pack` like loose objects. Small batches stay
 * loose, so one-file snapshots add no pack; packs pile up otherwise, and the caller rolls them
 * up now and then (`git repack --geometric`, off the hot path; see WatchedSnapshots).
 */

/**
 * Fewer objects than this are written loose (a pack is two files): a one-file snapshot (blob,
 * folder, root, commit) is packed too; a root-level delete or mode change (root, commit) is not.
 */
export const PACK_MIN_OBJECTS = 3;
/** Objects larger than this are written loose at once, never held for a pack. */
const PACK_OBJECT_MAX_BYTES = 1024 * 1024;
/** A batch holding this many bytes is written out before it grows further (bounded memory). */
const PACK_MAX_BYTES = 32 * 1024 * 1024;

const PACK_TYPES: Record<string, number> = { commit: 1, tree: 2, blob: 3, tag: 4 };

interface PendingObject {
  type: string;
  content: Buffer;
}

/** Objects named now (their ids are known at once), written on {@link ObjectBatch.flush}. */
export class ObjectBatch {
  readonly #objectsDir: string;
  #pending = new Map<string, PendingObject>();
  #bytes = 0;
  /** Packs written by this batch so far (the caller decides when to roll them up). */
  packsWritten = 0;

  constructor(objectsDir: string) {
    this.#objectsDir = objectsDir;
  }

  /** Names an object and keeps it for the next flush; a large one is written loose at once. */
  add(type: string, content: Buffer): string {
    if (content.length > PACK_OBJECT_MAX_BYTES)
      return writeLooseObject(this.#objectsDir, type, content);
    const sha = objectId(type, content);
    if (this.#pending.has(sha)) return sha;
    this.#pending.set(sha, { type, content });
    this.#bytes += content.length;
    if (this.#bytes >= PACK_MAX_BYTES) this.flush();
    return sha;
  }

  get size(): number {
    return this.#pending.size;
  }

  /**
   * Writes every pending object: loose when there are few, else as one pack. Only after it
   * returns may anything (a tree, a commit, a ref) that names them be written to the store.
   */
  flush(): void {
    const pending = this.#pending;
    this.#pending = new Map();
    this.#bytes = 0;
    if (pending.size === 0) return;
    if (pending.size < PACK_MIN_OBJECTS) {
      for (const { type, content } of pending.values())
        writeLooseObject(this.#objectsDir, type, content);
      return;
    }
    writePack(this.#objectsDir, pending);
    this.packsWritten++;
  }
}

/**
 * Writes `objects` (by id) as one pack (version 2, no deltas) and its index (version 2) into
 * `objectsDir/pack`, named by the pack's checksum as git names them. The pack is renamed into
 * place first, then its index: git only looks at a pack once its `.idx` is there, so a reader
 * (or a crash) never meets half a pack; a pack left without its index is ignored by git.
 */
export function writePack(objectsDir: string, objects: ReadonlyMap<string, PendingObject>): string {
  const ids = [...objects.keys()].sort();
  const parts: Buffer[] = [];
  const header = Buffer.alloc(12);
  header.write('PACK', 0, 'latin1');
  header.writeUInt32BE(2, 4);
  header.writeUInt32BE(ids.length, 8);
  parts.push(header);
  const offsets: number[] = [];
  const crcs: number[] = [];
  let offset = header.length;
  for (const id of ids) {
    const { type, content } = objects.get(id)!;
    const entry = Buffer.concat([
      entryHeader(PACK_TYPES[type]!, content.length),
      zlibWrap(content, storedMaxBytes(type)),
    ]);
    offsets.push(offset);
    crcs.push(crc32(entry));
    parts.push(entry);
    offset += entry.length;
  }
  const packHash = createHash('sha1');
  for (const part of parts) packHash.update(part);
  const packSum = packHash.digest();
  parts.push(packSum);
  const idx = packIndex(ids, crcs, offsets, packSum);
  const dir = join(objectsDir, 'pack');
  mkdirSync(dir, { recursive: true });
  const name = `pack-${packSum.toString('hex')}`;
  const suffix = `${process.pid}_${Math.random().toString(36).slice(2)}`;
  const tempPack = join(dir, `tmp_pack_${suffix}`);
  const tempIdx = join(dir, `tmp_idx_${suffix}`);
  try {
    writeFileSync(tempPack, Buffer.concat(parts), { mode: 0o444, flag: 'wx' });
    writeFileSync(tempIdx, idx, { mode: 0o444, flag: 'wx' });
    renameSync(tempPack, join(dir, `${name}.pack`));
    renameSync(tempIdx, join(dir, `${name}.idx`));
  } catch (error) {
    rmSync(tempPack, { force: true });
    rmSync(tempIdx, { force: true });
    throw error;
  }
  return name;
}

/** A pack entry's header: type and size, seven bits a byte after the first four of size. */
function entryHeader(type: number, size: number): Buffer {
  const bytes: number[] = [];
  let byte = (type << 4) | (size & 0x0f);
  let rest = Math.floor(size / 16);
  while (rest > 0) {
    bytes.push(byte | 0x80);
    byte = rest & 0x7f;
    rest = Math.floor(rest / 128);
  }
  bytes.push(byte);
  return Buffer.from(bytes);
}

/** A version-2 pack index of sorted `ids` (offsets below 2 GiB: a batch is bounded). */
function packIndex(
  ids: readonly string[],
  crcs: number[],
  offsets: number[],
  packSum: Buffer,
): Buffer {
  const count = ids.length;
  const out = Buffer.alloc(8 + 256 * 4 + count * (20 + 4 + 4) + 20 + 20);
  out.writeUInt32BE(0xff744f63, 0);
  out.writeUInt32BE(2, 4);
  // Fan-out: entry b counts the ids whose first byte is at most b.
  const firstBytes = ids.map((id) => parseInt(id.slice(0, 2), 16));
  let at = 0;
  for (let byte = 0; byte < 256; byte++) {
    while (at < count && firstBytes[at]! <= byte) at++;
    out.writeUInt32BE(at, 8 + byte * 4);
  }
  let pos = 8 + 256 * 4;
  for (const id of ids) pos += out.write(id, pos, 'hex');
  for (const crc of crcs) pos = out.writeUInt32BE(crc >>> 0, pos);
  for (const offset of offsets) pos = out.writeUInt32BE(offset, pos);
  pos += packSum.copy(out, pos);
  createHash('sha1').update(out.subarray(0, pos)).digest().copy(out, pos);
  return out;
}
