import { describe, expect, it } from 'vitest';
import { SandboxSettingsSchema } from '../../src/config/actor-schema.js';
import { SANDBOX_BACKENDS, sandboxBackend } from '../../src/sandbox/backends.js';

describe('the sandbox backend table', () => {
  it('is what the config schema describes: every backend named with its own line', () => {
    const described = SandboxSettingsSchema.shape.backend.description ?? '';
    for (const backend of Object.values(SANDBOX_BACKENDS)) {
      expect(described).toContain(`\`${backend.name}\``);
      expect(described).toContain(backend.description);
    }
  });

  it("validates the backend-dependent keys with the backend's own schema", () => {
    const memoryHead = SandboxSettingsSchema.safeParse({ backend: 'memory', from: 'head' });
    expect(memoryHead.success).toBe(false);
    expect(memoryHead.error?.issues.map((issue) => issue.message).join('\n')).toMatch(
      /memory backend copies your files as they are/,
    );
    const memoryRevision = SandboxSettingsSchema.safeParse({ backend: 'memory', revision: 'v1' });
    expect(memoryRevision.error?.issues.map((issue) => issue.message).join('\n')).toMatch(
      /memory sandbox backend does not take revision/,
    );
    expect(SandboxSettingsSchema.safeParse({ backend: 'git', from: 'head' }).success).toBe(true);
    expect(SandboxSettingsSchema.safeParse({ backend: 'memory' }).success).toBe(true);
  });

  it('says what each backend can do with capabilities, not names', () => {
    expect(sandboxBackend('git').share).toBeDefined();
    expect(sandboxBackend('git').persistent).toBe(true);
    expect(sandboxBackend('memory').share).toBeUndefined();
    expect(sandboxBackend('memory').persistent).toBe(false);
    expect(() => sandboxBackend('docker', 'actor "odd"')).toThrow(
      /actor "odd": unknown sandbox backend "docker".*use one of: git, memory/,
    );
  });
});
