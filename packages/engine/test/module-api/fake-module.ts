/**
 * A small fake module for the module-API tests: a `ModuleDefinition` whose start/drain/stop run what
 * the test hands it, so a test can use the `ModuleContext` as a real module would. Engines are
 * started through the public `startEngine` (via the harness) with the fake module listed in the config.
 */
import type { AdapterFamily, Engine, EngineOptions, ModuleContext, ModuleDefinition } from '@flint/engine';
import { z } from 'zod';
import { startTestEngine } from '../support/harness.js';

/** The fake module's config: a label, and an optional adapter reference (`{name, config}`, as `adapterRef` has it). */
export const fakeConfigSchema = z.strictObject({
  label: z.string().default('fake'),
  adapter: z.looseObject({ name: z.string().min(1), config: z.record(z.string(), z.unknown()).optional() }).optional(),
});

export type FakeConfig = z.output<typeof fakeConfigSchema>;

export interface FakeBehaviour {
  start?(ctx: ModuleContext, config: FakeConfig): void | Promise<void>;
  drain?(): void | Promise<void>;
  stop?(): void | Promise<void>;
}

/** A module named `name` doing what `behaviour` says; `adapters` is the definition's adapter keys. */
export function fakeModule(name: string, behaviour: FakeBehaviour = {}, adapters?: Record<string, AdapterFamily>): ModuleDefinition {
  const def: ModuleDefinition<FakeConfig> = {
    name,
    configSchema: fakeConfigSchema,
    adapters,
    create: (config) => ({
      name,
      start: (ctx) => behaviour.start?.(ctx, config),
      drain: behaviour.drain && (() => behaviour.drain?.()),
      stop: behaviour.stop && (() => behaviour.stop?.()),
    }),
  };
  return def as ModuleDefinition;
}

/** A fake module that only hands its context to the test (resolved once the module started). */
export function contextModule(name = 'test-fake'): { def: ModuleDefinition; ctx: () => ModuleContext } {
  let ctx: ModuleContext | undefined;
  const def = fakeModule(name, {
    start: (c) => {
      ctx = c;
    },
  });
  return {
    def,
    ctx: () => {
      if (!ctx) throw new Error(`module ${name} has not started`);
      return ctx;
    },
  };
}

export interface ModuleEntry {
  name: string;
  config?: Record<string, unknown>;
}

/** Starts an engine (bridge on port 0, silent unless `options.logger`) with `defs` known and `entries` loaded, in order. */
export function startWithModules(
  defs: ModuleDefinition[],
  entries: ModuleEntry[],
  extra: Record<string, unknown> = {},
  options: Omit<EngineOptions, 'config' | 'modules'> = {},
): Promise<Engine> {
  return startTestEngine({ ...extra, modules: entries }, { ...options, modules: defs });
}

/** `flint-http` on a free port. */
export const HTTP: ModuleEntry = { name: 'flint-http', config: { host: '127.0.0.1', port: 0 } };

/** The URL of the listener `name` (`http` for flint-http). */
export function listenerUrl(engine: Engine, name: string): string {
  const found = engine.listeners().find((l) => l.name === name);
  if (!found) throw new Error(`no listener ${name}: ${JSON.stringify(engine.listeners())}`);
  return found.url;
}

/** A W3C traceparent with a random trace id. */
export function traceparent(): string {
  const hex = (n: number) => Array.from({ length: n }, () => Math.floor(Math.random() * 16).toString(16)).join('');
  return `00-${hex(32)}-${hex(16)}-01`;
}
