/** Default cap on a description the model sees, in characters. */
export const DEFAULT_DESCRIPTION_LIMIT = 2048;

// C0/C1 controls except tab and newline; zero-width and invisible formatting characters;
// bidi embeddings/overrides/isolates and marks; Unicode tag characters (used to smuggle
// invisible ASCII instructions); variation selectors.
const INVISIBLE =
  // The class lists joiners and variation selectors on purpose, one by one, to remove them.
  // eslint-disable-next-line no-control-regex, no-misleading-character-class
  /[\u0000-\u0008\u000B-\u001F\u007F-\u009F\u00AD\u061C\u115F\u1160\u17B4\u17B5\u180E\u200B-\u200F\u202A-\u202E\u2060-\u2064\u2066-\u206F\u3164\uFE00-\uFE0F\uFEFF\uFFA0\uFFF9-\uFFFB\u{E0000}-\u{E007F}\u{E0100}-\u{E01EF}]/gu;

/**
 * Makes an untrusted tool description safe to show the model: removes control, zero-width,
 * bidi-override, tag and variation-selector characters, normalizes line endings, and caps the
 * length (default 2 KB) with a visible marker. Keep the original elsewhere for audit.
 */
export function sanitizeDescription(text: string, options: { maxLength?: number } = {}): string {
  const maxLength = options.maxLength ?? DEFAULT_DESCRIPTION_LIMIT;
  const cleaned = text.replace(/\r\n?/g, '\n').replace(INVISIBLE, '').trim();
  if (cleaned.length <= maxLength) return cleaned;
  // Cut on a code-point boundary so a surrogate pair is never split.
  let cut = maxLength;
  const code = cleaned.charCodeAt(cut - 1);
  if (code >= 0xd800 && code <= 0xdbff) cut -= 1;
  const omitted = cleaned.length - cut;
  return `${cleaned.slice(0, cut)}… [description truncated: ${omitted} more characters]`;
}

/** True when sanitizing changed the text (something was stripped or it was cut). */
export function isDescriptionAltered(original: string, sanitized: string): boolean {
  return original.replace(/\r\n?/g, '\n').trim() !== sanitized;
}
