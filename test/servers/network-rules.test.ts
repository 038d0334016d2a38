import { describe, expect, it } from 'vitest';
import { NetworkSettingSchema, type NetworkSetting } from '../../src/config/network-schema.js';
import { AgentsError } from '../../src/errors.js';
import { resolveConfinement } from '../../src/confinement/confinement.js';
import { addressForms, classifyAddress } from '../../src/servers/network/address-check.js';
import { compileHostRules } from '../../src/servers/network/host-rules.js';
import { decideTarget } from '../../src/servers/network/proxy-decision.js';
import { startNetworkProxy } from '../../src/servers/network/proxy.js';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parsePolicy } from '../../src/config/policy-schema.js';
import { compileNetworkRules, unlistedHostHook } from '../../src/policy/network-rules.js';
import { createPinStore, hostPinKey } from '../../src/policy/pins.js';
import { createServerNetwork } from '../../src/servers/network/server-network.js';

describe('host lists', () => {
  const rules = compileHostRules({
    allow: ['*.example.test', 'api.other.test:8443', '10.0.0.5:5432'],
    deny: ['evil.example.test', '*.internal.example.test'],
  });

  it.each([
    ['api.example.test', 443, 'allow'],
    ['a.b.example.test', 80, 'allow'],
    ['API.Example.Test.', 443, 'allow'], // case and trailing dot do not matter
    ['example.test', 443, 'unlisted'], // `*.` needs a subdomain
    ['evilexample.test', 443, 'unlisted'], // whole labels only
    ['example.test.attacker.test', 443, 'unlisted'],
    ['evil.example.test', 443, 'deny'], // deny wins over the wildcard allow
    ['x.internal.example.test', 443, 'deny'],
    ['api.other.test', 8443, 'allow'],
    ['api.other.test', 443, 'unlisted'], // port-bound entry
    ['10.0.0.5', 5432, 'allow'],
  ])('%s:%i → %s', (host, port, decision) => {
    expect(rules.check(host, port).decision).toBe(decision);
  });

  it('only an entry naming the address literally waives the address check', () => {
    expect(rules.check('10.0.0.5', 5432)).toMatchObject({
      decision: 'allow',
      literalAddress: true,
    });
    expect(rules.check('api.example.test', 443)).toMatchObject({ literalAddress: false });
  });

  it('the schema keeps true/false and rejects malformed patterns at load', () => {
    expect(NetworkSettingSchema.parse(true)).toBe(true);
    expect(NetworkSettingSchema.parse(false)).toBe(false);
    expect(NetworkSettingSchema.parse({ allow: ['*.example.test:443'] })).toEqual({
      allow: ['*.example.test:443'],
      deny: [],
    });
    for (const bad of [
      'http://example.test',
      'ex ample.test',
      '*example.test',
      'a.test:99999',
      '*.*.test',
      'a.test/path',
    ]) {
      expect(NetworkSettingSchema.safeParse({ allow: [bad] }).success, bad).toBe(false);
    }
    expect(NetworkSettingSchema.safeParse({ allow: [], extra: 1 }).success).toBe(false);
  });
});

describe('resolved-address check', () => {
  it.each([
    ['127.0.0.1', 'loopback'],
    ['127.8.9.10', 'loopback'],
    ['::1', 'loopback'],
    ['10.1.2.3', 'private'],
    ['172.20.0.1', 'private'],
    ['192.168.1.1', 'private'],
    ['100.64.0.1', 'private'],
    ['fd12::1', 'private'],
    ['169.254.1.1', 'link-local'],
    ['fe80::1', 'link-local'],
    ['169.254.169.254', 'metadata'],
    ['fd00:ec2::254', 'metadata'],
    ['0.0.0.0', 'unspecified'],
    ['::', 'unspecified'],
    // IPv4 hidden in IPv6: mapped, compatible, NAT64, 6to4, with odd spellings.
    ['::ffff:127.0.0.1', 'loopback'],
    ['::FFFF:7f00:0001', 'loopback'],
    ['0:0:0:0:0:ffff:a9fe:a9fe', 'metadata'],
    ['::169.254.169.254', 'metadata'],
    ['64:ff9b::a00:1', 'private'],
    ['2002:c0a8:101::1', 'private'],
    ['[::ffff:10.0.0.1]', 'private'],
    ['not-an-address', 'reserved'],
  ])('%s is refused as %s', (address, kind) => {
    expect(classifyAddress(address, new Set())).toBe(kind);
  });

  it('public addresses pass, unless they are this machine’s own', () => {
    expect(classifyAddress('93.184.215.14', new Set())).toBeUndefined();
    expect(classifyAddress('2606:4700::1111', new Set())).toBeUndefined();
    const own = new Set(addressForms('93.184.215.14'));
    expect(classifyAddress('93.184.215.14', own)).toBe('host-address');
    expect(classifyAddress('::ffff:93.184.215.14', own)).toBe('host-address');
  });

  it('a name the lists allow is refused when any answer it gets is all refused addresses; a mixed answer uses the public one', async () => {
    const rules = compileHostRules({ allow: ['*.example.test'], deny: [] });
    const resolve = async (host: string) =>
      host === 'rebind.example.test'
        ? ['127.0.0.1', '::ffff:10.0.0.1']
        : ['10.0.0.1', '93.184.215.14'];
    const rebind = await decideTarget(rules, 'rebind.example.test', 443, { resolve });
    expect(rebind).toMatchObject({ allowed: false, address: '127.0.0.1' });
    const mixed = await decideTarget(rules, 'mixed.example.test', 443, { resolve });
    expect(mixed).toMatchObject({ allowed: true, address: '93.184.215.14' });
    const failing = await decideTarget(rules, 'gone.example.test', 443, {
      resolve: () => Promise.reject(Object.assign(new Error('x'), { code: 'ENOTFOUND' })),
    });
    expect(failing).toMatchObject({ allowed: false, reason: expect.stringMatching(/ENOTFOUND/) });
  });
});

