import { z } from 'zod';
import { host, port, positiveInt } from '../lib/config-fields.js';

export const bridgeSchema = z.strictObject({
  host: host(),
  port: port(49134),
  /** Frames above this size close the connection (close code 1009). Large payloads belong in channels. */
  max_frame_bytes: positiveInt(8 * 1024 * 1024),
  ping_interval_ms: positiveInt(20_000),
  /** Per-socket outbound buffer cap; past it the engine stops reading from that worker and refuses calls to it. */
  max_outbound_buffer_bytes: positiveInt(16 * 1024 * 1024),
  trigger_ack_timeout_ms: positiveInt(10_000),
  /** Connections served at once (workers, channel and /otel sockets); the last tenth is kept for workers. */
  max_connections: positiveInt(8192),
  /** Time a new connection has to send its WebSocket upgrade request before it is closed. */
  handshake_timeout_ms: positiveInt(10_000),
  /** Time a spare channel socket (opened by `@flint/sdk` ahead of need) may wait for its `bindchannel` frame before it is closed. */
  spare_channel_idle_ms: positiveInt(60_000),
  /** Web origins allowed to open bridge sockets (exact `Origin` values, or `"*"`); upgrades without `Origin` are not affected. */
  allowed_origins: z.array(z.string().min(1)).default([]),
  /** When set, every worker and telemetry socket must present it (`Authorization: Bearer` or `?token=`); else `FLINT_BRIDGE_TOKEN`. */
  auth_token: z.string().min(1).optional(),
  /** Serve `wss://` with this certificate and key (PEM files; relative paths resolve against the config file's folder). */
  tls: z.strictObject({ cert_file: z.string().min(1), key_file: z.string().min(1) }).optional(),
  /** What the workers of this listener may do (see docs/security.md): an auth function, a call middleware, registration hooks, exposed functions. */
  access: z
    .strictObject({
      /** Called with `{headers, query_params, ip_address, addr, path}` before a worker connection is accepted. */
      auth_function_id: z.string().min(1).optional(),
      auth_timeout_ms: positiveInt(5_000),
      /** Called with `{function_id, payload, action, context}` before each call a worker of this listener makes (not `engine::` calls). */
      middleware_function_id: z.string().min(1).optional(),
      middleware_timeout_ms: positiveInt(5_000),
      /** Called before a function registration is applied: refuse it or rewrite it. */
      on_function_registration_function_id: z.string().min(1).optional(),
      /** Called before a trigger registration is applied: refuse it or rewrite it. */
      on_trigger_registration_function_id: z.string().min(1).optional(),
      /** Called before a trigger type registration is applied: refuse it or rewrite it. */
      on_trigger_type_registration_function_id: z.string().min(1).optional(),
      /** The functions this listener's workers can see and call: `match(<glob>)` on the id, or `{metadata: {key: value}}`. Absent: all. */
      expose_functions: z
        .array(
          z.union([
            z.string().regex(/^match\(.+\)$/, { message: 'expected match(<glob>), e.g. match(orders::*)' }),
            z.strictObject({ metadata: z.record(z.string(), z.unknown()) }),
          ]),
        )
        .optional(),
    })
    .optional(),
});

export type BridgeListenerConfig = z.output<typeof bridgeSchema>;

export const moduleEntrySchema = z
  .strictObject({
    name: z.string().min(1).optional(),
    class: z.string().min(1).optional(),
    config: z.record(z.string(), z.unknown()).optional(),
  })
  .refine((m) => (m.name === undefined) !== (m.class === undefined), { message: 'a module entry needs exactly one of "name" or "class"' });

export const engineConfigSchema = z.strictObject({
  /** One worker listener, or a list of them (the first is the engine's `bridgeUrl`). */
  bridge: z.preprocess((v) => (v === undefined ? [{}] : Array.isArray(v) ? v : [v]), z.array(bridgeSchema).min(1, { message: 'needs at least one listener' })),
  invocation_timeout_ms: positiveInt(30_000),
  /** Shutdown waits this long in all for modules to drain and stop; a module still busy then is named in the log and left behind. */
  shutdown_timeout_ms: positiveInt(10_000),
  /** Calls one worker may have waiting for results at once; past it calls fail with too_many_invocations. */
  max_invocations_per_worker: positiveInt(10_000),
  /** Check every call's payload against the worker function's `request_format` (JSON Schema) before it is sent. */
  validate_payloads: z.boolean().default(false),
  channels: z
    .strictObject({
      default_buffer_size: z.number().int().min(1).max(1024).default(64),
      ttl_ms: positiveInt(300_000),
      /** Channels one worker connection may have open at once; past it `engine::channels::create` fails with too_many_channels. */
      max_per_worker: positiveInt(1000),
    })
    .default({ default_buffer_size: 64, ttl_ms: 300_000, max_per_worker: 1000 }),
  /** Telemetry frames are kept only while a module consumes them, within both caps. */
  telemetry: z
    .strictObject({ buffer_frames: positiveInt(1000), buffer_bytes: positiveInt(4 * 1024 * 1024) })
    .default({ buffer_frames: 1000, buffer_bytes: 4 * 1024 * 1024 }),
  log: z
    .strictObject({
      level: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
      format: z.enum(['pretty', 'json']).default('pretty'),
    })
    .default({ level: 'info', format: 'pretty' }),
  modules: z.array(moduleEntrySchema).default([]),
  /** Several engines as one (off unless set): see docs/cluster.md. */
  cluster: z
    .strictObject({
      /** The messaging system the engines meet on. */
      transport: z.enum(['nats', 'redis']),
      /** Default: nats://127.0.0.1:4222 or redis://127.0.0.1:6379, by transport. */
      url: z.string().min(1).optional(),
      /** Engines with the same name form one cluster (a NATS subject token). */
      name: z
        .string()
        .regex(/^[A-Za-z0-9_-]+$/, 'letters, digits, "_" and "-" only')
        .default('flint'),
      /** This engine's id in the cluster; default `<hostname>-<pid>`. */
      node_id: z
        .string()
        .regex(/^[A-Za-z0-9_-]+$/, 'letters, digits, "_" and "-" only')
        .optional(),
      heartbeat_ms: positiveInt(1000),
      /** An engine whose heartbeats stopped this long ago is dropped, with what it provided. */
      expire_ms: positiveInt(5000),
      /** How long start-up waits for the transport before it fails. */
      connect_timeout_ms: positiveInt(5000),
    })
    .optional(),
});

export type EngineConfigInput = z.input<typeof engineConfigSchema>;
type ParsedConfig = z.output<typeof engineConfigSchema>;

/** A module entry after validation: its canonical name and its parsed config. */
export interface ResolvedModule {
  name: string;
  config: unknown;
}

export interface EngineConfig extends Omit<ParsedConfig, 'modules' | 'bridge'> {
  modules: ResolvedModule[];
  /** The first (or only) worker listener. */
  bridge: BridgeListenerConfig;
  /** Every worker listener, each with the config path that names it (`bridge`, or `bridge[1]` in a list). */
  bridges: readonly (BridgeListenerConfig & { path: string })[];
  /** Folder relative paths in module configs resolve against. */
  configDir: string;
  /** The config file, or undefined when the embedded defaults were used. */
  configFile: string | undefined;
  /**
   * Keys whose value came from `${VAR}` references, with the reference: `bridge.port` →
   * `${FLINT_BRIDGE_PORT}` (or `the default of ${FLINT_BRIDGE_PORT:49134}` when the variable is unset).
   */
  fromEnv: Readonly<Record<string, string>>;
}
