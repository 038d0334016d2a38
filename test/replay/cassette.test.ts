import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { homedir, tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  CASSETTE_FORMAT_VERSION,
  createCassetteRecorder,
  parseCassette,
  readCassette,
} from '../../src/testing/index.js';
import { createCassetteRedactor } from '../../src/replay/cassette-redact.js';
import { fileBytes, recordFile } from '../../src/replay/file-content.js';

describe('cassette format', () => {
  it('writes a version header first, then one JSON line per entry, and reads it back', async () => {
    const recorder = createCassetteRecorder();
    recorder.recordExchange('fx', {
      seq: 1,
      method: 'tools/call',
      params: { name: 'add' },
      result: { n: 1 },
    });
    recorder.recordNotification('fx', { method: 'notifications/tools/list_changed' }, 1);
    recorder.recordModelTurn([{ type: 'human', content: 'hi' }], { type: 'ai', content: 'done' });
    const dir = await mkdtemp(join(tmpdir(), 'cassette-'));
    try {
      const path = join(dir, 'run.jsonl');
      await recorder.save(path);
      const cassette = await readCassette(path);
      expect(cassette.header).toMatchObject({
        format: 'agents-cassette',
        version: CASSETTE_FORMAT_VERSION,
      });
      expect(cassette.entries.map((entry) => entry.kind)).toEqual([
        'mcp',
        'mcp-notification',
        'model',
      ]);
      expect(cassette.entries[1]).toMatchObject({ after: 1, server: 'fx' });
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('redacts secrets by the audit rules and writes machine paths as logical ones', () => {
    const recorder = createCassetteRecorder({ pathAliases: [{ path: '/srv/sbx-1234', as: '.' }] });
    recorder.recordExchange('fx', {
      seq: 1,
      method: 'tools/call',
      params: {
        name: 'fetch',
        arguments: {
          apiKey: 'sk-live-123',
          url: 'https://bob:hunter2@example.com/x?token=abc&page=2',
          path: '/srv/sbx-1234/notes/a.txt',
          sibling: '/srv/sbx-12345/b',
          home: join(homedir(), 'notes'),
        },
      },
      // A schema's property named like a secret is a definition, not a secret: kept.
      result: { inputSchema: { properties: { token: { type: 'string' } } } },
    });
    const line = JSON.stringify(recorder.cassette().entries[0]);
    expect(line).not.toContain('sk-live-123');
    expect(line).not.toContain('hunter2');
    expect(line).not.toContain('token=abc');
    expect(line).toContain('page=2');
    expect(line).toContain('"path":"./notes/a.txt"');
    expect(line).toContain('/srv/sbx-12345/b');
    expect(line).toContain('"home":"~/notes"');
    expect(line).toContain('"token":{"type":"string"}');
  });

  it('refuses a newer version saying to upgrade, an older one saying to record again', () => {
    const newer = `${JSON.stringify({ format: 'agents-cassette', version: CASSETTE_FORMAT_VERSION + 1 })}\n`;
    expect(() => parseCassette(newer, 'new.jsonl')).toThrow(
      /newer than this copy reads.*npm install @agents\/langgraph-mcp@latest/,
    );
    const older = `${JSON.stringify({ format: 'agents-cassette', version: 0, createdBy: '@agents/langgraph-mcp 0.0.9' })}\n`;
    expect(() => parseCassette(older, 'old.jsonl')).toThrow(
      /predates version 1.*Record the run again.*0\.0\.9/,
    );
    expect(() => parseCassette(older)).toThrow(
      expect.objectContaining({ code: 'CASSETTE_INVALID' }),
    );
  });

  it('still reads format version 1 (model turns and MCP exchanges, no file side)', () => {
    const v1 = [
      JSON.stringify({ format: 'agents-cassette', version: 1 }),
      JSON.stringify({ kind: 'model', turn: 1, input: [], output: { type: 'ai', content: 'hi' } }),
      '',
    ].join('\n');
    const cassette = parseCassette(v1);
    expect(cassette.header.version).toBe(1);
    expect(cassette.entries).toHaveLength(1);
  });

  it('records files as text or base64, masking secret assignments and machine paths', () => {
    const redact = createCassetteRedactor({ pathAliases: [{ path: '/tmp/sbx-9', as: '.' }] });
    const plain = recordFile('a.txt', '100644', Buffer.from('hello\n'), redact);
    expect(plain).toEqual({ path: 'a.txt', mode: '100644', text: 'hello\n' });
    const env = recordFile(
      '.env',
      '100644',
      Buffer.from('API_TOKEN=abc123\nPORT=80\n{"password": "hunter2"}\nat /tmp/sbx-9/x\n'),
      redact,
    );
    expect(env).toEqual({
      path: '.env',
      mode: '100644',
      text: 'API_TOKEN=***\nPORT=80\n{"password": "***"}\nat ./x\n',
      redacted: true,
    });
    const binary = recordFile('b.bin', '100644', Buffer.from([0, 255, 1]), redact);
    expect(binary).toEqual({ path: 'b.bin', mode: '100644', base64: 'AP8B' });
    expect(fileBytes(binary)).toEqual(Buffer.from([0, 255, 1]));
  });

  it('names the line of a malformed or unknown entry', async () => {
    const header = JSON.stringify({ format: 'agents-cassette', version: CASSETTE_FORMAT_VERSION });
    expect(() => parseCassette(`${header}\n{not json\n`)).toThrow(/line 2 is not JSON/);
    expect(() => parseCassette(`${header}\n{"kind":"mcp"}\n{"kind":"video"}\n`)).toThrow(
      /line 3 has an unknown kind "video"/,
    );
    expect(() => parseCassette('{"hello":1}\n')).toThrow(/line 1 is not a cassette header/);
    const dir = await mkdtemp(join(tmpdir(), 'cassette-'));
    try {
      await writeFile(join(dir, 'empty.jsonl'), '');
      await expect(readCassette(join(dir, 'empty.jsonl'))).rejects.toThrow(/the file is empty/);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
