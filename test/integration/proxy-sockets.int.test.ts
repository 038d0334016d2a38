/**
 * Issue 35, item 3: each server sees only its own proxy socket. With the temp folder outside
 * /tmp (so not covered by the private /tmp), the proxy's socket folders used to be readable at
 * their host paths inside every namespace: server A connected to server B's socket and reached a
 * host only B may reach. The host's temp folder is now a private tmpfs inside too.
 */
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, realpathSync, rmSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { confinementScope } from '../../src/runtime/confinement-scope.js';
import { resolveConfinement } from '../../src/confinement/confinement.js';
import { probeBubblewrap } from '../../src/confinement/bubblewrap.js';
import { compileHostRules } from '../../src/servers/network/host-rules.js';
import { startNetworkProxy } from '../../src/servers/network/proxy.js';

const BUBBLEWRAP = probeBubblewrap();
const MUST_CONFINE = process.env['AGENTS_REQUIRE_CONFINEMENT'] === '1';
// A temp folder outside /tmp: in the checkout (git-ignored), removed after the test.
const OUTSIDE_TMP = join(import.meta.dirname, '..', '..', '.test-tmp');

function connectHere(path: string): Promise<string> {
  return new Promise((resolve) => {
    const socket = connect(path);
    socket.once('connect', () => {
      socket.end();
      resolve('connected');
    });
    socket.once('error', (error: NodeJS.ErrnoException) => resolve(error.code ?? error.message));
  });
}

it('with TMPDIR outside /tmp, server A cannot see or reach server B’s proxy socket (issue 35, item 3)', async () => {
  if (!BUBBLEWRAP.available) {
    expect(MUST_CONFINE).toBe(false);
    return;
  }
  mkdirSync(OUTSIDE_TMP, { recursive: true });
  const temp = realpathSync(mkdtempSync(join(OUTSIDE_TMP, 'tmpdir-')));
  const sandbox = realpathSync(mkdtempSync(join(tmpdir(), 'agents-proxy-sockets-')));
  const saved = process.env['TMPDIR'];
  process.env['TMPDIR'] = temp;
  const proxy = startNetworkProxy();
  try {
    const rules = compileHostRules({ allow: ['example.test'], deny: [] });
    await proxy.listen('a', rules);
    const socketOfB = await proxy.listen('b', rules);
    expect(socketOfB.startsWith(temp + '/')).toBe(true);
    // Precondition: B's socket answers at its host path.
    expect(await connectHere(socketOfB)).toBe('connected');
    const probe =
      `const fs=require("fs");const s=require("net").connect(${JSON.stringify(socketOfB)});` +
      `const done=(c)=>process.stdout.write(JSON.stringify({connect:c,temp:fs.readdirSync(${JSON.stringify(temp)})}));` +
      `s.on("connect",()=>{s.end();done("connected")});s.on("error",(e)=>done(e.code))`;
    const wrapped = resolveConfinement(
      { mode: 'required', network: 'none' },
      confinementScope({ sandboxRoot: sandbox }),
    ).wrap(process.execPath, ['-e', probe], sandbox, { name: 'a' });
    const out = await new Promise<string>((resolve, reject) => {
      const child = spawn(wrapped.command, wrapped.args, { stdio: ['ignore', 'pipe', 'inherit'] });
      let text = '';
      child.stdout.on('data', (chunk: Buffer) => (text += chunk.toString()));
      child.once('error', reject);
      child.once('close', () => resolve(text));
    });
    expect(JSON.parse(out)).toEqual({ connect: 'ENOENT', temp: [] });
  } finally {
    if (saved === undefined) delete process.env['TMPDIR'];
    else process.env['TMPDIR'] = saved;
    await proxy.close();
    rmSync(sandbox, { recursive: true, force: true });
    rmSync(temp, { recursive: true, force: true });
  }
});
