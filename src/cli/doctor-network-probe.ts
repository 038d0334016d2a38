/**
 * `agents doctor` proves each server's network confinement: a small probe runs under the same
 * bubblewrap arguments and proxy a server of the actor gets (its own network namespace, the
 * forwarder, the proxy with the server's lists and the actor's policy `network` rules), tries to
 * get out, and must be refused: a direct connection to the cloud metadata address (no network
 * of its own), and through the proxy a CONNECT to the metadata address and to the first host the
 * server's deny list names exactly.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { NetworkSetting } from '../config/network-schema.js';
import type { NetworkPolicyRule } from '../config/policy-schema.js';
import { compileNetworkRules, unlistedHostHook } from '../policy/network-rules.js';
import { resolveConfinement } from '../confinement/confinement.js';
import { compileHostRules } from '../servers/network/host-rules.js';
import { startNetworkProxy } from '../servers/network/proxy.js';
import { createServerNetwork, hasHostLists } from '../servers/network/server-network.js';

/** The outcome of one server's probe. */
export interface NetworkProbe {
  ok: boolean;
  /** What was tried and how each attempt ended. */
  detail: string;
}

const METADATA = '169.254.169.254';

// Plain CommonJS for `node -e`: prints one JSON object of attempt -> outcome.
const PROBE_SOURCE = `
const net = require('node:net');
const [denied] = process.argv.slice(1);
const direct = () => new Promise((resolve) => {
  const socket = net.connect({ host: '${METADATA}', port: 80 });
  socket.setTimeout(3000, () => { socket.destroy(); resolve('timeout'); });
  socket.on('connect', () => { socket.destroy(); resolve('connected'); });
  socket.on('error', (error) => resolve(error.code || error.message));
});
const viaProxy = (target) => new Promise((resolve) => {
  const url = new URL(process.env.HTTP_PROXY || 'http://127.0.0.1:1');
  const socket = net.connect({ host: url.hostname, port: Number(url.port) });
  let data = '';
  socket.setTimeout(5000, () => { socket.destroy(); resolve('timeout'); });
  socket.on('connect', () => socket.write('CONNECT ' + target + ' HTTP/1.1\\r\\nHost: ' + target + '\\r\\n\\r\\n'));
  socket.on('data', (chunk) => {
    data += chunk;
    if (data.includes('\\r\\n')) { socket.destroy(); resolve(data.split('\\r\\n')[0]); }
  });
  socket.on('error', (error) => resolve(error.code || error.message));
});
(async () => {
  const out = { direct: await direct() };
  if (process.env.HTTP_PROXY) {
    out.metadata = await viaProxy('${METADATA}:80');
    if (denied) out.denied = await viaProxy(denied);
  }
  process.stdout.write(JSON.stringify(out));
})();
`;

/**
 * Probes one stdio server's effective network (false or host lists; `true` is open and is not
 * probed). Never throws: a probe that cannot run is a failure with the reason.
 */
export async function probeServerNetwork(input: {
  serverName: string;
  setting: NetworkSetting;
  rules: readonly NetworkPolicyRule[];
  /** The confinement backend that runs the probe (default: the first that works). */
  backend?: { type: string };
}): Promise<NetworkProbe> {
  const { serverName, setting } = input;
  const scratch = mkdtempSync(join(tmpdir(), 'agents-doctor-net-'));
  const proxy = hasHostLists(setting) ? startNetworkProxy() : undefined;
  try {
    if (proxy !== undefined && hasHostLists(setting)) {
      const unlisted =
        input.rules.length === 0
          ? undefined
          : unlistedHostHook(serverName, compileNetworkRules(input.rules), undefined);
      await proxy.listen(serverName, compileHostRules(setting, unlisted));
    }
    const hook = createServerNetwork({
      actor: setting,
      servers: new Map(),
      ...(proxy === undefined ? {} : { proxy }),
    });
    const confinement = resolveConfinement(
      {
        mode: 'required',
        network: setting === true ? 'open' : setting === false ? 'none' : 'proxy',
        networkHook: hook,
        ...(input.backend === undefined ? {} : { backend: input.backend }),
      },
      { sandboxRoot: scratch },
    );
    // A deny entry naming one host exactly (no wildcard) is a target the proxy must refuse.
    const denied = hasHostLists(setting)
      ? setting.deny.find((pattern) => !pattern.startsWith('*.'))
      : undefined;
    const deniedTarget =
      denied === undefined ? undefined : /:\d+$/.test(denied) ? denied : `${denied}:443`;
    const wrapped = confinement.wrap(
      process.execPath,
      ['-e', PROBE_SOURCE, '--', deniedTarget ?? ''],
      scratch,
      { name: serverName },
    );
    const output = await new Promise<string>((resolve, reject) =>
      execFile(
        wrapped.command,
        wrapped.args,
        { cwd: scratch, timeout: 20_000 },
        (error, stdout, stderr) =>
          error ? reject(new Error(stderr.trim() || error.message)) : resolve(stdout),
      ),
    );
    const result = JSON.parse(output) as Record<string, string>;
    const refusedDirect = result['direct'] !== 'connected';
    const refusedByProxy = (value: string | undefined): boolean =>
      value === undefined || / 403 /.test(value);
    const ok =
      refusedDirect && refusedByProxy(result['metadata']) && refusedByProxy(result['denied']);
    const parts = [`direct ${METADATA}:80: ${result['direct']}`];
    if (result['metadata'] !== undefined)
      parts.push(`proxy CONNECT ${METADATA}:80: ${result['metadata']}`);
    if (result['denied'] !== undefined)
      parts.push(`proxy CONNECT ${deniedTarget}: ${result['denied']}`);
    return { ok, detail: parts.join('; ') };
  } catch (error) {
    return {
      ok: false,
      detail: `the probe could not run: ${(error as Error).message.split('\n')[0]}`,
    };
  } finally {
    await proxy?.close();
    rmSync(scratch, { recursive: true, force: true });
  }
}
