import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { AgentsErrorCode, ServerError } from '../../src/errors.js';
import { createManagedServer, type ManagedServer } from '../../src/servers/managed-server.js';
import type { ServerEventMap } from '../../src/servers/server-events.js';
import {
  expectFaultContained,
  faultServerConfig,
  groupGone,
  groupReaped,
  processGone,
  processReaped,
  receivedCall,
  receivedCancellation,
  resultText,
  startBesideSibling,
  toolEntry,
  waitFor,
  type FaultServerExtra,
} from './fixture.js';

const unhandled: unknown[] = [];
const onUnhandled = (reason: unknown): void => {
  unhandled.push(reason);
};
beforeAll(() => {
  process.on('unhandledRejection', onUnhandled);
});
afterAll(() => {
  process.off('unhandledRejection', onUnhandled);
  expect(unhandled).toEqual([]);
});

const open: ManagedServer[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((server) => server.close()));
});

// One healthy server runs next to every fault case in this file; each case checks it still
// answers from the same process (expectFaultContained).
let sibling: ManagedServer;
beforeAll(async () => {
  sibling = createManagedServer(faultServerConfig('sibling'));
  await sibling.start();
});
afterAll(async () => {
  const pid = sibling.pid;
  await sibling.close();
  expect(groupGone(pid)).toBe(true);
});

function track(server: ManagedServer): ManagedServer {
  open.push(server);
  return server;
}

const tool = toolEntry;

async function startedServer(
  ...args: Parameters<typeof faultServerConfig>
): Promise<ManagedServer> {
  const server = track(createManagedServer(faultServerConfig(...args)));
  await server.start();
  return server;
}

/** Starts the fault server in `mode` next to the healthy sibling (see expectFaultContained). */
function besideSibling(name: string, mode = 'normal', extra: FaultServerExtra = {}) {
  return startBesideSibling(faultServerConfig(name, mode, extra), sibling, track);
}

async function expectServerError(promise: Promise<unknown>): Promise<ServerError> {
  const error = await promise.then(
    () => {
      throw new Error('expected a ServerError');
    },
    (reason: unknown) => reason,
  );
  expect(error).toBeInstanceOf(ServerError);
  return error as ServerError;
}

