import { lstat, readFile, readdir, realpath, stat } from 'node:fs/promises';
import { basename, join, relative, resolve, sep } from 'node:path';
import { parse as parseYamlText } from 'yaml';
import { isInside } from '../sandbox/source-dir.js';

/** An Agent Skill (agentskills.io): a folder with a `SKILL.md`. */
export interface AgentSkill {
  name: string;
  description: string;
  /** `allowed-tools` from the front matter; undefined when the skill does not restrict tools. */
  allowedTools?: string[];
  license?: string;
  compatibility?: string;
  metadata: Record<string, string>;
  /** The body of `SKILL.md`: the instructions loaded on activation. */
  instructions: string;
  /** Absolute realpath of the skill folder. */
  dir: string;
  /** Files in the folder, relative to it (POSIX separators), `SKILL.md` excluded. */
  files: string[];
}

/** A spec violation or load problem; loading warns and keeps going. */
export interface AgentSkillWarning {
  /** The skill folder (or the folder scanned). */
  dir: string;
  message: string;
}

/** Options for {@link loadAgentSkills}. */
export interface LoadAgentSkillsOptions {
  /**
   * Called for each warning as it is found (they are also returned). The structured record, so
   * `on…Warning` like `onSandboxWarning`; `onWarning` hooks take a sentence.
   */
  onSkillWarning?: (warning: AgentSkillWarning) => void;
  /** Most files listed per skill (default 200). */
  maxFiles?: number;
}

/** The result of {@link loadAgentSkills}. */
export interface AgentSkillSet {
  skills: AgentSkill[];
  warnings: AgentSkillWarning[];
}

const MAX_SKILL_FILE_BYTES = 1_000_000;
const MAX_DESCRIPTION = 1024;
const MAX_COMPATIBILITY = 500;
const NAME_RULE = /^[a-z0-9]+(-[a-z0-9]+)*$/;
const FRONT_MATTER = /^\uFEFF?---[ \t]*\r?\n([\s\S]*?)\r?\n---[ \t]*(?:\r?\n|$)/;

/**
 * Loads Agent Skills from folders. Each folder is either a skill (holds `SKILL.md`) or a parent
 * of skill folders. Spec violations (name rules, name/folder mismatch, long description) warn
 * and keep the skill; a missing description or unparseable front matter warns and skips it.
 * Later folders override earlier ones with the same skill name. Never throws for content
 * problems; throws only when `signal` aborts.
 */
export async function loadAgentSkills(
  folders: readonly string[],
  options: LoadAgentSkillsOptions = {},
): Promise<AgentSkillSet> {
  const warnings: AgentSkillWarning[] = [];
  const warn = (dir: string, message: string) => {
    const warning = { dir, message };
    warnings.push(warning);
    options.onSkillWarning?.(warning);
  };
  const byName = new Map<string, AgentSkill>();
  for (const folder of folders) {
    const dir = resolve(folder);
    const kind = await folderKind(dir);
    if (kind === 'missing') {
      warn(dir, `Agent Skill folder ${dir} does not exist; skipped.`);
      continue;
    }
    const skillDirs: string[] = [];
    if (kind === 'skill') skillDirs.push(dir);
    else {
      for (const entry of (await readdir(dir, { withFileTypes: true })).sort((a, b) =>
        a.name.localeCompare(b.name),
      )) {
        if (
          entry.isDirectory() &&
          !entry.name.startsWith('.') &&
          (await folderKind(join(dir, entry.name))) === 'skill'
        ) {
          skillDirs.push(join(dir, entry.name));
        }
      }
      if (skillDirs.length === 0)
        warn(dir, `No SKILL.md in ${dir} or its sub-folders; nothing loaded.`);
    }
    for (const skillDir of skillDirs) {
      const skill = await loadAgentSkill(skillDir, warn, options.maxFiles ?? 200);
      if (!skill) continue;
      if (byName.has(skill.name))
        warn(
          skillDir,
          `Skill "${skill.name}" overrides one loaded earlier from ${byName.get(skill.name)?.dir}.`,
        );
      byName.set(skill.name, skill);
    }
  }
  return { skills: [...byName.values()], warnings };
}

async function folderKind(dir: string): Promise<'skill' | 'parent' | 'missing'> {
  try {
    if (!(await stat(dir)).isDirectory()) return 'missing';
  } catch {
    return 'missing';
  }
  try {
    return (await stat(join(dir, 'SKILL.md'))).isFile() ? 'skill' : 'parent';
  } catch {
    return 'parent';
  }
}

