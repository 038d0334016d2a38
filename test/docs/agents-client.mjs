// The docs test's `agents`: forwards argv, cwd and stdin over a Unix socket to the test process,
// which runs the CLI's `main` in process (test/docs/cli-socket.ts), and exits with its code.
// Plain JavaScript so each call costs one bare `node` start instead of a tsx compile of the CLI.
import { connect } from 'node:net';

const HEADER = 0x69; // 'i': {argv, cwd, stopWhenReady}
const STDIN = 0x64; // 'd'
const STDIN_END = 0x65; // 'e'
const ABORT = 0x6b; // 'k': Ctrl-C
const socket = connect(process.env.AGENTS_DOCS_SOCKET);

function send(type, payload = Buffer.alloc(0)) {
  const body = Buffer.isBuffer(payload) ? payload : Buffer.from(payload);
  const head = Buffer.alloc(5);
  head.writeUInt8(type, 0);
  head.writeUInt32BE(body.length, 1);
  socket.write(Buffer.concat([head, body]));
}

send(
  HEADER,
  JSON.stringify({
    argv: process.argv.slice(2),
    cwd: process.cwd(),
    stopWhenReady: process.env.AGENTS_DOCS_STOP_WHEN_READY === '1',
  }),
);
process.stdin.on('data', (chunk) => send(STDIN, chunk));
process.stdin.on('end', () => send(STDIN_END));
process.stdin.on('error', () => send(STDIN_END));
for (const signal of ['SIGINT', 'SIGTERM']) process.on(signal, () => send(ABORT));

let buffered = Buffer.alloc(0);
socket.on('data', (chunk) => {
  buffered = Buffer.concat([buffered, chunk]);
  while (buffered.length >= 5) {
    const length = buffered.readUInt32BE(1);
    if (buffered.length < 5 + length) break;
    const type = String.fromCharCode(buffered[0]);
    const body = buffered.subarray(5, 5 + length);
    buffered = buffered.subarray(5 + length);
    if (type === 'o') process.stdout.write(body);
    else if (type === 'E') process.stderr.write(body);
    else if (type === 'x') {
      process.exitCode = Number(body.toString());
      process.stdin.destroy();
      socket.end();
    }
  }
});
socket.on('error', (error) => {
  process.stderr.write(`agents (docs test entry): ${error.message}\n`);
  process.exit(1);
});
