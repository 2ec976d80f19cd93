/** The subset of JSON Schema the invoke form understands; anything else is edited as JSON. */
export type JsonSchema = Record<string, unknown>;

export const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** The first non-null `type` of a schema (`["string", "null"]` is a string). */
export function schemaType(schema: JsonSchema): string | undefined {
  const t = schema.type;
  if (typeof t === 'string') return t;
  if (Array.isArray(t)) return t.find((x): x is string => typeof x === 'string' && x !== 'null');
  if (isRecord(schema.properties)) return 'object';
  return undefined;
}

/** A schema the form can render: an object with at least one property. */
export function isObjectSchema(schema: unknown): schema is JsonSchema & { properties: Record<string, unknown> } {
  return isRecord(schema) && schemaType(schema) === 'object' && isRecord(schema.properties) && Object.keys(schema.properties).length > 0;
}

export type FieldKind = 'object' | 'string' | 'enum' | 'number' | 'integer' | 'boolean' | 'json';

/** How a property is edited: a nested fieldset, a text/number input, a select, a checkbox, or JSON. */
export function fieldKind(schema: unknown): FieldKind {
  if (!isRecord(schema)) return 'json';
  if (Array.isArray(schema.enum) && schema.enum.length > 0) return 'enum';
  const t = schemaType(schema);
  if (t === 'object') return isObjectSchema(schema) ? 'object' : 'json';
  if (t === 'string' || t === 'number' || t === 'integer' || t === 'boolean') return t;
  return 'json';
}

/** Whether `value` can be shown by a field of `kind` (else the field falls back to JSON). */
export function fits(kind: FieldKind, value: unknown): boolean {
  if (value === undefined) return true;
  switch (kind) {
    case 'object':
      return isRecord(value);
    case 'string':
      return typeof value === 'string';
    case 'number':
    case 'integer':
      return typeof value === 'number';
    case 'boolean':
      return typeof value === 'boolean';
    default:
      return true;
  }
}

/**
 * A starting value for a schema: its `default`, the first `enum` value, else string → "", number → 0,
 * boolean → false, array → [], object → its properties' templates; anything else → undefined (left out).
 */
export function template(schema: unknown, depth = 0): unknown {
  if (!isRecord(schema)) return undefined;
  if (schema.default !== undefined) return schema.default;
  if (Array.isArray(schema.enum) && schema.enum.length > 0) return schema.enum[0];
  if (schema.const !== undefined) return schema.const;
  switch (schemaType(schema)) {
    case 'string':
      return '';
    case 'number':
    case 'integer': {
      // 0, moved into [minimum, maximum] when the schema bounds it.
      let n = 0;
      if (typeof schema.minimum === 'number' && n < schema.minimum) n = schema.minimum;
      if (typeof schema.exclusiveMinimum === 'number' && n <= schema.exclusiveMinimum) n = schema.exclusiveMinimum + 1;
      if (typeof schema.maximum === 'number' && n > schema.maximum) n = schema.maximum;
      return n;
    }
    case 'boolean':
      return false;
    case 'array':
      return [];
    case 'object': {
      const out: Record<string, unknown> = {};
      if (isRecord(schema.properties) && depth < 12) {
        for (const [k, s] of Object.entries(schema.properties)) {
          const v = template(s, depth + 1);
          if (v !== undefined) out[k] = v;
        }
      }
      return out;
    }
    default:
      return undefined;
  }
}

/** The invoke input to start from: the request_format's template, `{}` when there is none. */
export function inputTemplate(requestFormat: unknown): unknown {
  if (!isRecord(requestFormat)) return {};
  const t = template(requestFormat);
  return t === undefined ? {} : t;
}

/** A schema's `required` list. */
export const requiredOf = (schema: JsonSchema): string[] =>
  Array.isArray(schema.required) ? schema.required.filter((r): r is string => typeof r === 'string') : [];
