import { reapOrphanedServers } from '../../servers/orphan-reaper.js';
import { checkEnvironment, formatEnvironment } from '../doctor/environment.js';
import { storeOf } from '../args.js';
import { actorNetworkReports, formatActorNetworkReports } from '../doctor-network.js';
import type { Command, CommandContext } from '../command.js';
import { parseCommandArgs } from '../args.js';
import { printJson, println } from '../output.js';

const DOCTOR_USAGE = `Usage: agents doctor [--json]

Checks the environment (Node, git, bubblewrap and user namespaces, SQLite, the state folder)
and says what to do about each problem; exit code 1 when something runs need is missing.
Then cleans up after runs that were killed (SIGKILL, out of memory, power loss): stops the MCP server
process groups they left running, now rather than at the next start of any server. A group is
stopped only when the run that started it is dead and the group is provably the one it started
(start time, command line, session); anything else is left alone. Linux only.

Then shows each actor's effective network per server (open, none, or host lists through the
proxy) and says when a server with host lists would refuse to start here.`;

/** `agents doctor`: reaps the server processes of killed runs at once. */
export const doctorCommand: Command = {
  path: ['doctor'],
  summary: 'Check the environment; stop the MCP servers that killed runs left running',
  usage: DOCTOR_USAGE,
  async run(context: CommandContext): Promise<number> {
    parseCommandArgs(context.argv, {}, DOCTOR_USAGE);
    const environment = checkEnvironment();
    const code = environment.some((check) => check.status === 'fail') ? 1 : 0;
    const report = await reapOrphanedServers();
    const network = await actorNetworkReports(storeOf(context)).catch(() => []);
    if (context.json) {
      printJson(context.stdout, {
        environment,
        reaped: report.reaped.map(({ serverName, pgid, hostPid, target }) => ({
          serverName,
          pgid,
          hostPid,
          target,
        })),
        dropped: report.dropped.length,
        network,
      });
      return code;
    }
    println(context.stdout, formatEnvironment(environment));
    println(context.stdout);
    if (report.reaped.length === 0) {
      println(context.stdout, 'No server left running by a killed run.');
    }
    for (const record of report.reaped) {
      println(
        context.stdout,
        `Stopped server "${record.serverName}" (process group ${record.pgid}: ${record.target}), left by run ${record.hostPid}.`,
      );
    }
    if (report.dropped.length > 0) {
      println(context.stdout, `Dropped ${report.dropped.length} stale server record(s).`);
    }
    for (const line of formatActorNetworkReports(network)) println(context.stdout, line);
    return code;
  },
};
