import { FlintError } from '@flint/protocol';
import type { ModuleContext } from '../../core/module-api.js';
import { payloadObject } from '../../lib/payload.js';
import type { CronJobs } from './jobs.js';

/** `flint::cron::trigger` (run a cron trigger now: the console's Trigger Now) and `engine::cron::list`. */
export function registerCronFunctions(ctx: ModuleContext, jobs: CronJobs): void {
  ctx.registerFunction(
    {
      id: 'flint::cron::trigger',
      description: 'Run a cron trigger now (payload manual: true; condition applied, lock and overlap bypassed); returns its result',
      request_format: { type: 'object', properties: { trigger_id: { type: 'string', minLength: 1 } }, required: ['trigger_id'] },
    },
    async (input) => {
      const id = payloadObject(input).trigger_id;
      if (typeof id !== 'string' || id === '') throw new FlintError('invalid_payload', 'trigger_id is required (a cron trigger id, see engine::cron::list)');
      return jobs.runNow(id);
    },
  );
  ctx.registerFunction(
    {
      id: 'engine::cron::list',
      description: 'Every cron trigger: expression, time zone, next three fire times and last run',
      request_format: { type: 'object', properties: {} },
    },
    async () => ({ triggers: await jobs.list() }),
  );
}
