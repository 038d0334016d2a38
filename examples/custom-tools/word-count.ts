/**
 * A custom tool module, as users write one: LangChain `tool()` exports. A skill names it as
 * `custom:./path/to/word-count.js#wordCount`. Custom code declares no capabilities, so the
 * library treats it as a write tool unless `metadata.readOnly` is true (as here).
 */
import { tool } from '@langchain/core/tools';
import { z } from 'zod';

/** Counts the words and lines of a text. */
export const wordCount = tool(
  ({ text }: { text: string }) => {
    const words = text.split(/\s+/).filter((word) => word !== '').length;
    return `${words} words, ${text.split('\n').filter((line) => line.trim() !== '').length} lines`;
  },
  {
    name: 'word_count',
    description: 'Count the words and non-empty lines of a text.',
    schema: z.object({ text: z.string().describe('The text to count.') }),
    metadata: { readOnly: true },
  },
);
