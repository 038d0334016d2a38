/** Reading JSON with comments (VS Code's JSONC). */
/** Removes `//` and `/* *\/` comments and trailing commas outside strings (VS Code's JSONC). */
export function stripJsonComments(text: string): string {
  let out = '';
  let inString = false;
  for (let index = 0; index < text.length; index++) {
    const char = text[index] as string;
    const next = text[index + 1];
    if (inString) {
      out += char;
      if (char === '\\') {
        out += next ?? '';
        index++;
      } else if (char === '"') inString = false;
      continue;
    }
    if (char === '"') {
      inString = true;
      out += char;
    } else if (char === '/' && next === '/') {
      while (index < text.length && text[index] !== '\n') index++;
      out += '\n';
    } else if (char === '/' && next === '*') {
      index = text.indexOf('*/', index + 2);
      if (index === -1) break;
      index++;
    } else if (char === ',' && /^\s*[}\]]/.test(text.slice(index + 1))) {
      // A trailing comma: JSON refuses it, VS Code allows it.
    } else {
      out += char;
    }
  }
  return out;
}
