import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { errorMessage } from '../lib/errors.js';
import type { FunctionDefinition } from './api/functions.js';
import type { Logger } from './logger.js';

/** A compiled `request_format`: undefined when the payload fits, else where and why it does not. */
export type PayloadCheck = (data: unknown) => string | undefined;

/** Compiled schemas kept for re-registrations (workers replay theirs on every reconnect). */
const MAX_CACHED_SCHEMAS = 1000;

/**
 * Opt-in validation of call payloads against the function's `request_format` (JSON Schema, draft-07
 * by default, 2020-12 when its `$schema` says so; formats such as `email` and `date-time` known).
 * A function is validated when `validate_payloads` is on for the engine or its registration has
 * `metadata.validate: true`. Each distinct schema text is compiled once and shared.
 */
export class PayloadValidation {
  private readonly cache = new Map<string, { schema: object; check: PayloadCheck }>();
  private draft07: Ajv | undefined;
  private draft2020: Ajv2020 | undefined;

  constructor(
    private readonly validateAll: boolean,
    private readonly logger: Logger,
  ) {}

  /** The check for a worker's function, or undefined when its payloads are not validated. */
  compile(def: FunctionDefinition): PayloadCheck | undefined {
    if (!this.validateAll && def.metadata?.validate !== true) return undefined;
    const schema = def.request_format;
    if (typeof schema !== 'object' || schema === null) return undefined;
    const text = JSON.stringify(schema);
    const cached = this.cache.get(text);
    if (cached) return cached.check;
    let validate: ValidateFunction;
    try {
      validate = this.ajvFor(schema).compile(schema);
    } catch (err) {
      this.logger.warn(
        { function_id: def.id },
        `request_format of ${def.id} is not a valid JSON Schema, so its payloads are not validated: ${errorMessage(err)}`,
      );
      return undefined;
    }
    const check: PayloadCheck = (data) => (validate(data) ? undefined : describe(validate.errors));
    this.remember(text, schema, check);
    return check;
  }

  private ajvFor(schema: object): Ajv | Ajv2020 {
    const dialect = (schema as { $schema?: unknown }).$schema;
    if (typeof dialect === 'string' && dialect.includes('2020-12')) {
      if (this.draft2020 === undefined) this.draft2020 = withFormats(new Ajv2020(AJV_OPTIONS));
      return this.draft2020;
    }
    if (this.draft07 === undefined) this.draft07 = withFormats(new Ajv(AJV_OPTIONS));
    return this.draft07;
  }

  private remember(text: string, schema: object, check: PayloadCheck): void {
    this.cache.set(text, { schema, check });
    if (this.cache.size <= MAX_CACHED_SCHEMAS) return;
    const [oldestText, oldest] = this.cache.entries().next().value as [string, { schema: object }];
    this.cache.delete(oldestText);
    // Ajv keeps every schema object it compiled; let the evicted one go.
    this.ajvFor(oldest.schema).removeSchema(oldest.schema);
  }
}

// `addUsedSchema: false`: a schema's `$id` is not registered, so two functions (or two versions of one)
// may use the same `$id`. `strict: false`: unknown keywords in discovery metadata are tolerated.
const AJV_OPTIONS = { strict: false, logger: false, addUsedSchema: false, allErrors: false } as const;

function withFormats<T extends Ajv | Ajv2020>(ajv: T): T {
  (addFormats as unknown as (ajv: T) => void)(ajv);
  return ajv;
}

/** "at /qty: must be integer" (the first problem; the JSON pointer of the value that does not fit). */
function describe(errors: ErrorObject[] | null | undefined): string {
  const first = errors?.[0];
  if (!first) return 'at the top level: does not match';
  const where = first.instancePath === '' ? 'the top level' : first.instancePath;
  const extra = first.keyword === 'additionalProperties' ? ` (${JSON.stringify((first.params as { additionalProperty: string }).additionalProperty)})` : '';
  return `at ${where}: ${first.message ?? first.keyword}${extra}`;
}
