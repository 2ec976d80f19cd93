/**
 * Helpers for the bridge listener and access-policy tests (bridge/access-listeners.test.ts,
 * bridge/access-policy.test.ts): engines with several bridge listeners, a gatekeeper (a trusted worker
 * on the open listener serving the access functions a policed listener names, answering as the test
 * says and recording what each was asked), workers on a given listener, and a self-signed certificate
 * made with the `openssl` CLI.
 *
 * Everything started here is torn down by `cleanup()` (cleanup.ts).
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { type Engine, type EngineOptions, startEngine } from '@flint/engine';
import { EngineFunctions, type TriggerTypeInfo } from '@flint/protocol';
import { FlintForbiddenError, type Worker as FlintWorker } from '@flint/sdk';
import { expect } from 'vitest';
import { track } from './cleanup.js';
import {
  type SdkKind,
  type TestWorker,
  type TestWorkerOptions,
  type TriggerConfigSeen,
  connectWorker,
  startWorker,
  waitForFunction,
  whenAnnounced,
} from './harness.js';
import { waitFor } from './util.js';

/** Starts an engine with these bridge listeners (each on an ephemeral port unless it says otherwise) and silent logs. */
export async function startListeners(
  listeners: Record<string, unknown>[],
  config: Record<string, unknown> = {},
  options: Omit<EngineOptions, 'config'> = {},
): Promise<Engine> {
  const engine = await startEngine({
    env: {},
    ...options,
    config: { bridge: listeners.map((l) => ({ port: 0, ...l })), log: { level: 'silent' }, ...config },
  });
  track(() => engine.stop());
  return engine;
}

/** The URL `engine.listeners()` gives the listener `name` (`bridge`, `bridge[1]`, …). */
export function listenerUrl(engine: Engine, name: string): string {
  const found = engine.listeners().find((l) => l.name === name);
  if (!found) throw new Error(`no listener ${name} in ${JSON.stringify(engine.listeners())}`);
  return found.url;
}

/** Connects a worker to `url` (a listener of `engine`), lets `setup` register things, and waits until the engine lists it. */
export async function startWorkerOn(
  kind: SdkKind,
  engine: Engine,
  url: string,
  setup?: (w: TestWorker) => void,
  options: TestWorkerOptions = {},
): Promise<TestWorker> {
  const worker = connectWorker(kind, url, options);
  setup?.(worker);
  await whenAnnounced(engine, worker);
  return worker;
}

/** The @flint/sdk `Worker` behind a test worker. */
export const flintOf = (w: TestWorker): FlintWorker => {
  if (w.kind !== 'flint') throw new Error('test bug: not an @flint/sdk worker');
  return w.native as FlintWorker;
};

/**
 * Expects `w`'s call to be refused by its listener's access policy: code FORBIDDEN (@flint/sdk: a
 * FlintForbiddenError), with `reason` in the message.
 */
export async function expectForbidden(w: TestWorker, request: Parameters<TestWorker['trigger']>[0], reason: string): Promise<void> {
  const error = await w.trigger(request).then(
    (value: unknown) => {
      throw new Error(`expected ${request.function_id} to be refused, got ${JSON.stringify(value)}`);
    },
    (err: unknown) => err as Error & { code?: string },
  );
  expect(error.code, error.message).toBe('FORBIDDEN');
  if (w.kind === 'flint') expect(error).toBeInstanceOf(FlintForbiddenError);
  expect(error.message).toContain(reason);
}

// ---------------------------------------------------------------------------------------------
// The gatekeeper
// ---------------------------------------------------------------------------------------------

export type AccessRole = 'auth' | 'middleware' | 'onFunction' | 'onTrigger' | 'onTriggerType';

/** The function each access role is served as, and the `access` key naming it. */
export const ACCESS_FUNCTIONS: Record<AccessRole, { id: string; key: string }> = {
  auth: { id: 'acl::auth', key: 'auth_function_id' },
  middleware: { id: 'acl::middleware', key: 'middleware_function_id' },
  onFunction: { id: 'acl::on_function', key: 'on_function_registration_function_id' },
  onTrigger: { id: 'acl::on_trigger', key: 'on_trigger_registration_function_id' },
  onTriggerType: { id: 'acl::on_trigger_type', key: 'on_trigger_type_registration_function_id' },
};

// biome-ignore lint/suspicious/noExplicitAny: access functions take and give arbitrary JSON
export type AccessAnswer = (input: any) => unknown;

export interface Gatekeeper {
  engine: Engine;
  /** The open listener (`bridge`): the trusted worker's, no access policy. */
  openUrl: string;
  /** The policed listener (`bridge[1]`). */
  url: string;
  /** The @flint/sdk worker on the open listener serving the access functions. */
  trusted: TestWorker;
  /** What each access function was called with, in order. */
  // biome-ignore lint/suspicious/noExplicitAny: inputs are arbitrary JSON
  seen: Record<AccessRole, any[]>;
  /** How each access function answers; a test replaces them at will. The defaults: auth `{}` (let in, no lists), the others nothing (let through). */
  answer: Record<AccessRole, AccessAnswer>;
}

