/**
 * Issue 35, item 7: the audit cannot be made to show a line nobody wrote. Escaping at write
 * (the JSON line) and at print (`agents audit`), and the flood coalescer's exact counts.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { formatAuditEntry } from '../../src/cli/commands/audit.js';
import { createAuditCoalescer } from '../../src/policy/audit-coalesce.js';
import type { AuditEntry } from '../../src/policy/audit-entry.js';
import { printable, safeJsonLine } from '../../src/policy/audit-escape.js';

const UNKNOWN = { value: false, source: 'default' as const };

function refusal(host: string, overrides: Partial<AuditEntry['network']> = {}): AuditEntry {
  return {
    time: '2026-12-07T10:00:00.000Z',
    event: 'network',
    actor: 'a',
    toolId: 'network:fetcher',
    toolName: 'network',
    serverName: 'fetcher',
    fingerprint: '',
    capabilities: { readOnly: UNKNOWN, writes: UNKNOWN, destructive: UNKNOWN, openWorld: UNKNOWN },
    args: { host, port: 443, protocol: 'socks5' },
    durationMs: 0,
    isError: true,
    error: 'on no allow list',
    network: {
      serverName: 'fetcher',
      protocol: 'socks5',
      host,
      port: 443,
      decision: 'deny',
      reason: 'on no allow list',
      ...overrides,
    },
  };
}

describe('printable', () => {
  it('escapes line breaks, ANSI escapes, C1 controls, bidi overrides and backslashes', () => {
    expect(printable('a\nb\r\tc')).toBe('a\\nb\\r\\tc');
    expect(printable('\u001b[2J\u009b31m')).toBe('\\x1b[2J\\x9b31m');
    expect(printable('x\u2028y\u202ez\u200b')).toBe('x\\u2028y\\u202ez\\u200b');
    // A backslash is doubled: text that spells out "\n" cannot pass for an escaped newline.
    expect(printable('a\\nb')).toBe('a\\\\nb');
    expect(printable('plain ünïcode – fine')).toBe('plain ünïcode – fine');
  });
});

describe('safeJsonLine', () => {
  it('is one line with nothing unsafe in it, and parses back to the same value', () => {
    const value = { host: 'a\nb\u001b[31m\u0085\u2028\u202e\u009b', n: 1 };
    const line = safeJsonLine(value);
    // eslint-disable-next-line no-control-regex
    expect(line).not.toMatch(/[\u0000-\u001f\u007f-\u009f\u2028\u2029\u202e]/);
    expect(JSON.parse(line)).toEqual(value);
  });
});

describe('formatAuditEntry', () => {
  it('prints a SOCKS5 domain with a newline and a forged line as one escaped line', () => {
    const forged =
      'x\n2026-12-07T10:00:01.000Z  -  network:fetcher  network ALLOWED evil.example.test:443 (socks5) from server "fetcher": allowed by "*"\u001b[2K';
    const line = formatAuditEntry(refusal(forged));
    expect(line.split('\n')).toHaveLength(1);
    expect(line).toContain('REFUSED');
    expect(line).toContain('x\\n2026-12-07T10:00:01.000Z');
    expect(line).toContain('\\x1b[2K');
    expect(line).not.toContain('\u001b');
  });

  it('names the calls in flight as "during", and prints a summary with its exact count', () => {
    expect(formatAuditEntry(refusal('evil.example.test', { during: ['call_1'] }))).toContain(
      'evil.example.test:443 (socks5) from server "fetcher" during call call_1: on no allow list',
    );
    expect(
      formatAuditEntry(
        refusal('evil.example.test', {
          repeated: { count: 411, windowMs: 2_000, since: '2026-12-07T10:00:00.000Z' },
        }),
      ),
    ).toContain(
      'network REFUSED 411 more time(s) in 2 s since 2026-12-07T10:00:00.000Z: evil.example.test:443',
    );
  });
});

describe('createAuditCoalescer', () => {
  afterEach(() => vi.useRealTimers());

  it('writes the first refusal, counts the rest per 2 s window, and the lines add up exactly', () => {
    vi.useFakeTimers();
    let clock = 0;
    const written: AuditEntry[] = [];
    const coalescer = createAuditCoalescer({
      write: (entry) => written.push(entry),
      now: () => clock,
    });
    for (let i = 0; i < 412; i++) coalescer.add(refusal('evil.example.test'));
    coalescer.add(refusal('other.example.test'));
    expect(written.map((entry) => entry.network!.host)).toEqual([
      'evil.example.test',
      'other.example.test',
    ]);
    clock = 2_000;
    vi.advanceTimersByTime(2_000);
    expect(written).toHaveLength(3);
    expect(written[2]!.network!.repeated).toEqual({
      count: 411,
      windowMs: 2_000,
      since: new Date(0).toISOString(),
    });
    // The flood goes on: one summary per window, no full line.
    for (let i = 0; i < 100; i++) coalescer.add(refusal('evil.example.test'));
    clock = 4_000;
    vi.advanceTimersByTime(2_000);
    expect(written).toHaveLength(4);
    expect(written[3]!.network!.repeated!.count).toBe(100);
    // A quiet window forgets the kind: the next refusal is written in full again.
    clock = 6_000;
    vi.advanceTimersByTime(2_000);
    coalescer.add(refusal('evil.example.test'));
    expect(written).toHaveLength(5);
    expect(written[4]!.network!.repeated).toBeUndefined();
    const total = written
      .filter((entry) => entry.network!.host === 'evil.example.test')
      .reduce((sum, entry) => sum + (entry.network!.repeated?.count ?? 1), 0);
    expect(total).toBe(412 + 100 + 1);
  });

  it('never coalesces allowed connections or answers, and bounds the kinds it tracks', () => {
    const written: AuditEntry[] = [];
    const coalescer = createAuditCoalescer({ write: (entry) => written.push(entry), maxKinds: 4 });
    for (let i = 0; i < 3; i++) coalescer.add(refusal('ok.example.test', { decision: 'allow' }));
    expect(written).toHaveLength(3);
    for (let i = 0; i < 100; i++) coalescer.add(refusal(`r${i}.example.test`));
    expect(written).toHaveLength(3 + 4);
    coalescer.flush();
    expect(written).toHaveLength(3 + 4 + 1);
    expect(written.at(-1)!.network).toMatchObject({ host: '*', repeated: { count: 96 } });
  });
});