describe('managed server over stdio (fault server)', () => {
  it('starts, records protocol version and capabilities, lists tools, calls one, and leaves no process after close', async () => {
    const server = await startedServer('plain');
    expect(server.status).toBe('ready');
    expect(server.protocolVersion).toMatch(/^\d{4}-\d{2}-\d{2}$/);
    expect(server.serverInfo?.name).toBe('fault-server');
    expect(server.serverCapabilities?.tools?.listChanged).toBe(true);
    expect(server.entries().map((entry) => entry.descriptor.originalName)).toContain('echo');
    const result = await tool(server, 'echo').execute({ text: 'hello' }, {});
    expect(resultText(result)).toBe('hello');
    const pid = server.pid;
    await server.close();
    expect(server.status).toBe('closed');
    expect(groupGone(pid)).toBe(true);
    expect(await groupReaped(pid)).toBe(true);
  });

  it('gives the child only the safe env list plus configured variables', async () => {
    process.env.AGENTS_TEST_SECRET_TOKEN = 'do-not-leak';
    try {
      const server = await startedServer('env', 'normal', { env: { CONFIGURED_VAR: '1' } });
      const names = JSON.parse(resultText(await tool(server, 'env').execute({}, {}))) as string[];
      expect(names).toContain('CONFIGURED_VAR');
      expect(names).not.toContain('AGENTS_TEST_SECRET_TOKEN');
      expect(
        names.every((name) =>
          ['HOME', 'LOGNAME', 'PATH', 'SHELL', 'TERM', 'USER', 'CONFIGURED_VAR'].includes(name),
        ),
      ).toBe(true);
    } finally {
      delete process.env.AGENTS_TEST_SECRET_TOKEN;
    }
  });

  it('crash during a write-class call: typed error with signal and stderr, not retried, then restarts', async () => {
    const fault = besideSibling('crashy', 'crash-on-call');
    await fault.started;
    const server = fault.server;
    const restarts: ServerEventMap['server-restart'][] = [];
    const starts: ServerEventMap['server-start'][] = [];
    server.on('server-restart', (event) => restarts.push(event));
    server.on('server-start', (event) => starts.push(event));
    const firstPid = server.pid;
    const started = Date.now();
    const error = await expectServerError(tool(server, 'write_note').execute({ text: 'x' }, {}));
    // Under callMs (5 s): the crash itself ended the call, not the call timeout.
    expect(Date.now() - started).toBeLessThan(4_500);
    expect(error.code).toBe(AgentsErrorCode.ServerUnavailable);
    expect(error.details).toMatchObject({
      serverName: 'crashy',
      phase: 'call',
      signal: 'SIGKILL',
      toolName: 'write_note',
    });
    expect(error.message).toContain('during tools/call "write_note"');
    expect(error.message).toContain('SIGKILL');
    expect(groupGone(firstPid)).toBe(true);
    expect(await groupReaped(firstPid)).toBe(true);
    await waitFor(() => server.status === 'ready', 5_000, 'restart');
    expect(restarts).toHaveLength(1);
    expect(starts).toHaveLength(1);
    expect(starts[0]!.restart).toBe(true);
    expect(server.pid).not.toBe(firstPid);
    await expectFaultContained(fault);
  });

  it('crash during a read-only call is retried once after the restart, then fails with the crash', async () => {
    const fault = besideSibling('crashy-read', 'crash-on-call', { trusted: true });
    await fault.started;
    const server = fault.server;
    const restarts: number[] = [];
    server.on('server-restart', (event) => restarts.push(event.attempt));
    const error = await expectServerError(tool(server, 'echo').execute({ text: 'x' }, {}));
    expect(error.details.signal).toBe('SIGKILL');
    expect(restarts).toEqual([1, 2]);
    // The first process and the restarted one that crashed on the retry (a third may be starting).
    expect(fault.pgids().length).toBeGreaterThanOrEqual(2);
    await expectFaultContained(fault);
  });

  it('crash tool: stderr tail is carried in the error; other servers are unaffected', async () => {
    const fault = besideSibling('a', 'normal', { restart: { enabled: false } });
    await fault.started;
    const crashy = fault.server;
    const error = await expectServerError(tool(crashy, 'crash').execute({}, {}));
    expect(error.details.stderrTail).toContain('crash: about to SIGKILL myself');
    expect(crashy.status).toBe('failed');
    const after = await expectServerError(tool(crashy, 'echo').execute({ text: 'x' }, {}));
    expect(after.code).toBe(AgentsErrorCode.ServerUnavailable);
    await expectFaultContained(fault);
  });

  it('hang during a call: times out, the server gets notifications/cancelled for that request and stays up (ping works)', async () => {
    // A generous ping budget: on a loaded machine a slow health ping must not restart the server.
    const fault = besideSibling('hangs', 'normal', {
      timeouts: { callMs: 300, pingMs: 10_000 },
    });
    await fault.started;
    const server = fault.server;
    const pid = server.pid;
    const error = await expectServerError(tool(server, 'hang').execute({}, {}));
    expect(error.code).toBe(AgentsErrorCode.Timeout);
    expect(error.message).toContain('300 ms');
    const requestId = await receivedCall(server, 'hang');
    const saw = await receivedCancellation(server, requestId);
    expect(saw.cancelled).toHaveLength(1);
    expect(saw.cancelled[0]!.reason).toMatch(/timed out/i);
    await server.ping();
    expect(server.pid).toBe(pid);
    expect(resultText(await tool(server, 'echo').execute({ text: 'ok' }, {}))).toBe('ok');
    await expectFaultContained(fault);
  });

  it('progress forever: progress reaches the callback, and the maximum still ends the call', async () => {
    const fault = besideSibling('progress', 'normal', {
      // Progress comes every 20 ms and restarts the per-call timeout, which leaves room for a
      // loaded machine; only the maximum can end the call.
      timeouts: { callMs: 600, maxCallMs: 1_500, resetOnProgress: true },
    });
    await fault.started;
    const server = fault.server;
    const progress: number[] = [];
    const started = Date.now();
    const error = await expectServerError(
      tool(server, 'progress_forever').execute(
        {},
        {},
        { onProgress: (update) => progress.push(update.progress) },
      ),
    );
    expect(error.code).toBe(AgentsErrorCode.Timeout);
    expect(error.message).toContain('maximum of 1500 ms');
    expect(Date.now() - started).toBeGreaterThanOrEqual(1_450);
    expect(progress.length).toBeGreaterThan(5);
    expect(server.status).toBe('ready');
    // The cap cancels the call on the server too: its progress loop stops.
    await receivedCancellation(server, await receivedCall(server, 'progress_forever'));
    await expectFaultContained(fault);
  });

  it('an aborted signal cancels the call with a typed ABORTED error', async () => {
    const fault = besideSibling('abortable');
    await fault.started;
    const server = fault.server;
    const controller = new AbortController();
    const pending = expectServerError(
      tool(server, 'hang').execute({}, { signal: controller.signal }),
    );
    // Abort once the server is working on the call, so the cancellation has something to cancel.
    const requestId = await receivedCall(server, 'hang');
    controller.abort(new Error('run cancelled'));
    const error = await pending;
    expect(error.code).toBe(AgentsErrorCode.Aborted);
    const saw = await receivedCancellation(server, requestId);
    expect(saw.cancelled.find((entry) => entry.requestId === requestId)?.reason).toContain(
      'run cancelled',
    );
    expect(resultText(await tool(server, 'echo').execute({ text: 'ok' }, {}))).toBe('ok');
    await expectFaultContained(fault);
  });

  it('exit during initialize: SERVER_START_FAILED with exit code and "missing API key"', async () => {
    const fault = besideSibling('needs-key', 'exit-1-during-init');
    const server = fault.server;
    const error = await expectServerError(fault.started);
    expect(error.code).toBe(AgentsErrorCode.ServerStartFailed);
    expect(error.details).toMatchObject({
      serverName: 'needs-key',
      phase: 'initialize',
      exitCode: 1,
    });
    expect(error.details.stderrTail).toContain('Error: missing API key');
    expect(error.message).toContain('exited with code 1 during initialize');
    expect(error.message).toContain('fault-server.mjs');
    expect(server.status).toBe('failed');
    await expectFaultContained(fault);
  });

  it('never answers initialize: TIMEOUT after startupMs and the process group is killed', async () => {
    const started = Date.now();
    const fault = besideSibling('mute', 'never-initialize', {
      timeouts: { startupMs: 500 },
    });
    const error = await expectServerError(fault.started);
    expect(error.code).toBe(AgentsErrorCode.Timeout);
    expect(error.details.phase).toBe('initialize');
    expect(error.message).toContain('500 ms');
    // Bounds only: a hang would run into the test timeout; load on CI must not fail it.
    expect(Date.now() - started).toBeLessThan(8_000);
    // Killed by the failed start itself, before anyone calls close().
    const [pgid] = fault.pgids();
    expect(groupGone(pgid)).toBe(true);
    expect(await groupReaped(pgid)).toBe(true);
    await expectFaultContained(fault);
  });

  it('slow start within budget succeeds', async () => {
    const fault = besideSibling('slow-ok', 'slow-start=600', {
      timeouts: { startupMs: 5_000 },
    });
    await fault.started;
    expect(fault.server.status).toBe('ready');
    expect(resultText(await tool(fault.server, 'echo').execute({ text: 'late' }, {}))).toBe('late');
    await expectFaultContained(fault);
  });

  it('slow start over budget times out during initialize and its process is stopped', async () => {
    const fault = besideSibling('slow-bad', 'slow-start=5000', {
      timeouts: { startupMs: 400 },
    });
    const error = await expectServerError(fault.started);
    expect(error.code).toBe(AgentsErrorCode.Timeout);
    expect(error.details).toMatchObject({ serverName: 'slow-bad', phase: 'initialize' });
    expect(fault.server.status).toBe('failed');
    await expectFaultContained(fault);
  });

  it('a banner on stdout before initialize is skipped; calls work', async () => {
    const fault = besideSibling('banner', 'banner');
    await fault.started;
    expect(resultText(await tool(fault.server, 'echo').execute({ text: 'a' }, {}))).toBe('a');
    await expectFaultContained(fault);
  });

  it('garbage lines on stdout during calls are skipped; calls keep working', async () => {
    const fault = besideSibling('garbage', 'garbage');
    await fault.started;
    const garbage = fault.server;
    for (let index = 0; index < 3; index++) {
      expect(resultText(await tool(garbage, 'echo').execute({ text: `g${index}` }, {}))).toBe(
        `g${index}`,
      );
    }
    expect(garbage.pid).toBe(fault.pgids()[0]);
    await expectFaultContained(fault);
  });

  it('a huge line closes the server with an error naming the byte limit', async () => {
    const fault = besideSibling('huge-line', 'huge-line', { restart: { enabled: false } });
    await fault.started;
    const error = await expectServerError(tool(fault.server, 'echo').execute({ text: 'x' }, {}));
    expect(error.code).toBe(AgentsErrorCode.ProtocolError);
    expect(error.message).toContain(`exceeds ${16 * 1024 * 1024} bytes`);
    expect(error.details.serverName).toBe('huge-line');
    await expectFaultContained(fault);
  });

  it('a 50 MB result is refused with the frame limit, not a hang or an out-of-memory', async () => {
    const fault = besideSibling('huge-result', 'huge-result', {
      restart: { enabled: false },
    });
    await fault.started;
    const error = await expectServerError(tool(fault.server, 'echo').execute({ text: 'x' }, {}));
    expect(error.message).toContain('exceeds');
    expect(error.details).toMatchObject({ serverName: 'huge-result', phase: 'call' });
    await expectFaultContained(fault);
  });

  it('a missing command fails at spawn with ENOENT, never a hang', async () => {
    const config = { ...faultServerConfig('missing'), command: '/definitely/not/here-mcp' };
    const fault = startBesideSibling(config, sibling, track);
    const error = await expectServerError(fault.started);
    expect(error.code).toBe(AgentsErrorCode.ServerStartFailed);
    expect(error.details.phase).toBe('spawn');
    expect(error.message).toContain('ENOENT');
    await expectFaultContained(fault, { spawned: false });
  });

  it('stubborn server (ignores stdin EOF and SIGTERM) is killed within the bounded sequence', async () => {
    const fault = besideSibling('stubborn', 'stubborn', { timeouts: { shutdownMs: 300 } });
    await fault.started;
    const server = fault.server;
    const pid = server.pid;
    const started = Date.now();
    await Promise.all([server.close(), server.close()]);
    expect(Date.now() - started).toBeLessThan(8_000);
    expect(groupGone(pid)).toBe(true);
    expect(await groupReaped(pid)).toBe(true);
    await expectFaultContained(fault);
  });

  it('fork-grandchild: close resolves while the grandchild holds the pipes, and it is killed too', async () => {
    const fault = besideSibling('forks', 'fork-grandchild');
    await fault.started;
    const server = fault.server;
    const info = JSON.parse(resultText(await tool(server, 'info').execute({}, {}))) as {
      grandchildPid: number;
    };
    expect(processGone(info.grandchildPid)).toBe(false);
    const pid = server.pid;
    const started = Date.now();
    await server.close();
    expect(Date.now() - started).toBeLessThan(8_000);
    expect(groupGone(pid)).toBe(true);
    expect(await groupReaped(pid)).toBe(true);
    expect(await processReaped(info.grandchildPid)).toBe(true);
    await expectFaultContained(fault);
  });

  it('wrapper (sh -c) that forks: nothing of the group remains after close', async () => {
    const config = {
      ...faultServerConfig('wrapped'),
      allowShell: true,
      command: '/bin/sh',
      args: [
        '-c',
        `"${process.execPath}" "${faultServerConfig('x').args[0]}" fork-grandchild; echo done`,
      ],
    };
    const fault = startBesideSibling(config, sibling, track);
    await fault.started;
    const server = fault.server;
    const info = JSON.parse(resultText(await tool(server, 'info').execute({}, {}))) as {
      pid: number;
      grandchildPid: number;
    };
    const pgid = server.pid;
    expect(info.pid).not.toBe(pgid);
    await server.close();
    expect(groupGone(pgid)).toBe(true);
    expect(await groupReaped(pgid)).toBe(true);
    expect(await processReaped(info.pid)).toBe(true);
    expect(await processReaped(info.grandchildPid)).toBe(true);
    await expectFaultContained(fault);
  });

  it('stderr flood: calls still answered, stderr kept bounded', async () => {
    const lines: string[] = [];
    const logger = {
      debug() {},
      info: (message: string) => lines.push(message),
      warn() {},
      error() {},
    };
    const fault = startBesideSibling(faultServerConfig('flood', 'stderr-flood'), sibling, track, {
      logger,
    });
    await fault.started;
    const server = fault.server;
    for (let index = 0; index < 3; index++) {
      expect(resultText(await tool(server, 'echo').execute({ text: `f${index}` }, {}))).toBe(
        `f${index}`,
      );
    }
    const stdio = (
      server as unknown as {
        connection: { serverTransport: { stdio: { stderrTail(n: number): string } } };
      }
    ).connection.serverTransport.stdio;
    expect(stdio.stderrTail(1 << 20).length).toBeLessThanOrEqual(64 * 1024);
    expect(lines.length).toBeGreaterThan(0);
    await expectFaultContained(fault);
  });
});
