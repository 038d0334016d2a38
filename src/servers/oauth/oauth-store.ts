import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import { join } from 'node:path';
import type {
  OAuthClientInformationMixed,
  OAuthDiscoveryState,
  OAuthTokens,
} from '@modelcontextprotocol/client';
import { AgentsError, AgentsErrorCode, isErrno } from '../../errors.js';
import { writeFileAtomic } from '../../core/atomic-write.js';

/** Environment variable that moves the per-user state folder (tests point it at a temp dir). */
export const STATE_DIR_ENV = 'AGENTS_STATE_DIR';

/**
 * The per-user state folder: `$AGENTS_STATE_DIR`, else `$XDG_STATE_HOME/agents`, else
 * `~/.local/state/agents`. OAuth tokens and client registrations live here, outside every
 * project, so no `.agents/` file (which people commit) ever holds one.
 */
export function defaultStateDir(env: NodeJS.ProcessEnv = process.env): string {
  const explicit = env[STATE_DIR_ENV];
  if (explicit !== undefined && explicit !== '') return explicit;
  const xdg = env['XDG_STATE_HOME'];
  if (xdg !== undefined && xdg !== '') return join(xdg, 'agents');
  return join(homedir(), '.local', 'state', 'agents');
}

/** What is kept for one server between runs. */
export interface OAuthState {
  /** The server URL the state belongs to (the file name carries a hash of it too). */
  serverUrl?: string;
  /** A registration made by this client (DCR or client ID metadata document), as the SDK gave it. */
  clientInformation?: OAuthClientInformationMixed;
  /** The redirect URI the registration was made with (`http://127.0.0.1:PORT/callback`). */
  redirectUri?: string;
  tokens?: OAuthTokens;
  /** When `tokens` were saved (ms since epoch), to show their expiry. */
  tokensSavedAt?: number;
  discovery?: OAuthDiscoveryState;
}

/** Which parts of the state `clear` drops (the SDK's `invalidateCredentials` scopes). */
export type OAuthStateScope = 'all' | 'client' | 'tokens' | 'discovery';

/**
 * Storage of one server's OAuth state. Reads are served from memory after the first load, so
 * the token lookup on every request costs nothing; writes go to memory and disk.
 */
export interface OAuthStateStore {
  /** Where the state lives (a file path, or `memory`), for messages. */
  readonly location: string;
  load(): Promise<OAuthState>;
  /** Merges `patch` into the state and persists it. */
  update(patch: Partial<OAuthState>): Promise<void>;
  clear(scope: OAuthStateScope): Promise<void>;
}

/** A store that keeps nothing on disk (one-off clients such as `agents mcp-client`). */
export function createMemoryOAuthStore(initial: OAuthState = {}): OAuthStateStore {
  let state: OAuthState = { ...initial };
  return {
    location: 'memory',
    async load() {
      return state;
    },
    async update(patch) {
      state = { ...state, ...patch };
    },
    async clear(scope) {
      state = clearScope(state, scope);
    },
  };
}

/** Options of {@link createFileOAuthStore}. */
export interface FileOAuthStoreOptions {
  serverName: string;
  serverUrl: string;
  /** The per-user state folder; default {@link defaultStateDir}. */
  stateDir?: string;
}

/**
 * The file of one server's OAuth state: `<stateDir>/oauth/<name>-<hash of URL>.json`. The URL
 * is part of the key so a server renamed to point elsewhere never receives another server's
 * tokens (token passthrough).
 */
export function oauthStateFile(options: FileOAuthStoreOptions): string {
  const hash = createHash('sha256').update(options.serverUrl).digest('hex').slice(0, 16);
  return join(options.stateDir ?? defaultStateDir(), 'oauth', `${options.serverName}-${hash}.json`);
}

/**
 * A store in the per-user state folder: the folder is made with mode 0700 and the file written
 * with mode 0600 (temp file + rename, so a crash never leaves half a file). A file that cannot
 * be parsed is treated as empty: the person logs in again.
 */
export function createFileOAuthStore(options: FileOAuthStoreOptions): OAuthStateStore {
  const file = oauthStateFile(options);
  let cached: OAuthState | undefined;

  async function load(): Promise<OAuthState> {
    if (cached !== undefined) return cached;
    try {
      const parsed: unknown = JSON.parse(await readFile(file, 'utf8'));
      cached =
        typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed)
          ? (parsed as OAuthState)
          : {};
    } catch (error) {
      if (!isErrno(error, 'ENOENT') && !(error instanceof SyntaxError)) {
        throw new AgentsError(
          AgentsErrorCode.ConfigInvalid,
          `Cannot read the OAuth state of server "${options.serverName}" (${file}); check its permissions or remove it and log in again.`,
          { cause: error, details: { file, problems: [] } },
        );
      }
      cached = {};
    }
    return cached;
  }

  async function persist(state: OAuthState): Promise<void> {
    // Tokens: the file is 0600 from its first byte, its folder 0700 when made.
    await writeFileAtomic(file, `${JSON.stringify({ ...state, serverUrl: options.serverUrl })}\n`, {
      mode: 0o600,
      dirMode: 0o700,
    });
  }

  return {
    location: file,
    load,
    async update(patch) {
      const next = { ...(await load()), ...patch };
      cached = next;
      await persist(next);
    },
    async clear(scope) {
      const next = clearScope(await load(), scope);
      cached = next;
      await persist(next);
    },
  };
}

function clearScope(state: OAuthState, scope: OAuthStateScope): OAuthState {
  switch (scope) {
    case 'all':
      return {};
    case 'client': {
      const { clientInformation: _client, redirectUri: _redirect, ...rest } = state;
      return rest;
    }
    case 'tokens': {
      const { tokens: _tokens, tokensSavedAt: _saved, ...rest } = state;
      return rest;
    }
    case 'discovery': {
      const { discovery: _discovery, ...rest } = state;
      return rest;
    }
  }
}
