import type { ServerLogger } from './server-logger.js';

/**
 * A server's stderr: the last `bufferBytes` kept for error messages, and each line forwarded
 * to the logger at most `linesPerSecond` times a second (the rest counted, and the count
 * logged), so a chatty server cannot flood the host's log.
 */
export class StderrBuffer {
  private chunks: Buffer[] = [];
  private bytes = 0;
  private partialLine = '';
  private windowStart = 0;
  private windowLines = 0;
  private suppressed = 0;

  constructor(
    private readonly serverName: string,
    private readonly logger: ServerLogger,
    private readonly bufferBytes: number,
    private readonly linesPerSecond: number,
  ) {}

  push(chunk: Buffer): void {
    this.chunks.push(chunk);
    this.bytes += chunk.length;
    while (this.bytes > this.bufferBytes && this.chunks.length > 0) {
      const first = this.chunks[0]!;
      const excess = this.bytes - this.bufferBytes;
      if (first.length <= excess) {
        this.chunks.shift();
        this.bytes -= first.length;
      } else {
        this.chunks[0] = first.subarray(excess);
        this.bytes -= excess;
      }
    }
    this.forward(chunk.toString('utf8'));
  }

  /** The last `maxBytes` of stderr, cut at a line start. */
  tail(maxBytes: number): string {
    if (this.bytes === 0) return '';
    const all = Buffer.concat(this.chunks);
    let tail = all.subarray(Math.max(0, all.length - maxBytes));
    if (tail.length < all.length) {
      // Start at a line boundary so the tail reads cleanly.
      const newline = tail.indexOf(10);
      if (newline !== -1 && newline < tail.length - 1) tail = tail.subarray(newline + 1);
    }
    return tail.toString('utf8').trimEnd();
  }

  private forward(text: string): void {
    const lines = (this.partialLine + text).split('\n');
    this.partialLine = (lines.pop() ?? '').slice(-4096);
    const now = Date.now();
    if (now - this.windowStart >= 1000) {
      if (this.suppressed > 0) {
        this.logger.warn(
          `Server "${this.serverName}": ${this.suppressed} stderr lines not logged (rate limit)`,
        );
      }
      this.windowStart = now;
      this.windowLines = 0;
      this.suppressed = 0;
    }
    for (const line of lines) {
      if (this.windowLines >= this.linesPerSecond) {
        this.suppressed += 1;
        continue;
      }
      this.windowLines += 1;
      this.logger.info(`[${this.serverName}] ${line.slice(0, 4096)}`, {
        serverName: this.serverName,
        stream: 'stderr',
      });
    }
  }
}