describe('fail closed', () => {
  const lists = { allow: ['*.example.test'], deny: [] };
  const scope = { sandboxRoot: process.cwd() };

  it('a server with lists does not start when the proxy is closed (or never listened for it)', async () => {
    const proxy = startNetworkProxy();
    await proxy.listen('fetcher', compileHostRules(lists));
    const hook = createServerNetwork({ actor: lists, servers: new Map(), proxy });
    const confinement = resolveConfinement(
      { mode: 'auto', network: 'none', networkHook: hook },
      scope,
    );
    if (confinement.kind === 'bubblewrap') {
      const launch = confinement.wrap('node', ['server.js'], undefined, { name: 'fetcher' });
      expect(launch.args).toContain('--unshare-net');
      expect(launch.args.join(' ')).toMatch(/--setenv HTTP_PROXY http:\/\/127\.0\.0\.1:3128/);
      // Another server name has no socket: refused, not run with open network.
      expect(() => confinement.wrap('node', ['x.js'], undefined, { name: 'other' })).toThrow(
        /proxy .* is not running/,
      );
    }
    await proxy.close();
    const wrap = () => confinement.wrap('node', ['server.js'], undefined, { name: 'fetcher' });
    expect(wrap).toThrow(AgentsError);
    expect(wrap).toThrow(
      confinement.kind === 'bubblewrap'
        ? /proxy that is its only way out is closed/
        : /need OS confinement/,
    );
  });

  it('true and false keep their meaning; a per-server setting wins over the actor’s', () => {
    const hook = createServerNetwork({
      actor: true,
      servers: new Map<string, NetworkSetting>([
        ['files', false],
        ['fetch', lists],
      ]),
    });
    expect(hook.launch('any', true, 'node', [])).toMatchObject({
      network: 'open',
      command: 'node',
    });
    expect(hook.launch('files', true, 'node', [])).toMatchObject({
      network: 'none',
      command: 'node',
    });
    // Unconfined: false changes nothing (as before), lists refuse.
    expect(hook.launch('files', false, 'node', [])).toMatchObject({ network: 'none' });
    expect(() => hook.launch('fetch', false, 'node', [])).toThrow(/not started/);
    expect(() => hook.launch('fetch', true, 'node', [])).toThrow(/proxy .* not running/);
  });
});

describe('policy network rules for hosts on no list', () => {
  const policy = parsePolicy({
    network: [
      { host: '*', decision: 'ask' },
      { host: '*.example.test', decision: 'allow' },
      { host: '*.deep.example.test', decision: 'deny' },
      { host: 'open.deep.example.test:8080', decision: 'allow' },
      { host: 'both.test', decision: 'allow' },
      { host: 'both.test', decision: 'deny' },
      { host: '10.0.0.7', decision: 'allow' },
    ],
  });
  const decideRule = compileNetworkRules(policy.network);

  it.each([
    ['any.other', 443, 'ask'],
    ['a.example.test', 443, 'allow'],
    ['x.deep.example.test', 443, 'deny'], // the longer wildcard is more specific
    ['open.deep.example.test', 8080, 'allow'], // host and port beat the wildcard
    ['open.deep.example.test', 443, 'deny'],
    ['both.test', 443, 'deny'], // a tie goes to the most restrictive
  ])('%s:%i → %s', (host, port, decision) => {
    expect(decideRule(host, port)?.decision).toBe(decision);
  });

  it('the lists win; an ask host is allowed once pinned for that server only; pins persist beside tool pins', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'agents-host-pins-'));
    try {
      const file = join(dir, 'pins.json');
      const pins = await createPinStore(file);
      const rules = (server: string) =>
        compileHostRules(
          { allow: ['api.lists.test'], deny: ['any.other:22'] },
          unlistedHostHook(server, decideRule, pins),
        );
      expect(rules('fetch').check('any.other', 22)).toMatchObject({ decision: 'deny' });
      expect(rules('fetch').check('any.other', 443)).toMatchObject({
        decision: 'ask',
        rule: 'policy.network[0] {host: "*"}',
      });
      expect(rules('fetch').check('10.0.0.7', 443)).toMatchObject({
        decision: 'allow',
        literalAddress: true,
      });
      await pins.pin({ id: 'mcp:fs/read', fingerprint: 'f1' }, 'policy');
      await pins.pinHost(hostPinKey('fetch', 'any.other', 443), 'tester');
      expect(rules('fetch').check('any.other', 443)).toMatchObject({
        decision: 'allow',
        literalAddress: false,
      });
      expect(rules('files').check('any.other', 443)).toMatchObject({ decision: 'ask' });
      // Another process reads both kinds of pins; a later tool pin keeps the host pins.
      const again = await createPinStore(file);
      await again.pin({ id: 'mcp:fs/write', fingerprint: 'f2' }, 'user');
      const stored = JSON.parse(await readFile(file, 'utf8')) as {
        pins: Record<string, unknown>;
        hosts: Record<string, { approvedBy: string }>;
      };
      expect(Object.keys(stored.pins).sort()).toEqual(['mcp:fs/read', 'mcp:fs/write']);
      expect(stored.hosts['fetch/any.other:443']?.approvedBy).toBe('tester');
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
