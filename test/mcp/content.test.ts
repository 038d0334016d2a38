import { describe, expect, it } from 'vitest';
import { describeToolContent, formatByteSize, toToolMessageParts } from '../../src/mcp/content.js';

describe('toToolMessageParts', () => {
  it('joins all-text results into one string with an empty artifact', () => {
    expect(
      toToolMessageParts({
        content: [
          { type: 'text', text: 'a' },
          { type: 'text', text: 'b' },
        ],
      }),
    ).toMatchInlineSnapshot(`
      {
        "artifact": {},
        "content": "a
      b",
      }
    `);
  });

  it('keeps structuredContent once, on the artifact, not in the text', () => {
    expect(
      toToolMessageParts({
        content: [{ type: 'text', text: 'Oslo: 21.5 °C' }],
        structuredContent: { city: 'Oslo', temperatureC: 21.5 },
        _meta: {
          'agents/change': { toolId: 'mcp:fs/write_file', snapshot: 'b', parent: 'a', changed: [] },
        },
      }),
    ).toMatchInlineSnapshot(`
      {
        "artifact": {
          "_meta": {
            "agents/change": {
              "changed": [],
              "parent": "a",
              "snapshot": "b",
              "toolId": "mcp:fs/write_file",
            },
          },
          "structuredContent": {
            "city": "Oslo",
            "temperatureC": 21.5,
          },
        },
        "content": "Oslo: 21.5 °C",
      }
    `);
  });

  it('puts structuredContent JSON in the text when there is no other content', () => {
    expect(toToolMessageParts({ content: [], structuredContent: { count: 7 } }))
      .toMatchInlineSnapshot(`
      {
        "artifact": {
          "structuredContent": {
            "count": 7,
          },
        },
        "content": "{"count":7}",
      }
    `);
  });

  it('converts images and audio to standard blocks, resources and links to text references', () => {
    expect(
      toToolMessageParts({
        content: [
          { type: 'text', text: 'see attachments' },
          { type: 'image', data: 'iVBORw0KGgo=', mimeType: 'image/png' },
          { type: 'audio', data: 'UklGRg==', mimeType: 'audio/wav' },
          {
            type: 'resource',
            resource: { uri: 'file:///notes.txt', mimeType: 'text/plain', text: 'hello' },
          },
          {
            type: 'resource',
            resource: {
              uri: 'file:///data.bin',
              mimeType: 'application/octet-stream',
              blob: 'AAECAw==',
            },
          },
          {
            type: 'resource_link',
            uri: 'file:///readme.md',
            name: 'readme.md',
            mimeType: 'text/markdown',
          },
        ],
      }),
    ).toMatchInlineSnapshot(`
      {
        "artifact": {
          "resources": [
            {
              "resource": {
                "mimeType": "text/plain",
                "text": "hello",
                "uri": "file:///notes.txt",
              },
              "type": "resource",
            },
            {
              "resource": {
                "blob": "AAECAw==",
                "mimeType": "application/octet-stream",
                "uri": "file:///data.bin",
              },
              "type": "resource",
            },
            {
              "mimeType": "text/markdown",
              "name": "readme.md",
              "type": "resource_link",
              "uri": "file:///readme.md",
            },
          ],
        },
        "content": [
          {
            "text": "see attachments",
            "type": "text",
          },
          {
            "data": "iVBORw0KGgo=",
            "mimeType": "image/png",
            "type": "image",
          },
          {
            "data": "UklGRg==",
            "mimeType": "audio/wav",
            "type": "audio",
          },
          {
            "text": "[resource file:///notes.txt]
      hello",
            "type": "text",
          },
          {
            "text": "[resource file:///data.bin (application/octet-stream, 4 bytes) kept in the tool artifact]",
            "type": "text",
          },
          {
            "text": "[resource link] readme.md: file:///readme.md (text/markdown)",
            "type": "text",
          },
        ],
      }
    `);
  });

  it('flags error results on the artifact', () => {
    expect(toToolMessageParts({ isError: true, content: [{ type: 'text', text: 'boom' }] }))
      .toMatchInlineSnapshot(`
      {
        "artifact": {
          "isError": true,
        },
        "content": "boom",
      }
    `);
  });
});

describe('describeToolContent', () => {
  it('shows images and audio as placeholders with type and size instead of dropping them', () => {
    const png = Buffer.alloc(12 * 1024, 1).toString('base64');
    expect(
      describeToolContent([
        { type: 'text', text: 'here it is' },
        { type: 'image', mimeType: 'image/png', data: png },
        { type: 'audio', mimeType: 'audio/wav', data: 'AAAA' },
      ]),
    ).toBe('here it is\n[image/png 12 KB]\n[audio/wav 3 B]');
    expect(describeToolContent('plain')).toBe('plain');
    expect(formatByteSize(3 * 1024 * 1024 + 1)).toBe('3.0 MB');
  });
});
