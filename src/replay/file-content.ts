/**
 * The file side of a cassette: files as JSON (UTF-8 text, else base64), secrets and machine
 * paths redacted as in the rest of the cassette (plus `NAME=value` and `"name": "value"` lines
 * under a secret-looking name, the audit's rule for names), and the tree id a recording and a
 * replay compare: the SHA-256 of a snapshot's listing (mode, content id and path of every file),
 * read through the snapshot store's public API, so any sandbox backend has one.
 */
import { createHash } from 'node:crypto';
import { isSecretName } from '../redact.js';
import type { SnapshotEntry, SnapshotStore } from '../sandbox/backend.js';
import type { ListedFile, RecordedFile } from './cassette.js';
import type { CassetteRedactor } from './cassette-redact.js';

const REDACTED = '***';
const ASSIGNMENT = /^(\s*(?:export\s+)?)([A-Za-z_][\w.-]*)(\s*[=:]\s*)(\S.*)$/;
const JSON_PAIR = /("([A-Za-z_][\w.-]*)"\s*:\s*)"(?:[^"\\]|\\.)*"/g;

/** `text` with the values of secret-looking assignments masked, line by line. */
function maskAssignments(text: string): string {
  return text
    .split('\n')
    .map((line) => {
      const withJson = line.replace(JSON_PAIR, (hit, head: string, name: string) =>
        isSecretName(name) ? `${head}"${REDACTED}"` : hit,
      );
      const match = ASSIGNMENT.exec(withJson);
      if (match === null || !isSecretName(match[2]!) || match[4] === `"${REDACTED}"`) {
        return withJson;
      }
      return `${match[1]}${match[2]}${match[3]}${REDACTED}`;
    })
    .join('\n');
}

/** True when `bytes` are UTF-8 text a JSON string can carry back unchanged. */
function isText(bytes: Buffer): boolean {
  if (bytes.includes(0)) return false;
  return Buffer.from(bytes.toString('utf8'), 'utf8').equals(bytes);
}

/**
 * A file's bytes as a cassette holds them, redacted; `redacted` with the real bytes' content
 * `id` (what the tree ids hold, so a replay still checks them) when that changed them.
 */
export function recordFile(
  path: string,
  mode: string,
  bytes: Buffer,
  redact: CassetteRedactor,
  id?: string,
): RecordedFile {
  if (!isText(bytes)) return { path, mode, base64: bytes.toString('base64') };
  const text = bytes.toString('utf8');
  const written = maskAssignments(redact(text) as string);
  if (written === text) return { path, mode, text };
  return { path, mode, text: written, redacted: true, ...(id === undefined ? {} : { id }) };
}

/** The bytes a recorded file stands for (its redacted form, when it was redacted). */
export function fileBytes(file: RecordedFile): Buffer {
  if (file.base64 !== undefined) return Buffer.from(file.base64, 'base64');
  return Buffer.from(file.text ?? '', 'utf8');
}

/** The tree id of a listing: SHA-256 over `mode id\tpath` lines, sorted by path. */
export function treeIdOf(entries: readonly SnapshotEntry[]): string {
  const hash = createHash('sha256');
  for (const entry of [...entries].sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0)))
    hash.update(`${entry.mode} ${entry.id}\t${entry.path}\n`);
  return `sha256:${hash.digest('hex')}`;
}

/** The tree id of snapshot `sha` of `store`. */
export async function snapshotTreeId(store: SnapshotStore, sha: string): Promise<string> {
  return treeIdOf(await store.listTree(sha));
}

/**
 * How many bytes of file content a base may hold in a cassette; a larger project's base is a
 * listing of content ids instead, so the cassette does not carry the project every time.
 */
export const BASE_CONTENT_BUDGET = 256 * 1024;

/**
 * Every file of snapshot `sha` as a cassette holds it, sorted by path; past `budget` bytes, every
 * file as a `listing` entry (path, mode, content id) instead, and no content.
 */
export async function recordTree(
  store: SnapshotStore,
  sha: string,
  redact: CassetteRedactor,
  budget = BASE_CONTENT_BUDGET,
): Promise<{ tree: string; files: RecordedFile[]; listing?: ListedFile[] }> {
  const entries = await store.listTree(sha);
  // A nested repository kept as a gitlink has no content here; its id is in the tree id.
  const kept = entries.filter((entry) => entry.mode !== '160000');
  const files: RecordedFile[] = [];
  let total = 0;
  for (const entry of kept) {
    const bytes = await store.readBlob(entry.id);
    total += bytes.length;
    if (total > budget) {
      const listing = kept.map(({ path, mode, id }) => ({ path, mode, id }));
      return { tree: treeIdOf(entries), files: [], listing };
    }
    files.push(recordFile(entry.path, entry.mode, bytes, redact, entry.id));
  }
  return { tree: treeIdOf(entries), files };
}
