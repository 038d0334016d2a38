import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { agents, agentsArgv, agentsWithStdin, makeProjectRepo } from './helpers.js';

/** The offline script `agents init` writes: each turn asks to write hello.txt, then answers. */
const APPROVAL_PROMPT = '[a]pprove, [e]dit, [r]eject';

describe('agents chat', () => {
  let dir: string;
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it(
    'takes a turn per piped line, approvals inline from the same lines, /diff, /undo, /rollback --undo, /exit; EOF ends a later chat',
    { timeout: 30_000 },
    async () => {
      dir = await makeProjectRepo('agents-chat-');
      const init = await agents(dir, 'init');
      expect(init.code, init.stderr).toBe(0);

      // Turn one is rejected, turn two approved: an answer line must not be taken as a turn.
      const script = [
        'Write hello.txt please',
        'r not yet',
        'Now write it',
        'a',
        '/diff',
        '/undo',
        '/diff',
        '/rollback --undo',
        '/diff',
        '/exit',
        'never read: /exit came first',
      ].join('\n');
      const chat = await agentsWithStdin(dir, `${script}\n`, 'chat', 'coder', '--thread', 't1');
      expect(chat.code, chat.stderr).toBe(0);
      const out = chat.stdout;
      expect(out.split(APPROVAL_PROMPT)).toHaveLength(3);
      expect(out).toContain('The user rejected this call of "write_file"');
      expect(out).toContain('not yet');
      expect(out).toContain('changed: A hello.txt');
      // /diff after the approved turn, then /undo rolls that turn back, then /diff is empty.
      const afterTurns = out.slice(out.lastIndexOf('Wrote hello.txt.'));
      expect(afterTurns).toMatch(/\nA hello\.txt\n[\s\S]*Restored thread t1 to checkpoint/);
      expect(afterTurns).toContain('File changes: D hello.txt');
      // /undo, then /diff is empty; /rollback --undo puts the turn's file back.
      const undone = afterTurns.slice(afterTurns.indexOf('File changes: D hello.txt'));
      expect(undone).toMatch(
        /No changes in thread t1\.\n[\s\S]*Undid the latest rollback of thread t1[\s\S]*\nA hello\.txt\n$/,
      );
      expect(out).not.toContain('never read');
      expect(chat.stderr).toContain('Go on with this conversation: agents chat coder --thread t1');
      // The sandbox only: the user's files are untouched until /apply.
      expect(existsSync(join(dir, 'hello.txt'))).toBe(false);

      // The same thread later: one approved turn, /apply, then the end of input (no /exit).
      const again = await agentsWithStdin(
        dir,
        'Write hello.txt\na\n/apply\n',
        ...['chat', 'coder', '--thread', 't1'],
      );
      expect(again.code, again.stderr).toBe(0);
      // The thread went on where it stopped: hello.txt is there, so the write changes nothing.
      expect(again.stdout.split(APPROVAL_PROMPT)).toHaveLength(2);
      expect(again.stdout).toContain('Successfully wrote to hello.txt');
      expect(await readFile(join(dir, 'hello.txt'), 'utf8')).toBe('hello from the agent\n');
    },
  );

  it(
    'Ctrl-C stops the turn and the chat goes on (the next line answers the waiting call); at the prompt it warns, a second leaves',
    { timeout: 30_000 },
    async () => {
      dir = await makeProjectRepo('agents-chat-int-');
      expect((await agents(dir, 'init')).code).toBe(0);
      const [node, ...args] = agentsArgv('chat', 'coder', '--thread', 'c1');
      const child = spawn(node!, args, { cwd: dir, stdio: ['pipe', 'pipe', 'pipe'] });
      let seen = '';
      child.stdout.on('data', (chunk: Buffer) => (seen += chunk.toString()));
      child.stderr.on('data', (chunk: Buffer) => (seen += chunk.toString()));
      const closed = new Promise<number | null>((resolve) => child.on('close', resolve));
      const shown = (text: string, from: number) =>
        new Promise<void>((resolve, reject) => {
          const timer = setInterval(() => {
            if (seen.indexOf(text, from) !== -1) resolve(clearInterval(timer));
          }, 50);
          void closed.then(() => reject(new Error(`exited before "${text}":\n${seen}`)));
        });
      child.stdin.write('Write hello.txt\n');
      // Precondition: the turn is underway, waiting for its approval on the open pipe.
      await shown('Waiting for approval answers', 0);
      child.kill('SIGINT');
      await shown('Turn stopped; the thread keeps its last checkpoint.', 0);
      let mark = seen.length;
      child.stdin.write('/diff\n');
      await shown('No changes in thread c1.', mark);
      // The stopped turn left its call waiting: the next line rejects it and goes to the model.
      mark = seen.length;
      child.stdin.write('Leave it\n');
      await shown('mcp:fs/write_file waited for an answer: not run', mark);
      await shown('Wrote hello.txt.', mark);
      expect(seen.slice(mark)).toContain('wrote instead: Leave it');
      mark = seen.length;
      child.kill('SIGINT');
      await shown('Ctrl-C again, /exit or Ctrl-D leaves', mark);
      child.kill('SIGINT');
      expect(await closed).toBe(130);
      expect(seen).toContain('Go on with this conversation: agents chat coder --thread c1');
    },
  );
});
