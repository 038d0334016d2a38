/**
 * `e` at the approval prompt on a real pseudo-terminal opens `$EDITOR` on the call's JSON
 * arguments. The "editor" is a small script (spawned with an argument array, no shell) that
 * rewrites the file: the first time with arguments the tool's input schema refuses, the second
 * time with good ones. The refused edit is explained and the question asked again; the good one
 * is approved and runs.
 */
import { randomUUID } from 'node:crypto';
import { readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { runInPty } from '../helpers/pty.js';
import {
  addScriptedActors,
  agentsArgv,
  makeProjectRepo,
  putFixtureFilesSkill,
  threadFiles,
} from './helpers.js';

/** The fake editor: logs what it was given, then writes the next answer into the file. */
const EDITOR_SCRIPT = `
import { appendFileSync, existsSync, readFileSync, writeFileSync } from 'node:fs';
const file = process.argv.at(-1);
const log = process.env.EDITOR_LOG;
const turn = existsSync(log) ? readFileSync(log, 'utf8').split('\\n---\\n').length + 1 : 1;
appendFileSync(log, (turn > 1 ? '\\n---\\n' : '') + readFileSync(file, 'utf8'));
writeFileSync(file, turn === 1
  ? '{ "path": 42, "content": "wrong type" }'
  : '{ "path": "edited.txt", "content": "from the editor" }');
`;

describe('the approval prompt on a terminal with $EDITOR', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await makeProjectRepo('agents-editor-');
    await putFixtureFilesSkill(dir);
    await addScriptedActors(
      dir,
      [
        '- tool_calls: [{ name: write_file, args: { path: a.txt, content: first } }]',
        '- content: done',
      ],
      { names: ['careful'] },
    );
    await writeFile(join(dir, 'editor.mjs'), EDITOR_SCRIPT);
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it(
    'e opens the editor on the JSON arguments; a schema-breaking edit is explained, a good one runs',
    { timeout: 120_000 },
    async () => {
      const thread = `editor-${randomUUID()}`;
      const log = join(dir, 'editor.log');
      let answered = 0;
      const run = await runInPty(
        agentsArgv('actor', 'run', 'careful', '--input', 'go', '--thread', thread),
        {
          cwd: dir,
          env: { EDITOR: `${process.execPath} ${join(dir, 'editor.mjs')}`, EDITOR_LOG: log },
          onOutput: (output, type) => {
            // Answer `e` each time the question is asked (after the first, refused, edit too).
            const asked = output.split('[a]pprove').length - 1;
            if (asked > answered) {
              answered = asked;
              // A third question would be a failure: reject, so the run ends instead of hanging.
              type(answered <= 2 ? 'e\r' : 'r\r');
            }
          },
        },
      );
      expect(answered).toBe(2);
      // The editor got the model's arguments as pretty JSON, both times.
      const seen = (await readFile(log, 'utf8')).split('\n---\n');
      expect(seen).toHaveLength(2);
      expect(JSON.parse(seen[0]!)).toEqual({ path: 'a.txt', content: 'first' });
      expect(seen[0]).toContain('\n  "path": "a.txt"');
      // The first edit broke the schema: said so, naming the field, and asked again.
      expect(run.output).toContain("do not match the tool's input schema");
      expect(run.output).toMatch(/path[^\n]*must be string/);
      expect(run.code).toBe(0);
      // The second edit was approved and ran: the edited file, not the model's, is in the sandbox.
      const files = await threadFiles('careful', thread);
      const edited = files.find((path) => path.endsWith('/edited.txt'));
      expect(edited, files.join('\n')).toBeDefined();
      expect(await readFile(edited!, 'utf8')).toBe('from the editor');
      expect(files.some((path) => path.endsWith('/a.txt'))).toBe(false);
    },
  );
});
