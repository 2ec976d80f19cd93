import { z } from 'zod';

/** The config of a `cron` trigger; unknown keys are refused (a misspelt `timezone` would silently run in UTC). */
export const cronTriggerConfigSchema = z.strictObject({
  expression: z.string({ error: 'Cron expression is required' }).trim().min(1, { error: 'Cron expression is required' }),
  /** IANA time zone the expression is read in. */
  timezone: z.string().min(1).default('UTC'),
  condition_function_id: z.string().min(1).optional(),
  /** `skip`: a slot that comes while the previous run of the job is still going is skipped (and logged). */
  overlap: z.enum(['skip', 'allow']).default('skip'),
  /** After downtime: `none`, `latest` (the most recent missed slot, once) or `all` (every missed slot, up to `catch_up_max`). */
  catch_up: z.enum(['none', 'latest', 'all']).default('none'),
  catch_up_max: z.number().int().positive().default(10),
  /** Each firing waits a random 0…jitter_ms after its slot. */
  jitter_ms: z.number().int().min(0).default(0),
});

export type CronTriggerConfig = z.output<typeof cronTriggerConfigSchema>;
