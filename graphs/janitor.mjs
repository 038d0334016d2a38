// Cleans up after a graph process that may die without running its own exit handlers.
//
// Why: the LangGraph dev server runs graphs under `tsx`, whose parent process SIGKILLs the graph
// process when it does not acknowledge a signal within ~30 ms, which a busy shutdown often
// misses. Nothing in a SIGKILLed process can clean up, so this small detached process watches
// its stdin pipe instead: the pipe closes however the owner dies.
//
// Protocol, one JSON object per stdin line:
//   {"type":"watch", "pgids":[...], "root":"/tree", "container":"/dir",
//    "sandboxId":"id", "paths":["/tmp/..."]}   (replaces the previous job)
//   {"type":"done"}                            (owner cleaned up itself: exit, do nothing)
// On end of input without "done": SIGTERM the process groups (SIGKILL 1 s later if needed),
// remove the sandbox's folder (it has no record in the user's repo), then the temp folders. Plain JS on purpose: it runs
// with bare `node`, with no loader, in a few MiB.
import { rmSync } from 'node:fs';

/** @type {{ pgids?: number[], root?: string, container?: string, sandboxId?: string, paths?: string[] }} */
let job = {};
let done = false;
let buffered = '';

process.stdin.setEncoding('utf8');
process.stdin.on('data', (chunk) => {
  buffered += chunk;
  let newline;
  while ((newline = buffered.indexOf('\n')) >= 0) {
    const line = buffered.slice(0, newline);
    buffered = buffered.slice(newline + 1);
    try {
      const message = JSON.parse(line);
      if (message.type === 'done') done = true;
      if (message.type === 'watch') job = message;
    } catch {
      // Ignore a malformed line rather than clean up early.
    }
  }
});
process.stdin.on('end', () => void cleanUp());
process.stdin.on('error', () => void cleanUp());

function groupAlive(pgid) {
  try {
    process.kill(-pgid, 0);
    return true;
  } catch {
    return false;
  }
}

function attempt(work) {
  try {
    work();
  } catch {
    // Best effort, every step on its own.
  }
}

async function cleanUp() {
  if (done) process.exit(0);
  const pgids = (job.pgids ?? []).filter((pgid) => Number.isInteger(pgid) && pgid > 1);
  for (const pgid of pgids) attempt(() => process.kill(-pgid, 'SIGTERM'));
  const deadline = Date.now() + 1_000;
  while (pgids.some(groupAlive) && Date.now() < deadline)
    await new Promise((resolve) => setTimeout(resolve, 50));
  for (const pgid of pgids.filter(groupAlive)) attempt(() => process.kill(-pgid, 'SIGKILL'));
  if (job.container !== undefined)
    attempt(() => rmSync(job.container, { recursive: true, force: true }));
  for (const path of job.paths ?? []) attempt(() => rmSync(path, { recursive: true, force: true }));
  process.exit(0);
}
