import { randomBytes } from 'node:crypto';
import { rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { MARKER_FILE, type SandboxMarker } from '../sandbox-marker.js';

/**
 * The marker writes of one sandbox, the watched snapshot's off its path (issue 37). Replacing
 * the marker file (a rename over it) makes ext4 write the new file's data out first
 * (`auto_da_alloc`): measured at 4 ms of an 11 ms snapshot at p50 and most of its tail under
 * load (`bench/snapshot-tail.ts`, the `rest` phase). Nothing needs the marker before the next
 * open: the snapshot's objects and ref are written when it returns. A marker one snapshot behind
 * after a crash names an older head, and the tree on disk is scanned afresh by the first
 * snapshot of the next process, so nothing is lost. Writes go through the thread pool, one at a
 * time, in order; a synchronous write waits for them first ({@link settled}).
 */
export class MarkerWrites {
  readonly #runDir: string;
  #pending: Promise<void> = Promise.resolve();
  #failure: unknown;

  constructor(runDir: string) {
    this.#runDir = runDir;
  }

  /** Queues a write of `marker` as it is now; throws a queued write's failure instead. */
  later(marker: SandboxMarker): void {
    this.#throwFailure();
    const text = JSON.stringify(marker, null, 2);
    this.#pending = this.#pending
      .then(() => this.#write(text))
      .catch((error: unknown) => {
        this.#failure ??= error;
      });
  }

  /** Waits for the queued writes; throws the first that failed. */
  async settled(): Promise<void> {
    await this.#pending;
    this.#throwFailure();
  }

  /**
   * Temp file + rename, as `writeMarkerSync` does, and like it never makes the run dir: a sandbox
   * removed meanwhile stays removed (the write fails instead).
   */
  async #write(text: string): Promise<void> {
    const target = join(this.#runDir, MARKER_FILE);
    const temp = join(
      this.#runDir,
      `.${MARKER_FILE}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`,
    );
    try {
      await writeFile(temp, text, { flag: 'wx', mode: 0o644 });
      await rename(temp, target);
    } catch (error) {
      await rm(temp, { force: true });
      throw error;
    }
  }

  #throwFailure(): void {
    const failure = this.#failure;
    if (failure === undefined) return;
    this.#failure = undefined;
    throw failure;
  }
}
