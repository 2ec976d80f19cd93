/**
 * Config loading (design.md §4): file lookup, `${VAR}` / `${VAR:default}` substitution, strict
 * validation with every problem listed as `path: message (file:line)`. Real YAML files in a temp
 * folder, loaded through the public API only (createEngine / ConfigError); nothing is started.
 */
// biome-ignore-all lint/suspicious/noTemplateCurlyInString: `${VAR}` in plain strings is the config's substitution syntax under test, not a mistaken template.
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ConfigError, type Engine, type EngineOptions, type ModuleDefinition, createEngine, createLogger } from '@flint/engine';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';

/** A module definition of our own, so module lookup and module config validation are tested without depending on which built-ins exist. */
const testModuleSchema = z.strictObject({
  port: z.number().int().min(0).max(65535).default(1),
  label: z.string().optional(),
  url: z.string().optional(),
  enabled: z.boolean().optional(),
});
const testModule: ModuleDefinition<z.output<typeof testModuleSchema>> = {
  name: 'flint-test',
  aliases: ['modules::test::TestModule'],
  configSchema: testModuleSchema,
  create: () => ({ name: 'flint-test', start: () => {} }),
};
const modules = [testModule as ModuleDefinition];
const silent = createLogger({ level: 'silent' });

let dir: string;
let fileCount = 0;
const engines: Engine[] = [];

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'flint-config-test-'));
});
afterEach(async () => {
  for (const engine of engines.splice(0)) await engine.stop();
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** Writes a config file into the temp folder and returns its absolute path. */
async function writeConfig(text: string, name = `config-${++fileCount}.yaml`): Promise<string> {
  const file = join(dir, name);
  await writeFile(file, text);
  return file;
}

/** 1-based line of the first line of `text` containing `needle`. */
function lineOf(text: string, needle: string): number {
  const index = text.split('\n').findIndex((line) => line.includes(needle));
  if (index < 0) throw new Error(`test bug: ${JSON.stringify(needle)} is not in the config`);
  return index + 1;
}

function load(options: EngineOptions): Engine {
  const engine = createEngine({ env: {}, modules, logger: silent, ...options });
  engines.push(engine);
  return engine;
}

function loadError(options: EngineOptions): ConfigError {
  try {
    load(options);
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    return err as ConfigError;
  }
  throw new Error('expected createEngine to throw a ConfigError');
}

async function fileError(text: string, env: NodeJS.ProcessEnv = {}): Promise<{ file: string; lines: string[]; error: ConfigError }> {
  const file = await writeConfig(text);
  const error = loadError({ configPath: file, env });
  return { file, lines: error.message.split('\n'), error };
}

const escapeRe = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** `<path>: unknown module "<name>" (known: ..., flint-test, ...) (<file>:<line>)`; the built-in modules are listed too. */
const unknownModule = (path: string, name: string, file: string, line: number) =>
  new RegExp(`^${escapeRe(path)}: unknown module "${escapeRe(name)}" \\(known: [^)]*\\bflint-test\\b[^)]*\\) \\(${escapeRe(file)}:${line}\\)$`);

describe('config file lookup', () => {
  it('loads the embedded defaults, with every known module, when there is no --config and no ./flint-config.yaml', async () => {
    const cwd = await mkdtemp(join(dir, 'empty-'));
    const engine = load({ cwd });
    expect(engine.config.configFile).toBeUndefined();
    expect(engine.config.configDir).toBe(cwd);
    expect(engine.config.bridge).toMatchObject({ host: '127.0.0.1', port: 49134, max_frame_bytes: 8 * 1024 * 1024 });
    expect(engine.config.invocation_timeout_ms).toBe(30_000);
    expect(engine.config.log).toEqual({ level: 'info', format: 'pretty' });
    // every known module, the built-in ones and ours, with its default config
    expect(engine.config.modules).toContainEqual({ name: 'flint-test', config: { port: 1 } });
    expect(engine.moduleNames).toEqual(engine.config.modules.map((m) => m.name));
    expect(Object.isFrozen(engine.config)).toBe(true);
    expect(Object.isFrozen(engine.config.bridge)).toBe(true);
  });

  it('uses ./flint-config.yaml of the working folder when no --config is given', async () => {
    const cwd = await mkdtemp(join(dir, 'cwd-'));
    const file = join(cwd, 'flint-config.yaml');
    await writeFile(file, 'log: { level: silent }\ninvocation_timeout_ms: 1234\n');
    const engine = load({ cwd });
    expect(engine.config.configFile).toBe(file);
    expect(engine.config.configDir).toBe(cwd);
    expect(engine.config.invocation_timeout_ms).toBe(1234);
    expect(engine.config.modules).toEqual([]);
  });

  it('resolves a relative --config against the working folder', async () => {
    const cwd = await mkdtemp(join(dir, 'rel-'));
    await mkdir(join(cwd, 'conf'));
    await writeFile(join(cwd, 'conf', 'my.yaml'), 'log: { level: silent }\nbridge: { port: 0 }\n');
    const engine = load({ cwd, configPath: 'conf/my.yaml' });
    expect(engine.config.configFile).toBe(join(cwd, 'conf', 'my.yaml'));
    expect(engine.config.configDir).toBe(join(cwd, 'conf'));
    expect(engine.config.bridge.port).toBe(0);
  });

  it('fails when the --config file does not exist, even if ./flint-config.yaml does', async () => {
    const cwd = await mkdtemp(join(dir, 'missing-'));
    await writeFile(join(cwd, 'flint-config.yaml'), 'log: { level: silent }\n');
    const error = loadError({ cwd, configPath: 'missing.yaml' });
    expect(error.message).toBe(`(root): config file not found: ${join(cwd, 'missing.yaml')}`);
    expect(error.problems).toHaveLength(1);
  });

  it('an empty file is a valid config with every default', async () => {
    const file = await writeConfig('# nothing here\n');
    const engine = load({ configPath: file });
    expect(engine.config.bridge.port).toBe(49134);
    expect(engine.config.modules).toEqual([]);
  });
});

describe('environment substitution', () => {
  it('replaces ${VAR} and ${VAR:default} in string values, also inside longer strings and in module configs', async () => {
    const file = await writeConfig(
      [
        'log: { level: silent }',
        'bridge:',
        '  host: ${FLINT_T_HOST}',
        'modules:',
        '  - name: flint-test',
        '    config:',
        '      label: "pre-${FLINT_T_NAME:anon}-${FLINT_T_SUFFIX}"',
        '      url: "${FLINT_T_URL:redis://127.0.0.1:6379}"',
        '',
      ].join('\n'),
    );
    const engine = load({ configPath: file, env: { FLINT_T_HOST: '0.0.0.0', FLINT_T_SUFFIX: 'x' } });
    expect(engine.config.bridge.host).toBe('0.0.0.0');
    expect(engine.config.modules[0]?.config).toEqual({ port: 1, label: 'pre-anon-x', url: 'redis://127.0.0.1:6379' });
  });

  it('a value that is exactly one reference takes the scalar type of its text (port: ${P:0} is a number)', async () => {
    const text = [
      'log: { level: silent }',
      'bridge:',
      '  port: ${FLINT_T_PORT:0}',
      'invocation_timeout_ms: ${FLINT_T_TIMEOUT}',
      'modules:',
      '  - name: flint-test',
      '    config:',
      '      port: ${FLINT_T_MOD_PORT:3111}',
      '      enabled: ${FLINT_T_ENABLED:true}',
      '      label: ${FLINT_T_LABEL:0}x',
      '',
    ].join('\n');
    const file = await writeConfig(text);
    const engine = load({ configPath: file, env: { FLINT_T_TIMEOUT: '2500' } });
    expect(engine.config.bridge.port).toBe(0);
    expect(engine.config.invocation_timeout_ms).toBe(2500);
    expect(engine.config.modules[0]?.config).toEqual({ port: 3111, enabled: true, label: '0x' });

    const fromEnv = load({ configPath: file, env: { FLINT_T_PORT: '4000', FLINT_T_TIMEOUT: '10', FLINT_T_ENABLED: 'false' } });
    expect(fromEnv.config.bridge.port).toBe(4000);
    expect(fromEnv.config.modules[0]?.config).toMatchObject({ enabled: false });
  });

  it('a numeric or boolean-looking value stays a string where the schema wants a string', async () => {
    const text = [
      'log: { level: silent }',
      'bridge:',
      '  host: ${FLINT_T_HOST}',
      'modules:',
      '  - name: flint-test',
      '    config:',
      '      label: ${FLINT_T_LABEL}',
      '',
    ].join('\n');
    const file = await writeConfig(text);
    const engine = load({ configPath: file, env: { FLINT_T_HOST: '12345', FLINT_T_LABEL: 'true' } });
    expect(engine.config.bridge.host).toBe('12345');
    expect(engine.config.modules[0]?.config).toMatchObject({ label: 'true' });
  });

  it('reports a variable that is not set and has no default, with its path and line', async () => {
    const text = 'log: { level: silent }\nbridge:\n  host: ${FLINT_T_UNSET_HOST}\n';
    const { file, lines } = await fileError(text);
    expect(lines).toEqual([
      `bridge.host: environment variable FLINT_T_UNSET_HOST is not set and has no default (write \${FLINT_T_UNSET_HOST:default}) (${file}:${lineOf(text, 'host:')})`,
    ]);
  });

  it('reports a missing variable inside a longer string and in a module config', async () => {
    const text = ['log: { level: silent }', 'modules:', '  - name: flint-test', '    config:', '      label: "a-${FLINT_T_UNSET_LABEL}-b"', ''].join('\n');
    const { file, lines } = await fileError(text);
    expect(lines).toContain(
      `modules[0].config.label: environment variable FLINT_T_UNSET_LABEL is not set and has no default (write \${FLINT_T_UNSET_LABEL:default}) (${file}:${lineOf(text, 'label:')})`,
    );
  });

  it('a missing variable for a number field is reported once (not again as a wrong type)', async () => {
    const text = [
      'log: { level: silent }',
      'bridge:',
      '  port: ${FLINT_T_UNSET_PORT}',
      'modules:',
      '  - name: flint-test',
      '    config:',
      '      port: ${FLINT_T_UNSET_MOD_PORT}',
      '',
    ].join('\n');
    const { file, lines } = await fileError(text);
    expect(lines).toEqual([
      `bridge.port: environment variable FLINT_T_UNSET_PORT is not set and has no default (write \${FLINT_T_UNSET_PORT:default}) (${file}:3)`,
      `modules[0].config.port: environment variable FLINT_T_UNSET_MOD_PORT is not set and has no default (write \${FLINT_T_UNSET_MOD_PORT:default}) (${file}:7)`,
    ]);
  });

  it('a value from a variable that does not fit its key names the variable, once', async () => {
    const text = [
      'log: { level: silent }',
      'bridge:',
      '  port: ${FLINT_T_PORT}',
      'invocation_timeout_ms: ${FLINT_T_TIMEOUT:soon}',
      'modules:',
      '  - name: flint-test',
      '    config:',
      '      port: ${FLINT_T_MOD_PORT}',
      '',
    ].join('\n');
    const { file, lines } = await fileError(text, { FLINT_T_PORT: 'abc', FLINT_T_MOD_PORT: '99999' });
    expect(lines).toEqual([
      `bridge.port: "abc" (from \${FLINT_T_PORT}) is not a valid port (0-65535) (${file}:3)`,
      `invocation_timeout_ms: "soon" (from the default of \${FLINT_T_TIMEOUT:soon}): Invalid input: expected number, received string (${file}:4)`,
      `modules[0].config.port: "99999" (from \${FLINT_T_MOD_PORT}): Too big: expected number to be <=65535 (${file}:8)`,
    ]);
  });

  it('engine.config.fromEnv names the keys whose value came from a variable', async () => {
    const text = [
      'log: { level: silent }',
      'bridge:',
      '  port: ${FLINT_T_PORT:0}',
      '  host: ${FLINT_T_HOST}',
      'modules:',
      '  - name: flint-test',
      '    config:',
      '      label: "pre-${FLINT_T_NAME:anon}-${FLINT_T_SUFFIX}"',
      '',
    ].join('\n');
    const file = await writeConfig(text);
    const engine = load({ configPath: file, env: { FLINT_T_HOST: '127.0.0.1', FLINT_T_SUFFIX: 'x' } });
    expect(engine.config.fromEnv).toEqual({
      'bridge.port': 'the default of ${FLINT_T_PORT:0}',
      'bridge.host': '${FLINT_T_HOST}',
      'modules[0].config.label': 'the default of ${FLINT_T_NAME:anon}, ${FLINT_T_SUFFIX}',
    });
  });

  it('never substitutes in YAML comments (an unset variable in a comment is not an error)', async () => {
    const text = [
      '# bridge port: ${FLINT_T_UNSET_IN_COMMENT}',
      'log: { level: silent }  # ${FLINT_T_ALSO_UNSET}',
      'bridge:',
      '  # host: ${FLINT_T_HOST_IN_COMMENT:0.0.0.0}',
      '  host: 127.0.0.1 # ${FLINT_T_HOST_IN_COMMENT:0.0.0.0}',
      '',
    ].join('\n');
    const file = await writeConfig(text);
    const engine = load({ configPath: file, env: { FLINT_T_HOST_IN_COMMENT: '10.0.0.1' } });
    expect(engine.config.bridge.host).toBe('127.0.0.1');
  });
});

describe('strict validation', () => {
  it('reports an unknown top-level key with its line', async () => {
    const text = 'log: { level: silent }\nbogus: 1\n';
    const { file, lines } = await fileError(text);
    expect(lines).toEqual([`bogus: unknown key (${file}:2)`]);
  });

  it('reports an unknown nested key as bridge.prot with its line', async () => {
    const text = ['log: { level: silent }', '', 'bridge:', '  host: 127.0.0.1', '  prot: 3000', ''].join('\n');
    const { file, lines } = await fileError(text);
    expect(lines).toEqual([`bridge.prot: unknown key (${file}:${lineOf(text, 'prot:')})`]);
    expect(lineOf(text, 'prot:')).toBe(5);
  });

  it('reports the line of the key, not of its value, when an unknown key holds a block mapping', async () => {
    const text = ['log: { level: silent }', 'bridge:', '  prot:', '    nested: 1', 'extra:', '  a: 1', ''].join('\n');
    const { file, lines } = await fileError(text);
    expect(lines).toEqual([`bridge.prot: unknown key (${file}:3)`, `extra: unknown key (${file}:5)`]);
  });

  it('reports unknown keys in a module entry and in a module config', async () => {
    const text = ['log: { level: silent }', 'modules:', '  - name: flint-test', '    confg: {}', ''].join('\n');
    const first = await fileError(text);
    expect(first.lines).toEqual([`modules[0].confg: unknown key (${first.file}:4)`]);

    const text2 = ['log: { level: silent }', 'modules:', '  - name: flint-test', '    config:', '      port: 80', '      lable: x', ''].join('\n');
    const second = await fileError(text2);
    expect(second.lines).toEqual([`modules[0].config.lable: unknown key (${second.file}:6)`]);
  });

  it('reports wrong types and bad values with path and line', async () => {
    const cases: [text: string, path: string, line: number, message: RegExp][] = [
      ['bridge:\n  port: "3000"\n', 'bridge.port', 2, /"3000" is not a valid port \(0-65535\)/],
      ['bridge:\n  port: 70000\n', 'bridge.port', 2, /70000 is not a valid port \(0-65535\)/],
      ['bridge:\n  port: 80.5\n', 'bridge.port', 2, /80\.5 is not a valid port/],
      ['bridge:\n  port:\n  host: x\n', 'bridge.port', 2, /null is not a valid port/],
      ['invocation_timeout_ms: -5\n', 'invocation_timeout_ms', 1, /too small|>\s*0/i],
      ['invocation_timeout_ms: 1.5\n', 'invocation_timeout_ms', 1, /int/i],
      ['log: { level: loud }\n', 'log.level', 1, /expected one of/],
      ['bridge: 5\n', 'bridge', 1, /expected object/],
      ['modules: { name: flint-test }\n', 'modules', 1, /expected array/],
      ['modules:\n  - name: flint-test\n    config:\n      port: abc\n', 'modules[0].config.port', 4, /expected number, received string/],
    ];
    for (const [text, path, line, message] of cases) {
      const { file, lines } = await fileError(text);
      expect(lines, text).toHaveLength(1);
      expect(lines[0], text).toMatch(new RegExp(`^${escapeRe(path)}: .*${message.source}.* \\(${escapeRe(file)}:${line}\\)$`, message.flags));
    }
  });

  it('lists several problems at once, every line as `path: message (file:line)`', async () => {
    const text = [
      'log:',
      '  level: loud', // bad value
      'bridge:',
      '  port: "x"', // wrong type
      '  prot: 1', // unknown key
      'invocation_timeout_ms: -5', // bad value
      'channels:',
      '  default_buffer_size: 4096', // too big
      'telemetry: { buffer_frames: "many" }', // wrong type
      '',
    ].join('\n');
    const { file, lines, error } = await fileError(text);
    expect(lines).toHaveLength(6);
    expect(error.problems).toHaveLength(6);
    for (const line of lines) expect(line).toMatch(new RegExp(`^[\\w.\\[\\]]+: .+ \\(${escapeRe(file)}:\\d+\\)$`));
    const byPath = new Map(lines.map((l) => [l.slice(0, l.indexOf(': ')), l]));
    expect([...byPath.keys()].sort()).toEqual(
      ['bridge.port', 'bridge.prot', 'channels.default_buffer_size', 'invocation_timeout_ms', 'log.level', 'telemetry.buffer_frames'].sort(),
    );
    expect(byPath.get('log.level')).toMatch(/:2\)$/);
    expect(byPath.get('bridge.port')).toMatch(/:4\)$/);
    expect(byPath.get('bridge.prot')).toBe(`bridge.prot: unknown key (${file}:5)`);
    expect(byPath.get('invocation_timeout_ms')).toMatch(/:6\)$/);
    expect(byPath.get('channels.default_buffer_size')).toMatch(/:8\)$/);
    expect(byPath.get('telemetry.buffer_frames')).toMatch(/:9\)$/);
  });

  it('lists problems of the top level and of module entries together', async () => {
    const text = [
      'log: { level: silent }',
      'bogus: 1', // unknown key at the top level
      'modules:',
      '  - name: flint-nope', // unknown module
      '  - name: flint-test',
      '    config: { port: "x" }', // wrong type in a module config
      '',
    ].join('\n');
    const { file, lines } = await fileError(text);
    expect(lines).toContain(`bogus: unknown key (${file}:2)`);
    expect(lines.some((l) => unknownModule('modules[0].name', 'flint-nope', file, 4).test(l))).toBe(true);
    expect(lines.some((l) => l.startsWith('modules[1].config.port: ') && l.endsWith(`(${file}:6)`))).toBe(true);
  });

  it('reports an unknown module name, in the name form and in the class form', async () => {
    const text = ['log: { level: silent }', 'modules:', '  - name: flint-test', '  - name: flint-nope', '  - class: modules::nope::NopeModule', ''].join('\n');
    const { file, lines } = await fileError(text);
    expect(lines).toHaveLength(2);
    expect(lines[0]).toMatch(unknownModule('modules[1].name', 'flint-nope', file, 4));
    expect(lines[1]).toMatch(unknownModule('modules[2].class', 'modules::nope::NopeModule', file, 5));
  });

  it('accepts the class form as an alias of the module name', async () => {
    const file = await writeConfig(['log: { level: silent }', 'modules:', '  - class: modules::test::TestModule', '    config: { port: 9 }', ''].join('\n'));
    const engine = load({ configPath: file });
    expect(engine.config.modules).toEqual([{ name: 'flint-test', config: { port: 9 } }]);
    expect(engine.moduleNames).toEqual(['flint-test']);
  });

  it('rejects a module entry with both name and class, or with neither', async () => {
    const text = ['log: { level: silent }', 'modules:', '  - name: flint-test', '    class: modules::test::TestModule', ''].join('\n');
    const both = await fileError(text);
    expect(both.lines).toEqual([`modules[0]: a module entry needs exactly one of "name" or "class" (${both.file}:3)`]);

    const neither = await fileError(['log: { level: silent }', 'modules:', '  - config: { port: 1 }', ''].join('\n'));
    expect(neither.lines).toEqual([`modules[0]: a module entry needs exactly one of "name" or "class" (${neither.file}:3)`]);
  });

  it('rejects a module listed twice (by name and by alias)', async () => {
    const { file, lines } = await fileError(
      ['log: { level: silent }', 'modules:', '  - name: flint-test', '  - class: modules::test::TestModule', ''].join('\n'),
    );
    expect(lines).toEqual([`modules[1]: module flint-test is listed twice (${file}:4)`]);
  });

  it('reports invalid YAML syntax with its line', async () => {
    const cases: [text: string, line: number][] = [
      [['log: { level: silent }', 'bridge:', '  port: 1: 2', ''].join('\n'), 3], // nested mapping in a compact mapping
      [['log: { level: silent }', 'bridge:', '  port: 1', ' host: x', ''].join('\n'), 4], // bad indentation
      [['log: { level: silent }', 'bridge:', '\tport: 1', ''].join('\n'), 3], // tab as indentation
      [['log: { level: silent }', 'bridge:', '  port: 1', '  port: 2', ''].join('\n'), 4], // duplicate key
    ];
    for (const [text, line] of cases) {
      const { file, lines } = await fileError(text);
      expect(lines.length, text).toBeGreaterThan(0);
      for (const l of lines) expect(l, text).toMatch(new RegExp(`^\\(root\\): invalid YAML: .+ \\(${escapeRe(file)}:\\d+\\)$`));
      expect(lines[0], text).toMatch(new RegExp(`\\(${escapeRe(file)}:${line}\\)$`));
    }
  });

  it('reports an alias to an undefined anchor as a config problem, not as a crash', async () => {
    const text = ['log: { level: silent }', 'bridge: *nope', ''].join('\n');
    const { file, lines } = await fileError(text);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(new RegExp(`^.+: .*(alias|anchor).* \\(${escapeRe(file)}:2\\)$`, 'i'));
  });

  it('rejects a config that is not a mapping', async () => {
    const { file, lines } = await fileError('- just\n- a list\n');
    expect(lines).toEqual([`(root): the config must be a mapping (key: value) (${file})`]);
  });
});

