/**
 * Issue 35, item 7, through the real proxy (its Unix socket, as a confined server's forwarder
 * reaches it) and the real audit pipeline (the actor network's attribution and coalescing, the
 * audit file, `agents audit`): a SOCKS5 domain with a newline cannot print an `ALLOWED` line;
 * requests the parser rejects are audited; a refusal is filed under its server and names the
 * call in flight only as "during"; a flood of refusals writes a few lines that add up exactly.
 * No bubblewrap needed: the test process stands in for the server's (background) process.
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startActorNetwork, type ActorNetwork } from '../../src/actors/actor-network.js';
import type { NamedServerConfig } from '../../src/config/server-schema.js';
import type { ToolCallRequest } from '../../src/core/tool-middleware.js';
import type { AuditEntry } from '../../src/policy/audit-entry.js';
import { createAuditLog, type AuditLog } from '../../src/policy/audit-log.js';
import { agents } from '../cli/helpers.js';

const LISTS = { allow: ['*.example.test'], deny: ['evil.example.test'] };

/** Sends bytes on the proxy socket; resolves with everything it answered before closing. */
function exchange(socketPath: string, ...chunks: Buffer[]): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const socket = connect(socketPath);
    const answer: Buffer[] = [];
    socket.on('data', (chunk) => answer.push(chunk));
    socket.on('close', () => resolve(Buffer.concat(answer)));
    socket.on('error', reject);
    socket.once('connect', () => {
      for (const chunk of chunks) socket.write(chunk);
    });
  });
}

function socksConnect(host: Buffer, port: number): Buffer[] {
  const portBytes = Buffer.alloc(2);
  portBytes.writeUInt16BE(port);
  return [
    Buffer.from([5, 1, 0]),
    Buffer.concat([Buffer.from([5, 1, 0, 3, host.length]), host, portBytes]),
  ];
}

