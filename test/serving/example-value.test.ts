import { describe, expect, it } from 'vitest';
import { compileArgumentValidator } from '../../src/mcp/json-schema.js';
import { exampleValueFromSchema } from '../../src/serving/example-value.js';

describe('exampleValueFromSchema', () => {
  it('fills required properties with values of the right type', () => {
    const schema = {
      type: 'object',
      properties: {
        a: { type: 'number' },
        b: { type: 'integer', minimum: 5 },
        name: { type: 'string', minLength: 10 },
        flag: { type: 'boolean' },
        tags: { type: 'array', items: { type: 'string' }, minItems: 2 },
        optional: { type: 'string' },
      },
      required: ['a', 'b', 'name', 'flag', 'tags'],
    };
    const value = exampleValueFromSchema(schema);
    expect(value).toEqual({
      a: 1,
      b: 5,
      name: 'examplexxx',
      flag: true,
      tags: ['example', 'example'],
    });
    expect(compileArgumentValidator(schema).validate(value)).toEqual({ valid: true });
  });

  it('prefers const, default, examples and enum, and includes defaulted optional properties', () => {
    expect(
      exampleValueFromSchema({
        type: 'object',
        properties: {
          mode: { enum: ['fast', 'slow'] },
          kind: { const: 'x' },
          score: { type: 'number', default: 95.5 },
          city: { type: 'string', examples: ['Lyon'] },
        },
        required: ['mode', 'kind', 'city'],
      }),
    ).toEqual({ mode: 'fast', kind: 'x', score: 95.5, city: 'Lyon' });
  });

  it('follows local $refs, picks a non-null anyOf branch and merges allOf', () => {
    const schema = {
      type: 'object',
      $defs: { point: { type: 'object', properties: { x: { type: 'integer' } }, required: ['x'] } },
      properties: {
        at: { $ref: '#/$defs/point' },
        maybe: { anyOf: [{ type: 'null' }, { type: 'string', format: 'uri' }] },
        both: {
          allOf: [
            { type: 'object', properties: { p: { type: 'string' } }, required: ['p'] },
            { type: 'object', properties: { q: { type: 'boolean' } }, required: ['q'] },
          ],
        },
      },
      required: ['at', 'maybe', 'both'],
    };
    expect(exampleValueFromSchema(schema)).toEqual({
      at: { x: 1 },
      maybe: 'https://example.com/',
      both: { p: 'example', q: true },
    });
  });

  it('stops on recursive schemas instead of looping', () => {
    const schema = {
      $defs: {
        node: {
          type: 'object',
          properties: { next: { $ref: '#/$defs/node' } },
          required: ['next'],
        },
      },
      $ref: '#/$defs/node',
    };
    const value = JSON.stringify(exampleValueFromSchema(schema, { maxDepth: 4 }));
    expect(value).toContain('null');
    expect(value.length).toBeLessThan(200);
  });

  it('gives an empty object for an object schema without required properties', () => {
    expect(
      exampleValueFromSchema({ type: 'object', properties: { a: { type: 'string' } } }),
    ).toEqual({});
    expect(
      exampleValueFromSchema(
        { type: 'object', properties: { a: { type: 'string' } } },
        { includeOptional: true },
      ),
    ).toEqual({ a: 'example' });
  });
});