async function loadAgentSkill(
  dir: string,
  warn: (dir: string, message: string) => void,
  maxFiles: number,
): Promise<AgentSkill | undefined> {
  const file = join(dir, 'SKILL.md');
  const size = (await stat(file)).size;
  if (size > MAX_SKILL_FILE_BYTES) {
    warn(dir, `${file} is ${size} bytes (limit ${MAX_SKILL_FILE_BYTES}); skipped.`);
    return undefined;
  }
  const text = await readFile(file, 'utf8');
  const match = FRONT_MATTER.exec(text);
  if (!match) {
    warn(dir, `${file} has no YAML front matter (--- name/description ---); skipped.`);
    return undefined;
  }
  const frontMatter = parseFrontMatter(match[1] ?? '');
  if (frontMatter === undefined) {
    warn(dir, `${file}: the front matter is not valid YAML; skipped.`);
    return undefined;
  }
  const folderName = basename(dir);
  let name = typeof frontMatter['name'] === 'string' ? frontMatter['name'].trim() : '';
  if (name === '') {
    warn(dir, `${file}: "name" is missing; using the folder name "${folderName}".`);
    name = folderName;
  }
  if (name.length > 64 || !NAME_RULE.test(name)) {
    warn(
      dir,
      `${file}: name "${name}" breaks the spec (1-64 lowercase letters, digits and single hyphens).`,
    );
  }
  if (name !== folderName) {
    warn(dir, `${file}: name "${name}" does not match its folder "${folderName}".`);
  }
  let description =
    typeof frontMatter['description'] === 'string' ? frontMatter['description'].trim() : '';
  if (description === '') {
    warn(
      dir,
      `${file}: "description" is missing or empty; skipped (the model could not know when to use it).`,
    );
    return undefined;
  }
  if (description.length > MAX_DESCRIPTION) {
    warn(
      dir,
      `${file}: description is ${description.length} characters (limit ${MAX_DESCRIPTION}); cut.`,
    );
    description = description.slice(0, MAX_DESCRIPTION);
  }
  let compatibility =
    typeof frontMatter['compatibility'] === 'string' ? frontMatter['compatibility'] : undefined;
  if (compatibility !== undefined && compatibility.length > MAX_COMPATIBILITY) {
    warn(dir, `${file}: compatibility is longer than ${MAX_COMPATIBILITY} characters; cut.`);
    compatibility = compatibility.slice(0, MAX_COMPATIBILITY);
  }
  const allowedTools = parseAllowedTools(frontMatter['allowed-tools'], (message) =>
    warn(dir, `${file}: ${message}`),
  );
  const metadata: Record<string, string> = {};
  const rawMetadata = frontMatter['metadata'];
  if (rawMetadata !== undefined) {
    if (typeof rawMetadata === 'object' && rawMetadata !== null && !Array.isArray(rawMetadata)) {
      for (const [key, value] of Object.entries(rawMetadata)) metadata[key] = String(value);
    } else warn(dir, `${file}: metadata must be a map of strings; ignored.`);
  }
  const known = new Set([
    'name',
    'description',
    'license',
    'compatibility',
    'metadata',
    'allowed-tools',
  ]);
  for (const key of Object.keys(frontMatter)) {
    if (!known.has(key)) warn(dir, `${file}: unknown front matter field "${key}" ignored.`);
  }
  const root = await realpath(dir);
  const body = text.slice(match[0].length).trim();
  if (body.split('\n').length > 500)
    warn(
      dir,
      `${file}: the body has more than 500 lines; the spec advises moving detail into references/.`,
    );
  return {
    name,
    description,
    ...(allowedTools ? { allowedTools } : {}),
    ...(typeof frontMatter['license'] === 'string' ? { license: frontMatter['license'] } : {}),
    ...(compatibility !== undefined ? { compatibility } : {}),
    metadata,
    instructions: body,
    dir: root,
    files: await listSkillFiles(root, maxFiles, (message) => warn(dir, message)),
  };
}

function parseFrontMatter(text: string): Record<string, unknown> | undefined {
  const attempt = (source: string): Record<string, unknown> | undefined => {
    try {
      const value: unknown = parseYamlText(source);
      return typeof value === 'object' && value !== null && !Array.isArray(value)
        ? (value as Record<string, unknown>)
        : undefined;
    } catch {
      return undefined;
    }
  };
  // The client guide's fallback: unquoted values holding ": " are common; quote them and retry.
  return (
    attempt(text) ??
    attempt(
      text.replace(
        /^([A-Za-z-]+):[ \t]+(?!["'|>])(.*:\s.*)$/gm,
        (_line, key: string, value: string) => `${key}: ${JSON.stringify(value)}`,
      ),
    )
  );
}

function parseAllowedTools(value: unknown, warn: (message: string) => void): string[] | undefined {
  if (value === undefined || value === null) return undefined;
  if (Array.isArray(value)) return value.map(String).filter((item) => item.trim() !== '');
  if (typeof value === 'string') {
    // Space-delimited, but `Bash(git status)` keeps its inner spaces.
    return value.match(/[^\s(]+(?:\([^)]*\))?/g) ?? [];
  }
  warn('allowed-tools must be a space-delimited string or a list; ignored.');
  return undefined;
}

async function listSkillFiles(
  root: string,
  maxFiles: number,
  warn: (message: string) => void,
): Promise<string[]> {
  const files: string[] = [];
  const walk = async (dir: string, depth: number): Promise<void> => {
    if (depth > 4) return;
    for (const entry of (await readdir(dir, { withFileTypes: true })).sort((a, b) =>
      a.name.localeCompare(b.name),
    )) {
      if (entry.name.startsWith('.') || entry.name === 'node_modules') continue;
      const path = join(dir, entry.name);
      // Symlinks are listed only when they stay inside the skill folder.
      if (entry.isSymbolicLink()) {
        const target = await realpath(path).catch(() => undefined);
        if (target === undefined || !isInside(target, root)) continue;
      }
      const info = await lstat(path);
      if (entry.isDirectory() || (info.isSymbolicLink() && (await stat(path)).isDirectory())) {
        if (!info.isSymbolicLink()) await walk(path, depth + 1);
        continue;
      }
      const logical = relative(root, path).split(sep).join('/');
      if (logical === 'SKILL.md') continue;
      if (files.length >= maxFiles) {
        warn(`more than ${maxFiles} files in ${root}; the list is cut.`);
        return;
      }
      files.push(logical);
    }
  };
  await walk(root, 0);
  return files;
}
