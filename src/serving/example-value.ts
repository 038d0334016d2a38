/** Options of {@link exampleValueFromSchema}. */
export interface ExampleValueOptions {
  /** Also fill optional object properties (default false: required ones only). */
  includeOptional?: boolean;
  /** Depth at which recursion stops with `null` (default 8). */
  maxDepth?: number;
}

type Schema = Record<string, unknown>;

function isSchema(value: unknown): value is Schema {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function resolveRef(root: Schema, ref: string): Schema | undefined {
  // Local refs only (`#/$defs/x`, `#/definitions/x`); a remote ref is never fetched.
  if (!ref.startsWith('#/')) return undefined;
  let node: unknown = root;
  for (const raw of ref.slice(2).split('/')) {
    const key = raw.replace(/~1/g, '/').replace(/~0/g, '~');
    if (!isSchema(node)) return undefined;
    node = node[key];
  }
  return isSchema(node) ? node : undefined;
}

function stringExample(schema: Schema): string {
  switch (schema['format']) {
    case 'uri':
    case 'url':
      return 'https://example.com/';
    case 'email':
      return 'user@example.com';
    case 'date-time':
      return '2025-01-01T00:00:00Z';
    case 'date':
      return '2025-01-01';
    case 'uuid':
      return '00000000-0000-4000-8000-000000000000';
    default:
      break;
  }
  const minLength = typeof schema['minLength'] === 'number' ? schema['minLength'] : 0;
  const maxLength = typeof schema['maxLength'] === 'number' ? schema['maxLength'] : Infinity;
  let text = 'example';
  if (text.length < minLength) text = text.padEnd(minLength, 'x');
  if (text.length > maxLength) text = text.slice(0, maxLength);
  return text;
}

function numberExample(schema: Schema, integer: boolean): number {
  const minimum = typeof schema['minimum'] === 'number' ? schema['minimum'] : undefined;
  const exclusiveMinimum =
    typeof schema['exclusiveMinimum'] === 'number' ? schema['exclusiveMinimum'] : undefined;
  const maximum = typeof schema['maximum'] === 'number' ? schema['maximum'] : undefined;
  let value = 1;
  if (minimum !== undefined) value = Math.max(value, minimum);
  if (exclusiveMinimum !== undefined && value <= exclusiveMinimum) value = exclusiveMinimum + 1;
  if (maximum !== undefined && value > maximum) value = maximum;
  return integer ? Math.ceil(value) : value;
}

function generate(
  schema: unknown,
  root: Schema,
  depth: number,
  options: Required<ExampleValueOptions>,
): unknown {
  if (schema === true || schema === undefined) return 'example';
  if (!isSchema(schema) || depth > options.maxDepth) return null;
  if ('const' in schema) return schema['const'];
  if ('default' in schema) return schema['default'];
  if (Array.isArray(schema['examples']) && schema['examples'].length > 0)
    return schema['examples'][0];
  if (Array.isArray(schema['enum']) && schema['enum'].length > 0) return schema['enum'][0];
  if (typeof schema['$ref'] === 'string') {
    return generate(resolveRef(root, schema['$ref']), root, depth + 1, options);
  }
  for (const key of ['oneOf', 'anyOf'] as const) {
    const choices = schema[key];
    if (Array.isArray(choices) && choices.length > 0) {
      // Prefer a non-null branch: `anyOf: [{type:'null'}, X]` means "optional X".
      const branch =
        choices.find((choice) => !(isSchema(choice) && choice['type'] === 'null')) ?? choices[0];
      return generate(branch, root, depth + 1, options);
    }
  }
  if (Array.isArray(schema['allOf'])) {
    const merged: Record<string, unknown> = {};
    let scalar: unknown;
    for (const part of schema['allOf']) {
      const value = generate(part, root, depth + 1, options);
      if (isSchema(value)) Object.assign(merged, value);
      else scalar ??= value;
    }
    return Object.keys(merged).length > 0 || scalar === undefined ? merged : scalar;
  }
  let type = schema['type'];
  if (Array.isArray(type)) type = type.find((item) => item !== 'null') ?? type[0];
  if (type === undefined) {
    if (isSchema(schema['properties'])) type = 'object';
    else if ('items' in schema) type = 'array';
  }
  switch (type) {
    case 'object': {
      const properties = isSchema(schema['properties']) ? schema['properties'] : {};
      const required = new Set(
        Array.isArray(schema['required'])
          ? schema['required'].filter((item) => typeof item === 'string')
          : [],
      );
      const result: Record<string, unknown> = {};
      for (const [name, property] of Object.entries(properties)) {
        const hasDefault = isSchema(property) && 'default' in property;
        if (required.has(name) || options.includeOptional || hasDefault) {
          result[name] = generate(property, root, depth + 1, options);
        }
      }
      // A required name with no property schema still gets a value.
      for (const name of required) if (!(name in result)) result[name] = 'example';
      return result;
    }
    case 'array': {
      const minItems = typeof schema['minItems'] === 'number' ? schema['minItems'] : 0;
      const items = schema['items'];
      const count = Math.max(minItems, 1);
      if (Array.isArray(schema['prefixItems'])) {
        return schema['prefixItems'].map((item) => generate(item, root, depth + 1, options));
      }
      return Array.from({ length: count }, () => generate(items, root, depth + 1, options));
    }
    case 'string':
      return stringExample(schema);
    case 'integer':
      return numberExample(schema, true);
    case 'number':
      return numberExample(schema, false);
    case 'boolean':
      return true;
    case 'null':
      return null;
    default:
      return 'example';
  }
}

/**
 * A plausible value for a JSON Schema, for smoke-calling tools (the conformance client): uses
 * `const`, `default`, `examples`, `enum` first; follows local `$ref`s; takes the first non-null
 * `oneOf`/`anyOf` branch; fills required object properties (and those with defaults); respects
 * `minimum`, `minLength`, `minItems` and common string formats. Never throws; unknown shapes
 * give `"example"`, too-deep recursion gives `null`.
 */
export function exampleValueFromSchema(
  schema: unknown,
  options: ExampleValueOptions = {},
): unknown {
  const resolved = {
    includeOptional: options.includeOptional ?? false,
    maxDepth: options.maxDepth ?? 8,
  };
  return generate(schema, isSchema(schema) ? schema : {}, 0, resolved);
}
