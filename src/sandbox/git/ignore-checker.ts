import type { LongLivedGit } from '../git.js';

/** Answers "does `add -A` leave this untracked path out?" through one `git check-ignore`. */
export class IgnoreChecker {
  readonly #git: LongLivedGit;

  /** `git`: `check-ignore --stdin -z -v -n --no-index` on the store, with the exclude file. */
  constructor(git: LongLivedGit) {
    this.#git = git;
  }

  async ignored(path: string): Promise<boolean> {
    return this.#git.request(`${path}\0`, (out) => {
      // -v -n: four NUL-ended fields per path: source, line, pattern, path.
      let offset = 0;
      const fields: string[] = [];
      for (let field = 0; field < 4; field++) {
        const nul = out.indexOf(0, offset);
        if (nul < 0) return undefined;
        fields.push(out.toString('utf8', offset, nul));
        offset = nul + 1;
      }
      const [source = '', , pattern = ''] = fields;
      return { value: source !== '' && !pattern.startsWith('!'), used: offset };
    });
  }

  close(): void {
    this.#git.close();
  }
}
