/**
 * The private npm cache of confined `npx` servers: a first start cut short during the npx
 * install leaves a half-extracted `_npx/<hash>/node_modules` that npx later takes as installed
 * (every start then fails with ERR_MODULE_NOT_FOUND). The next start removes it, with a notice.
 * A fake cache folder under a temp XDG_CACHE_HOME; the dead "host" is a real exited process.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  NPM_START_MARKER,
  beginNpmCacheStart,
  privateNpmCache,
} from '../../src/confinement/npm-cache.js';

let cacheHome: string;
let dir: string;
const notices: string[] = [];
const notice = (line: string): void => void notices.push(line);

/** A half install as npm leaves it when killed mid-extract (package.json of the top package, no deps). */
function halfInstall(): string {
  const top = join(dir, '_npx', '15b07286cbcc3329', 'node_modules', '@modelcontextprotocol', 'x');
  mkdirSync(top, { recursive: true });
  writeFileSync(join(top, 'package.json'), '{"name":"@modelcontextprotocol/x"}');
  writeFileSync(join(dir, '_npx', '15b07286cbcc3329', 'concurrency.lock'), '');
  return top;
}

/** The pid of a process that has exited: a host killed during the start. */
function deadPid(): number {
  const child = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))'], {
    encoding: 'utf8',
  });
  return Number(child.stdout);
}

beforeEach(() => {
  cacheHome = mkdtempSync(join(tmpdir(), 'npm-cache-test-'));
  dir = privateNpmCache('npx', 'fs', { XDG_CACHE_HOME: cacheHome, HOME: '/nonexistent' })!;
  notices.length = 0;
});
afterEach(() => rmSync(cacheHome, { recursive: true, force: true }));

describe('a start of an npx server cut short during the install', () => {
  it('is cleaned up at the next start, with one line naming the server and the folder', () => {
    expect(dir).toBe(join(cacheHome, 'agents', 'npm', 'fs'));
    halfInstall();
    writeFileSync(join(dir, NPM_START_MARKER), `${deadPid()}\n`);
    writeFileSync(join(dir, 'index-v5'), 'npm content cache: kept');

    const settle = beginNpmCacheStart(dir, 'fs', notice);
    expect(existsSync(join(dir, '_npx'))).toBe(false);
    expect(readFileSync(join(dir, 'index-v5'), 'utf8')).toBe('npm content cache: kept');
    expect(notices).toEqual([
      `[agents] server "fs": removed a partial npm install left by a start that was cut short (${join(dir, '_npx')}); npx installs it again.`,
    ]);
    // This start holds the marker until the server answered.
    expect(readFileSync(join(dir, NPM_START_MARKER), 'utf8')).toBe(`${process.pid}\n`);
    settle(true);
    expect(existsSync(join(dir, NPM_START_MARKER))).toBe(false);
  });

  it('a start that finished leaves no marker, so the next start keeps the install and says nothing', () => {
    const settle = beginNpmCacheStart(dir, 'fs', notice);
    const installed = halfInstall(); // what npx installed during this start
    settle(true);
    settle(false); // only the first call counts
    beginNpmCacheStart(dir, 'fs', notice)(true);
    expect(existsSync(installed)).toBe(true);
    expect(notices).toEqual([]);
  });

  it('a failed start in this process is cleaned up by the next one', () => {
    beginNpmCacheStart(dir, 'fs', notice)(false); // e.g. the start timeout killed npx
    halfInstall();
    beginNpmCacheStart(dir, 'fs', notice)(true);
    expect(existsSync(join(dir, '_npx'))).toBe(false);
    expect(notices).toHaveLength(1);
  });

  it('a start in flight is never cleaned up under its feet: same process or another live one', () => {
    const first = beginNpmCacheStart(dir, 'fs', notice);
    const installing = halfInstall();
    const second = beginNpmCacheStart(dir, 'fs', notice); // a second actor, same server name
    expect(existsSync(installing)).toBe(true);
    first(true);
    expect(existsSync(join(dir, NPM_START_MARKER))).toBe(true); // the second is still starting
    second(true);
    expect(existsSync(join(dir, NPM_START_MARKER))).toBe(false);

    // Another live process (here: our parent) is starting it.
    writeFileSync(join(dir, NPM_START_MARKER), `${process.ppid}\n`);
    beginNpmCacheStart(dir, 'fs', notice)(true);
    expect(existsSync(installing)).toBe(true);
    expect(notices).toEqual([]);
  });

  it('a marker that is not a pid counts as a start cut short', () => {
    halfInstall();
    writeFileSync(join(dir, NPM_START_MARKER), 'garbage');
    beginNpmCacheStart(dir, 'fs', notice)(true);
    expect(existsSync(join(dir, '_npx'))).toBe(false);
    expect(notices).toHaveLength(1);
  });
});
