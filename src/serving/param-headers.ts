// SEP-2243 (2026-07-28, Streamable HTTP): a tool argument whose schema property carries
// `x-mcp-header: Name` is mirrored by the client into an `Mcp-Param-Name` header, so proxies can
// route on it without reading the body. The server MUST check that header against the body:
// present whenever the body has the value, equal to it after decoding (`=?base64?…?=` wraps a
// Base64 UTF-8 value; anything else is literal), and a malformed Base64 value is refused. The
// SDK checks this only for its high-level McpServer; `agents serve` serves upstream tools from
// its own tool set, so it checks here, against the schema each served tool declares.

/** One `x-mcp-header` declaration of a tool's input schema. */
export interface ParamHeader {
  /** Property names from the arguments object down to the value. */
  path: string[];
  /** The header suffix as declared (`Mcp-Param-${header}`). */
  header: string;
  /** The property's JSON Schema `type`, when it names one. */
  type: string | undefined;
}

const BASE64_SENTINEL = /^=\?base64\?(.*)\?=$/i;
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;
const DECIMAL = /^-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?$/;
const cache = new WeakMap<object, ParamHeader[]>();

/**
 * The declarations reachable through `properties` chains only (the spec's rule: not under
 * items, combinators, conditionals or `$ref`), cached per schema object.
 */
export function paramHeadersOf(schema: unknown): ParamHeader[] {
  if (typeof schema !== 'object' || schema === null) return [];
  const cached = cache.get(schema);
  if (cached !== undefined) return cached;
  const found: ParamHeader[] = [];
  const walk = (node: unknown, path: string[], depth: number): void => {
    if (depth > 16 || typeof node !== 'object' || node === null) return;
    const properties = (node as { properties?: unknown }).properties;
    if (typeof properties !== 'object' || properties === null) return;
    for (const [name, property] of Object.entries(properties)) {
      if (typeof property !== 'object' || property === null) continue;
      const header = (property as Record<string, unknown>)['x-mcp-header'];
      const type = (property as { type?: unknown }).type;
      if (typeof header === 'string' && header !== '') {
        found.push({
          path: [...path, name],
          header,
          type: typeof type === 'string' ? type : undefined,
        });
      }
      walk(property, [...path, name], depth + 1);
    }
  };
  walk(schema, [], 0);
  cache.set(schema, found);
  return found;
}

/**
 * What is wrong with the `Mcp-Param-*` headers of a `tools/call` (undefined: nothing). A body
 * value that is absent or null expects no header; objects and arrays are never mirrored.
 */
export function paramHeaderProblem(
  declarations: readonly ParamHeader[],
  args: unknown,
  header: (name: string) => string | undefined,
): { header: string; problem: string } | undefined {
  for (const declaration of declarations) {
    let value: unknown = args;
    for (const key of declaration.path) {
      value =
        typeof value === 'object' && value !== null
          ? (value as Record<string, unknown>)[key]
          : undefined;
    }
    if (value === undefined || value === null) continue;
    if (typeof value !== 'string' && typeof value !== 'number' && typeof value !== 'boolean')
      continue;
    const name = `Mcp-Param-${declaration.header}`;
    const where = declaration.path.join('.');
    const sent = header(name.toLowerCase());
    if (sent === undefined) {
      return {
        header: name,
        problem: `the body carries ${where}=${JSON.stringify(value)} but the ${name} header is absent`,
      };
    }
    const decoded = decodeParamValue(sent);
    if (decoded === undefined) {
      return { header: name, problem: `the ${name} header carries an invalid Base64 value` };
    }
    const equal =
      typeof value === 'number' && DECIMAL.test(decoded)
        ? Number(decoded) === value
        : decoded === String(value);
    if (!equal) {
      return {
        header: name,
        problem: `the ${name} header decodes to ${JSON.stringify(decoded)} but the body carries ${where}=${JSON.stringify(value)}`,
      };
    }
  }
  return undefined;
}

/** A header value as its argument text: Base64-wrapped or literal; undefined when malformed. */
function decodeParamValue(raw: string): string | undefined {
  const wrapped = BASE64_SENTINEL.exec(raw);
  if (wrapped === null) return raw;
  const payload = wrapped[1]!;
  if (!BASE64.test(payload)) return undefined;
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(Buffer.from(payload, 'base64'));
  } catch {
    return undefined;
  }
}
