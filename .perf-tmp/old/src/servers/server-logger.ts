/**
 * Where server lifecycles report what they see: a server's stderr lines, skipped stdout garbage,
 * refresh failures, restarts. Never the host's stdout; the CLI decides how to show it.
 */
export interface ServerLogger {
  debug(message: string, data?: Record<string, unknown>): void;
  info(message: string, data?: Record<string, unknown>): void;
  warn(message: string, data?: Record<string, unknown>): void;
  error(message: string, data?: Record<string, unknown>): void;
}

/** A logger that drops everything; the default, so a library never writes to the host's streams. */
export const silentServerLogger: ServerLogger = {
  debug() {},
  info() {},
  warn() {},
  error() {},
};