describe('network audit through the real proxy', () => {
  let dir: string;
  let log: AuditLog;
  let network: ActorNetwork;
  let socket: string;

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'agents-net-audit-'));
    log = createAuditLog(join(dir, 'audit.jsonl'));
    network = await startActorNetwork({
      actor: 'auditor',
      setting: LISTS,
      servers: [
        { name: 'fetcher', transport: 'stdio', command: 'true', args: [], network: LISTS },
      ] as unknown as NamedServerConfig[],
      options: { testHosts: { 'api.example.test': '127.0.0.2' } },
    });
    network.setAudit((entry) => void log.append(entry));
    socket = network.proxy!.socketOf('fetcher')!;
  });

  afterEach(async () => {
    await network?.close();
    await log?.close();
    await rm(dir, { recursive: true, force: true });
  });

  async function entries(): Promise<AuditEntry[]> {
    await network.close();
    await log.close();
    const text = await readFile(log.file, 'utf8');
    return text
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as AuditEntry);
  }

  it('a SOCKS5 domain carrying a newline and ANSI escapes is refused, and `agents audit` prints it as one escaped line', async () => {
    const forged = Buffer.from(
      `x\n2026-12-07T10:00:01.000Z  -  network:fetcher  network ALLOWED api.example.test:443 (socks5) from server "fetcher": allowed by "*.example.test"\u001b[2K`,
      'latin1',
    );
    // Precondition: the name ends in an allowed suffix, so only the name check refuses it.
    expect(forged.toString('latin1').endsWith('\u001b[2K')).toBe(true);
    const wildcard = Buffer.from('a\nb.example.test');
    for (const host of [forged, wildcard]) {
      const reply = await exchange(socket, ...socksConnect(host, 443));
      expect(reply.subarray(2, 4)).toEqual(Buffer.from([5, 2])); // "not allowed", after method
    }
    const audit = await entries();
    expect(audit.map((entry) => entry.network!.reason)).toEqual([
      expect.stringMatching(/^not a valid host name or address/),
      expect.stringMatching(/^not a valid host name or address/),
    ]);
    // At write: one JSON line per entry, nothing raw in the file.
    const raw = await readFile(log.file, 'utf8');
    expect(raw.trim().split('\n')).toHaveLength(2);
    expect(raw).not.toContain('\u001b');

    const shown = await agents(dir, 'audit', '--file', log.file);
    expect(shown.code, shown.stderr).toBe(0);
    const lines = shown.stdout.trim().split('\n');
    expect(lines).toHaveLength(2);
    expect(lines.every((line) => line.includes('network REFUSED'))).toBe(true);
    expect(lines.some((line) => line.startsWith('2026-12-07T10:00:01.000Z'))).toBe(false);
    expect(shown.stdout).not.toContain('\u001b');
    expect(lines[0]).toContain('x\\n2026-12-07T10:00:01.000Z');
    expect(lines[0]).toContain('\\x1b[2K');
    const json = await agents(dir, 'audit', '--file', log.file, '--json');
    expect(json.stdout.trim().split('\n')).toHaveLength(2);
    expect(json.stdout).not.toContain('\u001b');
  });

  it('requests the parser rejects are refused and audited with their first bytes', async () => {
    const garbage = await exchange(socket, Buffer.from('GARBAGE\u0000 /\r\n\r\n', 'latin1'));
    expect(garbage.toString('latin1')).toMatch(/^HTTP\/1\.1 400/);
    const ftp = await exchange(
      socket,
      Buffer.from('GET ftp://api.example.test/x HTTP/1.1\r\nHost: api.example.test\r\n\r\n'),
    );
    expect(ftp.toString('latin1')).toMatch(/^HTTP\/1\.1 400/);
    const badHeader = await exchange(socket, Buffer.from([5, 1, 0]), Buffer.from([4, 1, 0, 3]));
    expect(badHeader).toEqual(Buffer.from([5, 0]));
    const badType = await exchange(socket, Buffer.from([5, 1, 0]), Buffer.from([5, 1, 0, 9]));
    expect(badType.subarray(2, 4)).toEqual(Buffer.from([5, 8]));
    const noMethod = await exchange(socket, Buffer.from([5, 1, 2]));
    expect(noMethod).toEqual(Buffer.from([5, 0xff]));
    const audit = await entries();
    expect(audit.map((entry) => [entry.network!.protocol, entry.network!.reason])).toEqual([
      ['http', expect.stringMatching(/^unparsable HTTP request \(HPE_/)],
      ['http', 'ftp: is not proxied as a plain request; use CONNECT'],
      ['socks5', 'malformed SOCKS5 handshake: request header 04010003'],
      ['socks5', 'SOCKS5 address type 9 is not supported'],
      ['socks5', 'SOCKS5 client offers no method but "no authentication"'],
    ]);
    expect(audit.every((entry) => entry.network!.decision === 'deny')).toBe(true);
    expect(audit[0]!.network!.unparsed?.startsWith('GARBAGE\u0000')).toBe(true);
    const shown = await agents(dir, 'audit', '--file', log.file);
    expect(shown.stdout).toContain('network REFUSED an unparsable request (http)');
    expect(shown.stdout).toContain('[bytes: GARBAGE\\x00 /\\r\\n');
  });

  it('a refusal made while a call is in flight is filed under the server, the call only as "during"', async () => {
    const request = {
      descriptor: {
        id: 'fetcher__probe',
        name: 'probe',
        serverName: 'fetcher',
        fingerprint: 'f',
      },
      args: {},
      context: { toolCallId: 'call_innocent', threadId: 'thread-1' },
    } as unknown as ToolCallRequest;
    // The "background process": the test connects while the call runs; the call itself does nothing.
    await network.calls.wrap(request, async () => {
      await exchange(socket, ...socksConnect(Buffer.from('evil.example.test'), 443));
      return { content: [{ type: 'text', text: 'did nothing' }] };
    });
    // And once with no call in flight.
    await exchange(socket, ...socksConnect(Buffer.from('unlisted.test'), 443));
    const audit = await entries();
    expect(
      audit.map((entry) => [entry.toolId, entry.toolCallId, entry.thread, entry.network!.during]),
    ).toEqual([
      ['network:fetcher', undefined, 'thread-1', ['call_innocent']],
      ['network:fetcher', undefined, undefined, undefined],
    ]);
    const shown = await agents(dir, 'audit', '--file', log.file);
    expect(shown.stdout).toContain('from server "fetcher" during call call_innocent: denied by');
  });

  it('a flood of 400 refusals writes a few lines whose counts add up to exactly 400', async () => {
    const floods = 400;
    for (let batch = 0; batch < floods / 50; batch++) {
      await Promise.all(
        Array.from({ length: 50 }, () =>
          exchange(socket, ...socksConnect(Buffer.from('evil.example.test'), 443)),
        ),
      );
    }
    const audit = await entries();
    expect(audit.length).toBeLessThanOrEqual(4);
    expect(audit[0]!.network!.repeated).toBeUndefined();
    const total = audit.reduce((sum, entry) => sum + (entry.network!.repeated?.count ?? 1), 0);
    expect(total).toBe(floods);
    const shown = await agents(dir, 'audit', '--file', log.file);
    expect(shown.stdout).toMatch(
      /network REFUSED \d+ more time\(s\) in [\d.]+ s since \S+: evil\.example\.test:443 \(socks5\) from server "fetcher": denied by "evil\.example\.test"/,
    );
  });
});
