import type { AdapterFactory } from '../../core/api/adapters.js';
import { builtinQueueAdapter } from './builtin/adapter.js';

/** The queue family: `builtin`. */
export const queueAdapters: AdapterFactory<'queue'>[] = [builtinQueueAdapter];
