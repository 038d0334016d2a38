/*
 * Head claims: how the parallel tool tasks of one step agree on the step's `sandboxHead`
 * whatever order they finish (or are written) in, on whichever worker (issue 38, item 1).
 *
 * Each task that changed files writes a claim instead of a plain sha: the head it saw plus the
 * chain of snapshots leading to it (newest first, down to the head the step started from). The
 * `sandboxHead` reducer keeps, among the claims of one step, the one that descends from all the
 * others; a plain string write (a rollback, `updateState`, a caller's own node) still sets the
 * head outright. Last write wins was the bug: LangGraph applies a step's writes in task order,
 * so a fast task that reported an older head overwrote the newest one.
 */

/** A tool task's claim on the `sandboxHead` of its step. */
export interface HeadClaim {
  /** Marks the write as a claim (a plain string write sets the head outright). */
  kind: 'head-claim';
  /** The snapshot sha claimed as the step's head. */
  sha: string;
  /** Which step the claim belongs to (`langgraph_step` plus the checkpoint namespace). */
  step: string;
  /**
   * Snapshots `sha` descends from, newest first: the ones this process made since the step's
   * base, then the first one it did not make (the base, or a head another worker made).
   */
  ancestors: string[];
}

/** True for a {@link HeadClaim} (as written by a task, or read back from pending writes). */
export function isHeadClaim(value: unknown): value is HeadClaim {
  if (typeof value !== 'object' || value === null) return false;
  const claim = value as Partial<HeadClaim>;
  return (
    claim.kind === 'head-claim' &&
    typeof claim.sha === 'string' &&
    typeof claim.step === 'string' &&
    Array.isArray(claim.ancestors)
  );
}

/**
 * The claims this process reduced, by `step` and sha, so that a current value (a plain string
 * in the channel) can be told apart as "a claim of the same step" and its ancestors looked up.
 * Bounded: only claims of a step still being reduced matter, and a step has at most as many
 * claims as parallel calls.
 */
const seen = new Map<string, HeadClaim>();
const MAX_SEEN = 4_096;

function remember(claim: HeadClaim): void {
  const key = `${claim.step}\u0000${claim.sha}`;
  seen.delete(key);
  seen.set(key, claim);
  if (seen.size > MAX_SEEN) {
    const oldest = seen.keys().next().value;
    if (oldest !== undefined) seen.delete(oldest);
  }
}

/**
 * Of two claims of one step, the newer: the one whose ancestors include the other. When neither
 * does (snapshots that do not form a chain, which serialized calls never make), the one with the
 * longer chain, then the greater sha: deterministic, so the result never depends on write order.
 */
function newer(a: HeadClaim, b: HeadClaim): HeadClaim {
  if (a.sha === b.sha) return a;
  if (a.ancestors.includes(b.sha)) return a;
  if (b.ancestors.includes(a.sha)) return b;
  if (a.ancestors.length !== b.ancestors.length) {
    return a.ancestors.length > b.ancestors.length ? a : b;
  }
  return a.sha > b.sha ? a : b;
}

/**
 * The `sandboxHead` reducer. A plain string (or `undefined`: no write) behaves as before: it
 * sets the head (or keeps it). A {@link HeadClaim} replaces a head from an earlier step and, when
 * the current head is a claim of the same step, wins only if it is the newer of the two.
 * Order-independent within a step, which is what a parallel turn needs.
 */
export function reduceSandboxHead(
  current: string | undefined,
  next: string | HeadClaim | undefined,
): string {
  if (next === undefined) return current ?? '';
  if (!isHeadClaim(next)) return next;
  remember(next);
  const rival =
    current === undefined || current === '' ? undefined : seen.get(`${next.step}\u0000${current}`);
  if (rival === undefined) return next.sha;
  return newer(rival, next).sha;
}