export interface GatekeeperOptions {
  /** The access functions the policed listener names (default: the auth function only). */
  roles?: AccessRole[];
  /** More `access` settings of the policed listener (timeouts, `expose_functions`). */
  access?: Record<string, unknown>;
  /** More settings of the policed listener (`auth_token`, `tls`, …). */
  listener?: Record<string, unknown>;
  /** Initial answers of the access functions. */
  answers?: Partial<Record<AccessRole, AccessAnswer>>;
  /** More engine config (e.g. `cluster`). */
  config?: Record<string, unknown>;
  options?: Omit<EngineOptions, 'config'>;
}

/**
 * An engine with an open listener (`bridge`) and a policed one (`bridge[1]`) whose `access` names the
 * access functions of `roles`, served by a trusted @flint/sdk worker on the open listener.
 */
export async function startGatekeeper(opts: GatekeeperOptions = {}): Promise<Gatekeeper> {
  const roles = opts.roles ?? ['auth'];
  const access: Record<string, unknown> = { ...opts.access };
  for (const role of roles) access[ACCESS_FUNCTIONS[role].key] = ACCESS_FUNCTIONS[role].id;
  const engine = await startListeners([{}, { ...opts.listener, access }], opts.config, opts.options);
  const seen: Gatekeeper['seen'] = { auth: [], middleware: [], onFunction: [], onTrigger: [], onTriggerType: [] };
  const answer: Gatekeeper['answer'] = {
    auth: () => ({}),
    middleware: () => undefined,
    onFunction: () => undefined,
    onTrigger: () => undefined,
    onTriggerType: () => undefined,
  };
  for (const [role, fn] of Object.entries(opts.answers ?? {})) if (fn) answer[role as AccessRole] = fn;
  const trusted = await startWorker('flint', engine, (w) => {
    for (const role of roles) {
      w.registerFunction(ACCESS_FUNCTIONS[role].id, (input) => {
        seen[role].push(input);
        return answer[role](input);
      });
    }
  });
  return { engine, openUrl: listenerUrl(engine, 'bridge'), url: listenerUrl(engine, 'bridge[1]'), trusted, seen, answer };
}

/**
 * The gatekeeper's trusted worker serves each of `ids` (answering with its id; `metadata` by id); resolves
 * once all are listed, with the list of the ids called, in call order.
 */
export async function serveFunctions(g: Gatekeeper, ids: string[], metadata: Record<string, Record<string, unknown>> = {}): Promise<string[]> {
  const ran: string[] = [];
  for (const id of ids) {
    g.trusted.registerFunction(
      id,
      () => {
        ran.push(id);
        return id;
      },
      { metadata: metadata[id] },
    );
  }
  for (const id of ids) await waitForFunction(g.engine, id);
  return ran;
}

/** The ids of the trigger types the engine lists. */
export async function triggerTypeIds(engine: Engine): Promise<string[]> {
  const out = (await engine.invoke(EngineFunctions.LIST_TRIGGER_TYPES, {})) as { trigger_types: TriggerTypeInfo[] };
  return out.trigger_types.map((t) => t.id);
}

/** Has `provider` provide trigger type `id`, recording the triggers it is handed; resolves once the engine lists the type. */
export async function provideTriggerType(engine: Engine, provider: TestWorker, id: string): Promise<TriggerConfigSeen[]> {
  const seen: TriggerConfigSeen[] = [];
  provider.registerTriggerType({ id, description: `test type ${id}` }, { registerTrigger: (t) => void seen.push(t), unregisterTrigger: () => {} });
  await waitFor(async () => (await triggerTypeIds(engine)).includes(id), 2000, `trigger type ${id} to be listed`);
  return seen;
}

// ---------------------------------------------------------------------------------------------
// TLS
// ---------------------------------------------------------------------------------------------

/** A self-signed certificate for localhost and 127.0.0.1 (valid one day), written into `dir` by the `openssl` CLI. */
export function makeCertificate(dir: string): { certFile: string; keyFile: string; cert: Buffer } {
  const certFile = join(dir, 'cert.pem');
  const keyFile = join(dir, 'key.pem');
  execFileSync(
    'openssl',
    [
      'req',
      '-x509',
      '-newkey',
      'rsa:2048',
      '-nodes',
      '-keyout',
      keyFile,
      '-out',
      certFile,
      '-days',
      '1',
      '-subj',
      '/CN=localhost',
      '-addext',
      'subjectAltName=DNS:localhost,IP:127.0.0.1',
    ],
    { stdio: 'pipe' },
  );
  return { certFile, keyFile, cert: readFileSync(certFile) };
}
