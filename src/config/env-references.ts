import { AgentsError, AgentsErrorCode } from '../errors.js';

/** `${NAME}`: a reference to an environment variable, resolved when a server starts. */
const REFERENCE = /\$\{([A-Za-z_][A-Za-z0-9_]*)\}/g;

/**
 * Replaces every `${NAME}` in `text` with the variable's value from `env`. Config files keep the
 * reference, so a secret lives in the environment (or a secret manager), never in `.agents/`.
 * Throws `CONFIG_INVALID` naming the variable, the field (`where`) and the `export` to run when a
 * variable is not set. Text without references is returned as is.
 */
export function expandEnvReferences(
  text: string,
  where: string,
  env: NodeJS.ProcessEnv = process.env,
): string {
  if (!text.includes('${')) return text;
  return text.replace(REFERENCE, (_match, name: string) => {
    const value = env[name];
    if (value === undefined) {
      throw new AgentsError(
        AgentsErrorCode.ConfigInvalid,
        `${where} refers to \${${name}}, which is not set in the environment; export ${name}=... and retry.`,
        { details: { variable: name, field: where, problems: [] } },
      );
    }
    return value;
  });
}

/** {@link expandEnvReferences} over every value of a string map (env, headers). */
export function expandEnvReferenceMap(
  values: Readonly<Record<string, string>> | undefined,
  where: string,
  env: NodeJS.ProcessEnv = process.env,
): Record<string, string> | undefined {
  if (values === undefined) return undefined;
  return Object.fromEntries(
    Object.entries(values).map(([key, value]) => [
      key,
      expandEnvReferences(value, `${where}.${key}`, env),
    ]),
  );
}
