import { createServer, type Server, type Socket } from 'node:net';
import { join } from 'node:path';
import { PassThrough, Writable } from 'node:stream';
import { main } from '../../src/cli/main.js';

/** The client every docs block calls as `agents` (plain JavaScript: one bare `node` start). */
export const AGENTS_CLIENT = join(import.meta.dirname, 'agents-client.mjs');

/** One `agents` call a docs block made, as the CLI saw it. */
export interface CliCall {
  argv: string[];
  cwd: string;
  code: number;
  /** True when the test stopped it (as Ctrl-C) while it ran: `agents serve` was serving. */
  stoppedWhileRunning: boolean;
}

/** A Unix socket that runs `agents` command lines with the CLI's `main`, in this process. */
export interface CliSocket {
  path: string;
  calls: CliCall[];
  close(): Promise<void>;
}

interface Header {
  argv: string[];
  cwd: string;
  /** Abort (as Ctrl-C) once the command has printed something: for `agents serve`. */
  stopWhenReady: boolean;
}

function frame(type: string, body: string | Buffer): Buffer {
  const payload = typeof body === 'string' ? Buffer.from(body) : body;
  const head = Buffer.alloc(5);
  head.write(type, 0);
  head.writeUInt32BE(payload.length, 1);
  return Buffer.concat([head, payload]);
}

function serve(socket: Socket, calls: CliCall[]): void {
  const stdin = new PassThrough();
  const controller = new AbortController();
  let buffered = Buffer.alloc(0);
  let started = false;
  let finished = false;
  let stoppedWhileRunning = false;
  const out = (type: 'o' | 'E', header: Header) =>
    new Writable({
      write(chunk: Buffer, _encoding, done) {
        if (!socket.destroyed) socket.write(frame(type, chunk));
        if (type === 'o' && header.stopWhenReady && !controller.signal.aborted)
          setTimeout(() => {
            stoppedWhileRunning = !finished;
            controller.abort(new Error('Interrupted by SIGINT'));
          }, 200);
        done();
      },
    });
  const start = (header: Header) => {
    started = true;
    void main(header.argv, {
      cwd: header.cwd,
      stdin,
      stdout: out('o', header),
      stderr: out('E', header),
      signal: controller.signal,
    }).then((code) => {
      finished = true;
      calls.push({ argv: header.argv, cwd: header.cwd, code, stoppedWhileRunning });
      if (!socket.destroyed) socket.end(frame('x', String(code)));
    });
  };
  socket.on('data', (chunk: Buffer) => {
    buffered = Buffer.concat([buffered, chunk]);
    while (buffered.length >= 5) {
      const length = buffered.readUInt32BE(1);
      if (buffered.length < 5 + length) break;
      const type = String.fromCharCode(buffered[0]!);
      const body = buffered.subarray(5, 5 + length);
      buffered = buffered.subarray(5 + length);
      if (type === 'i' && !started) start(JSON.parse(body.toString()) as Header);
      else if (type === 'd') stdin.write(body);
      else if (type === 'e') stdin.end();
      else if (type === 'k') controller.abort(new Error('Interrupted by SIGINT'));
    }
  });
  // The caller went away (killed): stop its command as Ctrl-C would.
  socket.on('close', () => {
    stdin.end();
    controller.abort(new Error('the docs test client closed'));
  });
  socket.on('error', () => undefined);
}

export async function startCliSocket(path: string): Promise<CliSocket> {
  const calls: CliCall[] = [];
  const server: Server = createServer((socket) => serve(socket, calls));
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(path, resolve);
  });
  return {
    path,
    calls,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
