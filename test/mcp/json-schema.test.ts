import { describe, expect, it } from 'vitest';
import { compileArgumentValidator } from '../../src/mcp/json-schema.js';

const orderSchema = {
  type: 'object',
  $defs: {
    Customer: {
      type: 'object',
      properties: { name: { type: 'string', minLength: 1 } },
      required: ['name'],
      additionalProperties: false,
    },
    Item: {
      type: 'object',
      properties: { sku: { type: 'string' }, quantity: { type: 'integer', minimum: 1 } },
      required: ['sku', 'quantity'],
    },
  },
  properties: {
    customer: { $ref: '#/$defs/Customer' },
    items: { type: 'array', items: { $ref: '#/$defs/Item' }, minItems: 1 },
  },
  required: ['customer', 'items'],
};

describe('compileArgumentValidator', () => {
  it('accepts valid arguments for a $ref/$defs schema', () => {
    const validator = compileArgumentValidator(orderSchema);
    expect(validator.warning).toBeUndefined();
    expect(
      validator.validate({ customer: { name: 'Ada' }, items: [{ sku: 'x', quantity: 2 }] }),
    ).toEqual({
      valid: true,
    });
  });

  it('names the nested field behind a $ref and says why it is wrong', () => {
    const validator = compileArgumentValidator(orderSchema);
    const result = validator.validate({
      customer: { name: 'Ada', vip: true },
      items: [{ sku: 'x', quantity: 0 }],
    });
    expect(result.valid).toBe(false);
    if (result.valid) return;
    expect(result.problems).toContain('/customer: unknown property "vip" is not allowed');
    expect(result.problems).toContain('/items/0/quantity: must be >= 1');
  });

  it('reports missing required properties with their path', () => {
    const result = compileArgumentValidator(orderSchema).validate({ customer: {} });
    expect(result.valid).toBe(false);
    if (result.valid) return;
    expect(result.problems).toEqual(
      expect.arrayContaining([
        'items: is required but missing',
        '/customer/name: is required but missing',
      ]),
    );
  });

  it('validates anyOf and enum faithfully', () => {
    const validator = compileArgumentValidator({
      type: 'object',
      properties: {
        kind: { enum: ['book', 'film'] },
        price: {
          anyOf: [
            { type: 'number' },
            { type: 'object', properties: { min: { type: 'number' } }, required: ['min'] },
          ],
        },
      },
    });
    expect(validator.validate({ kind: 'book', price: { min: 1 } }).valid).toBe(true);
    expect(validator.validate({ kind: 'book', price: 3 }).valid).toBe(true);
    const bad = validator.validate({ kind: 'song', price: 'cheap' });
    expect(bad.valid).toBe(false);
    if (bad.valid) return;
    expect(bad.message).toContain('/kind: must be one of ["book","film"]');
    expect(bad.message).toContain('/price: must match a schema in anyOf');
  });

  it('validates oneOf and uses the 2020-12 dialect when the schema declares it', () => {
    const validator = compileArgumentValidator({
      $schema: 'https://json-schema.org/draft/2020-12/schema',
      type: 'object',
      properties: {
        value: { oneOf: [{ type: 'integer' }, { type: 'string' }] },
        list: { type: 'array', prefixItems: [{ type: 'string' }] },
      },
    });
    expect(validator.warning).toBeUndefined();
    expect(validator.validate({ value: 1, list: ['a'] }).valid).toBe(true);
    expect(validator.validate({ value: 1.5 }).valid).toBe(false);
    expect(validator.validate({ list: [1] }).valid).toBe(false);
  });

  it('tolerates unknown keywords and formats, and old $schema URIs', () => {
    const validator = compileArgumentValidator({
      $schema: 'http://json-schema.org/draft-04/schema#',
      type: 'object',
      'x-vendor': { anything: true },
      properties: { when: { type: 'string', format: 'made-up-format', nullable: true } },
    });
    expect(validator.warning).toBeUndefined();
    expect(validator.validate({ when: 'whatever' }).valid).toBe(true);
    expect(validator.validate({ when: 5 }).valid).toBe(false);
  });

  it('falls back to no validation with a warning when a schema cannot compile', () => {
    const validator = compileArgumentValidator({
      type: 'object',
      properties: { a: { $ref: '#/$defs/Missing' } },
    });
    expect(validator.warning).toMatch(/could not be compiled/);
    expect(validator.validate({ a: 1 }).valid).toBe(true);
  });

  it('compiles the same schema object twice (the shared instance keeps nothing)', () => {
    const schema = {
      $id: 'https://example.test/tool',
      type: 'object',
      properties: { a: { type: 'string' } },
    };
    expect(compileArgumentValidator(schema).warning).toBeUndefined();
    const second = compileArgumentValidator(schema);
    expect(second.warning).toBeUndefined();
    expect(second.validate({ a: 1 }).valid).toBe(false);
  });
});
