import type { Command, CommandContext } from '../command.js';
import { parseCommandArgs, storeOf } from '../args.js';
import { printJson, println } from '../output.js';

const DOCTOR_USAGE = `Usage: agents doctor [--json]

Checks the environment (Node, git, bubblewrap and user namespaces, SQLite, the state folder)
and says what to do about each problem; exit code 1 when something runs need is missing.
Then cleans up after runs that were killed (SIGKILL, out of memory, power loss): stops the MCP server
process groups they left running, now rather than at the next start of any server. A group is
stopped only when the run that started it is dead and the group is provably the one it started
(start time, command line, session); anything else is left alone. Linux only.

Then checks OS confinement: finds bubblewrap, proves with a real confined process that a file
planted in the state folder (beside a sandbox, where its private run/ store lives) cannot be
read, prints the bubblewrap command line each actor's stdio servers get, and lists the servers'
explicit \`sandbox:\` exceptions. Proves from inside a confined process that it has no
privilege (CapEff 0, no_new_privs, the seccomp filter; unmount, remount, setns and a nested user
namespace refused), namespaces of its own and no host socket in sight (Privileges, Namespaces,
Sockets). Exits 1 when the probe could read the planted file or one of these does not hold.

Then shows each actor's effective network per server (open, none, or host lists through the
proxy) and says when a server with host lists would refuse to start here. Each stdio server
with no network or host lists is proved: a probe under its confinement (and proxy) tries the
cloud metadata address directly and through the proxy, and a host its deny list names; each
attempt must be refused (PASS), else FAIL and exit 1.`;

/** `agents doctor`: reaps the server processes of killed runs at once. */
export const doctorCommand: Command = {
  path: ['doctor'],
  usage: DOCTOR_USAGE,
  async run(context: CommandContext): Promise<number> {
    parseCommandArgs(context.argv, {}, DOCTOR_USAGE);
    // Loaded on use: the network probe loads the policy and proxy code (and zod), which the
    // other commands and `agents --help` should not (issue 29).
    const [
      { reapOrphanedServers },
      { checkEnvironment, formatEnvironment },
      { actorNetworkReports, formatActorNetworkReports },
      { confinementReport, formatConfinementReport },
    ] = await Promise.all([
      import('../../servers/orphan-reaper.js'),
      import('../doctor/environment.js'),
      import('../doctor-network.js'),
      import('./doctor-confinement.js'),
    ]);
    const environment = checkEnvironment();
    const report = await reapOrphanedServers();
    const confinement = await confinementReport(storeOf(context));
    const network = await actorNetworkReports(storeOf(context), { probe: true }).catch(() => []);
    const networkProbeFailed = network.some((actor) =>
      actor.servers.some((line) => line.probe?.ok === false),
    );
    const code =
      environment.some((check) => check.status === 'fail') ||
      confinement.probe?.ok === false ||
      confinement.privileges?.some((check) => !check.ok) === true ||
      networkProbeFailed
        ? 1
        : 0;
    if (context.json) {
      printJson(context.stdout, {
        environment,
        confinement,
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
    for (const line of formatConfinementReport(confinement)) println(context.stdout, line);
    for (const line of formatActorNetworkReports(network)) println(context.stdout, line);
    return code;
  },
};
