import { createRequire } from 'node:module';
import type { Ajv, ErrorObject, ValidateFunction } from 'ajv';
import type { Ajv2019 } from 'ajv/dist/2019.js';
import type { Ajv2020 } from 'ajv/dist/2020.js';
import { canonicalJson } from './fingerprint.js';

// ajv is CommonJS: each draft is required (synchronously) the first time a schema of that draft
// is compiled, so importing the adapter costs no ajv at all and a server with draft-07 schemas
// (nearly all) never loads the 2019-09 or 2020-12 builds (issue 29: start-up is module count).
const require = createRequire(import.meta.url);

/** The outcome of validating one set of arguments. */
export type ArgumentValidationResult =
  | { valid: true }
  | {
      valid: false;
      /** One line per problem, each naming the field (`/items/0/name`) and why it failed. */
      problems: string[];
      /** All problems in one model-readable sentence block. */
      message: string;
    };

/** A validator compiled once per tool; `validate` is the hot path and allocates nothing on success. */
export interface ArgumentValidator {
  validate(args: unknown): ArgumentValidationResult;
  /**
   * Set when the schema could not be compiled: the validator then accepts everything (the
   * server still validates) and this says why, so callers can record it.
   */
  readonly warning?: string;
}

const VALID: ArgumentValidationResult = { valid: true };
const MAX_PROBLEMS = 8;

type AjvFlavor = 'draft-07' | '2019-09' | '2020-12';

// Options shared by every flavour. strict:false because servers send unknown keywords
// (x-*, examples in odd places, nullable); validateSchema:false because a slightly broken
// meta-schema conformance must not hide a tool; formats are annotations by default in
// 2019-09/2020-12 and we have no format vocabulary the server agreed on, so they are not asserted.
const AJV_OPTIONS = {
  strict: false,
  allErrors: true,
  validateSchema: false,
  validateFormats: false,
  addUsedSchema: false,
  logger: false,
} as const;

interface AjvLike {
  compile(schema: object): ValidateFunction;
  removeSchema(schema: object): unknown;
}

const instances = new Map<AjvFlavor, AjvLike>();

// Many tools share a schema (often `{type:'object'}`) and servers re-list the same tools on
// every refresh; compiled validators are pure, so reuse them. Bounded, oldest out first.
const CACHE_LIMIT = 512;
const cache = new Map<string, ArgumentValidator>();

function ajvFor(flavor: AjvFlavor): AjvLike {
  let instance = instances.get(flavor);
  if (instance === undefined) {
    instance =
      flavor === '2020-12'
        ? new (require('ajv/dist/2020.js') as { Ajv2020: typeof Ajv2020 }).Ajv2020(AJV_OPTIONS)
        : flavor === '2019-09'
          ? new (require('ajv/dist/2019.js') as { Ajv2019: typeof Ajv2019 }).Ajv2019(AJV_OPTIONS)
          : new (require('ajv') as { Ajv: typeof Ajv }).Ajv(AJV_OPTIONS);
    instances.set(flavor, instance);
  }
  return instance;
}

function flavorOf(schema: Record<string, unknown>): {
  flavor: AjvFlavor;
  stripSchemaKeyword: boolean;
} {
  const declared = schema['$schema'];
  if (typeof declared !== 'string') return { flavor: 'draft-07', stripSchemaKeyword: false };
  if (declared.includes('2020-12')) return { flavor: '2020-12', stripSchemaKeyword: false };
  if (declared.includes('2019-09')) return { flavor: '2019-09', stripSchemaKeyword: false };
  if (declared.includes('draft-07')) return { flavor: 'draft-07', stripSchemaKeyword: false };
  // draft-04/06 or a made-up URI: Ajv would refuse the unknown meta-schema; the keywords we
  // care about (properties, required, enum, anyOf, $ref) mean the same in draft-07.
  return { flavor: 'draft-07', stripSchemaKeyword: true };
}

function describeError(error: ErrorObject): string {
  const field = error.instancePath === '' ? '(arguments)' : error.instancePath;
  const params = error.params as Record<string, unknown>;
  switch (error.keyword) {
    case 'required':
      return `${field === '(arguments)' ? '' : `${field}/`}${String(params['missingProperty'])}: is required but missing`;
    case 'additionalProperties':
      return `${field}: unknown property "${String(params['additionalProperty'])}" is not allowed`;
    case 'enum':
      return `${field}: must be one of ${JSON.stringify(params['allowedValues'])}`;
    case 'const':
      return `${field}: must be ${JSON.stringify(params['allowedValue'])}`;
    default:
      return `${field}: ${error.message ?? `fails "${error.keyword}"`}`;
  }
}

/**
 * Compiles a tool's JSON Schema (as the server sent it) into an argument validator. Call once
 * per tool definition, never per call. Supports `$ref`/`$defs`/`definitions`, `anyOf`/`oneOf`/
 * `allOf`, `enum`, nested objects and arrays exactly as JSON Schema defines them (no
 * simplification). Picks draft-07, 2019-09 or 2020-12 from `$schema`.
 *
 * Never throws: a schema that fails to compile yields a pass-through validator with `warning` set.
 */
export function compileArgumentValidator(schema: unknown): ArgumentValidator {
  if (typeof schema !== 'object' || schema === null || Array.isArray(schema)) {
    return {
      validate: () => VALID,
      warning: 'inputSchema is not an object; arguments are not validated',
    };
  }
  const key = canonicalJson(schema);
  const cached = cache.get(key);
  if (cached !== undefined) return cached;
  const validator = compileUncached(schema as Record<string, unknown>);
  if (cache.size >= CACHE_LIMIT) cache.delete(cache.keys().next().value!);
  cache.set(key, validator);
  return validator;
}

function compileUncached(record: Record<string, unknown>): ArgumentValidator {
  const { flavor, stripSchemaKeyword } = flavorOf(record);
  const target: Record<string, unknown> = stripSchemaKeyword ? { ...record } : record;
  if (stripSchemaKeyword) delete target['$schema'];
  const ajv = ajvFor(flavor);
  let compiled: ValidateFunction;
  try {
    compiled = ajv.compile(target);
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    return {
      validate: () => VALID,
      warning: `inputSchema could not be compiled (${reason}); arguments are not validated here`,
    };
  } finally {
    // The shared instance must not keep every schema it ever compiled (tools refresh at run time).
    try {
      ajv.removeSchema(target);
    } catch {
      // removeSchema throws only for schemas it never held; nothing to release then.
    }
  }
  return {
    validate(args: unknown): ArgumentValidationResult {
      if (compiled(args)) return VALID;
      const errors = compiled.errors ?? [];
      const problems: string[] = [];
      for (const error of errors) {
        // anyOf/oneOf add a summary after their branch errors; the branch errors say more.
        const line = describeError(error);
        if (!problems.includes(line)) problems.push(line);
        if (problems.length >= MAX_PROBLEMS) break;
      }
      if (problems.length === 0) problems.push('(arguments): do not match the input schema');
      return { valid: false, problems, message: problems.join('; ') };
    },
  };
}
