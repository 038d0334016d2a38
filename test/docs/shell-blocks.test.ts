import { describe, expect, it } from 'vitest';
import { parseCommands } from './shell-blocks.js';

describe('reading the commands of a docs shell block', () => {
  it('joins heredocs and comment-only lines to their command and reads the expected exit', () => {
    const commands = parseCommands(
      [
        'agents server add fs -- node server.js .',
        '                       # the script: a file of the project',
        "cat > script.yaml <<'EOF'   # an offline model",
        '- content: done   # not a comment of the shell',
        'EOF',
        'agents actor run coder --no-prompt   # pauses at',
        '                                     # the write (exits 8: waiting for an approval)',
        'agents tool call fs/x --args \'{"a":"#1"}\'   # fails: exit 6',
        'agents serve --port 8765   # over MCP (Ctrl-C stops it)',
      ],
      10,
    );
    expect(
      commands.map((command) => [command.line, command.exitCode, command.stopsOnCtrlC]),
    ).toEqual([
      [10, 0, false],
      [12, 0, false],
      [15, 8, false],
      [17, 6, false],
      [18, 0, true],
    ]);
    expect(commands[1]!.text).toBe(
      "cat > script.yaml <<'EOF'   # an offline model\n- content: done   # not a comment of the shell\nEOF",
    );
  });
});