describe('config given as an object', () => {
  it('createEngine({config}) validates, applies defaults and resolves modules without any file', async () => {
    const cwd = await mkdtemp(join(dir, 'object-'));
    const engine = load({
      cwd,
      env: { FLINT_T_PORT: '5000' },
      config: {
        log: { level: 'silent' },
        bridge: { port: '${FLINT_T_PORT:0}' },
        invocation_timeout_ms: 100,
        modules: [{ class: 'modules::test::TestModule', config: { label: '${FLINT_T_LABEL:x}' } }],
      },
    });
    expect(engine.config.configFile).toBeUndefined();
    expect(engine.config.configDir).toBe(cwd);
    expect(engine.config.bridge).toMatchObject({ host: '127.0.0.1', port: 5000 });
    expect(engine.config.invocation_timeout_ms).toBe(100);
    expect(engine.config.log).toEqual({ level: 'silent', format: 'pretty' });
    expect(engine.config.modules).toEqual([{ name: 'flint-test', config: { port: 1, label: 'x' } }]);
    expect(engine.moduleNames).toEqual(['flint-test']);
    expect(engine.bridgeUrl).toBe('');
    expect(Object.isFrozen(engine.config.modules)).toBe(true);
  });

  it('an object config is never mixed with ./flint-config.yaml', async () => {
    const cwd = await mkdtemp(join(dir, 'object-cwd-'));
    await writeFile(join(cwd, 'flint-config.yaml'), 'invocation_timeout_ms: 999\n');
    const engine = load({ cwd, config: { log: { level: 'silent' } } });
    expect(engine.config.invocation_timeout_ms).toBe(30_000);
    expect(engine.config.configFile).toBeUndefined();
  });

  it('object configs are validated as strictly as files (no file location in the message)', () => {
    const error = loadError({ config: { log: { level: 'silent' }, bridge: { prot: 1, port: 'x' }, modules: [{ name: 'flint-nope' }] } });
    expect(error.file).toBeUndefined();
    const lines = error.message.split('\n');
    expect(lines).toContain('bridge.prot: unknown key');
    expect(lines).toContain('bridge.port: "x" is not a valid port (0-65535)');
  });
});
