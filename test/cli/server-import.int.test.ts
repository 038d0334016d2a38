import { mkdir, mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { FAULT_SERVER } from '../servers/fixture.js';
import { agents, makeProjectRepo } from './helpers.js';

describe('agents server import', () => {
  let dir: string;
  let home: string;
  const saved = {
    XDG_CONFIG_HOME: process.env['XDG_CONFIG_HOME'],
    TOKEN: process.env['NOTES_API_TOKEN'],
  };

  beforeEach(async () => {
    dir = await makeProjectRepo('agents-import-');
    home = await mkdtemp(join(tmpdir(), 'agents-import-home-'));
    // A Claude Desktop config where Claude Desktop keeps it on Linux.
    await mkdir(join(home, 'Claude'), { recursive: true });
    await writeFile(
      join(home, 'Claude', 'claude_desktop_config.json'),
      JSON.stringify(
        {
          mcpServers: {
            notes: {
              command: process.execPath,
              args: [FAULT_SERVER, 'normal'],
              env: { NOTES_API_TOKEN: 'sk-live-do-not-copy', LOG_LEVEL: 'debug' },
            },
            docs: {
              url: 'https://docs.example.com/mcp',
              headers: { Authorization: 'Bearer t0ken-do-not-copy' },
            },
          },
        },
        null,
        2,
      ),
    );
    process.env['XDG_CONFIG_HOME'] = home;
    delete process.env['NOTES_API_TOKEN'];
  });
  afterEach(async () => {
    for (const [key, value] of Object.entries({
      XDG_CONFIG_HOME: saved.XDG_CONFIG_HOME,
      NOTES_API_TOKEN: saved.TOKEN,
    })) {
      if (value === undefined) delete process.env[key];
      else process.env[key] = value;
    }
    await rm(dir, { recursive: true, force: true });
    await rm(home, { recursive: true, force: true });
  });

  it('previews, writes servers/*.yaml without secrets, and the server starts once the variable is exported', async () => {
    const preview = await agents(dir, 'server', 'import', '--from', 'claude', '--dry-run');
    expect(preview.code).toBe(0);
    expect(preview.stdout).toContain('Dry run: nothing written.');
    expect(preview.stdout).toContain('NOTES_API_TOKEN: ${NOTES_API_TOKEN}');
    await expect(readdir(join(dir, '.agents', 'servers'))).rejects.toThrow();

    const imported = await agents(dir, 'server', 'import', '--from', 'claude');
    expect(imported.stderr).toBe('');
    expect(imported.code).toBe(0);
    expect(imported.stdout).toContain('Wrote 2 server(s): notes, docs.');
    expect(imported.stdout).toContain('  export DOCS_AUTHORIZATION=...');
    expect(imported.stdout).toContain('  export NOTES_API_TOKEN=...');
    const notes = await readFile(join(dir, '.agents', 'servers', 'notes.yaml'), 'utf8');
    const docs = await readFile(join(dir, '.agents', 'servers', 'docs.yaml'), 'utf8');
    expect(notes).toContain('NOTES_API_TOKEN: ${NOTES_API_TOKEN}');
    expect(notes).toContain('LOG_LEVEL: debug');
    expect(docs).toContain('transport: auto');
    expect(docs).toContain('Authorization: Bearer ${DOCS_AUTHORIZATION}');
    expect(notes + docs + imported.stdout).not.toMatch(/do-not-copy/);

    // Without the variable the start says which one to export; with it the server runs.
    const missing = await agents(dir, 'server', 'test', 'notes');
    expect(missing.code).not.toBe(0);
    expect(missing.stderr).toContain('export NOTES_API_TOKEN=');
    process.env['NOTES_API_TOKEN'] = 'from-the-environment';
    const tested = await agents(dir, 'server', 'test', 'notes', '--json');
    expect(tested.code).toBe(0);
    expect((JSON.parse(tested.stdout) as { tools: unknown[] }).tools.length).toBeGreaterThan(0);

    // A second import keeps what exists.
    const again = await agents(dir, 'server', 'import', '--from', 'claude');
    expect(again.stdout).toContain('kept servers/notes.yaml: it exists already');
  });

  it('refuses a file that is not an MCP config, saying what is missing', async () => {
    await writeFile(join(dir, 'settings.json'), '{"editor.fontSize": 14}');
    const result = await agents(dir, 'server', 'import', 'settings.json');
    expect(result.code).toBe(3);
    expect(result.stderr).toContain('has no MCP servers: missing "mcpServers"');
  });

  it('the official server-postgres config: the password never reaches YAML, list or output', async () => {
    await writeFile(
      join(dir, 'pg.json'),
      JSON.stringify({
        mcpServers: {
          postgres: {
            command: 'npx',
            args: [
              '-y',
              '@modelcontextprotocol/server-postgres',
              'postgresql://admin:s3cretPass@db.example.com:5432/prod',
            ],
          },
        },
      }),
    );
    const result = await agents(dir, 'server', 'import', 'pg.json');
    expect(result.code, result.stderr).toBe(0);
    // Not a terminal: the export line names the variable, never the value.
    expect(result.stdout).toContain('  export POSTGRES_PASSWORD=...');
    expect(result.stdout).not.toContain('s3cretPass');
    const yaml = await readFile(join(dir, '.agents', 'servers', 'postgres.yaml'), 'utf8');
    expect(yaml).toContain('postgresql://admin:${POSTGRES_PASSWORD}@db.example.com:5432/prod');
    expect(yaml).not.toContain('s3cretPass');
    const json = await agents(dir, 'server', 'import', 'pg.json', '--dry-run', '--json');
    expect(json.stdout).not.toContain('s3cretPass');
    const list = await agents(dir, 'server', 'list');
    expect(list.stdout).toContain('postgresql://admin:***@db.example.com:5432/prod');
    expect(list.stdout).not.toContain('s3cretPass');
  });
});
