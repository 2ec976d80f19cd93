import { z } from 'zod';
import { adapterRef } from '../../lib/adapter-ref.js';
import { positiveInt } from '../../lib/config-fields.js';

export const pubsubConfigSchema = z.strictObject({
  /** A `pubsub` adapter: `{name: local}` (this engine) or `{name: redis, config: {redis_url, channel_prefix}}` (every engine on the Redis). */
  adapter: adapterRef({ name: 'local' }),
  /** Largest message (`data` as JSON) that `publish` accepts. */
  max_message_bytes: positiveInt(1024 * 1024),
});

export type PubSubConfig = z.output<typeof pubsubConfigSchema>;
