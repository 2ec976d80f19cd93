import type { FunctionInfo, TriggerInfo, TriggerTypeInfo, WorkerInfo } from '@flint/protocol';

/** What a worker tells about itself (`engine::workers::register`). */
export interface WorkerMetadata {
  name?: string;
  runtime?: string;
  version?: string;
  os?: string;
  pid?: number;
  isolation?: string | null;
  telemetry?: Record<string, unknown>;
}

/** A change to what is registered. Functions, triggers and workers each come and go. */
export type RegistryEvent =
  | { type: 'function_added' | 'function_removed'; function_id: string }
  /** `trigger_updated`: registered again under its id (its config may differ), or applied or parked as its type's provider came or went. */
  | { type: 'trigger_added' | 'trigger_updated' | 'trigger_removed'; trigger_id: string; trigger_type: string; function_id: string }
  | { type: 'trigger_type_added' | 'trigger_type_removed'; trigger_type: string }
  | { type: 'worker_connected' | 'worker_disconnected' | 'worker_metadata_updated'; worker_id: string };

/** The other engines of a cluster, as the registry's listings show them (each entry with its `engine`). */
export interface RemoteView {
  /** This engine's `cluster.node_id`. */
  readonly nodeId: string;
  workers(): WorkerInfo[];
  triggers(): TriggerInfo[];
}

/** Read access to the registry, for modules that show or index what is registered. */
export interface RegistryView {
  /** Whether a function currently has at least one live provider. */
  hasFunction(functionId: string): boolean;
  functions(includeInternal?: boolean): FunctionInfo[];
  triggers(includeInternal?: boolean): TriggerInfo[];
  triggerTypes(includeInternal?: boolean): TriggerTypeInfo[];
  /** Connected workers; connections that never announced themselves only when `includeAnonymous`. */
  workers(includeAnonymous?: boolean): WorkerInfo[];
  worker(workerId: string): WorkerInfo | undefined;
  /** Records what a connected worker says about itself; false when no such worker is connected. */
  describeWorker(workerId: string, metadata: WorkerMetadata): boolean;
  /** Calls `listener` for every change until the returned function is called (or the module stops). */
  subscribe(listener: (event: RegistryEvent) => void): () => void;
}
