/**
 * Readers for OTLP/JSON (what SDKs send in `OTLP` and `LOGS` telemetry frames): attribute values,
 * 64-bit times, ids. Every reader takes `unknown` and gives back a safe default for what is malformed.
 */

export type Json = Record<string, unknown>;

export function isObject(value: unknown): value is Json {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

export function arrayOf(value: unknown): unknown[] {
  return Array.isArray(value) ? value : [];
}

export function text(value: unknown): string | undefined {
  return typeof value === 'string' ? value : undefined;
}

/** A 64-bit time in nanoseconds (a number, a decimal string, or protobufjs' `{low, high}`), as a JS number; 0 when absent. */
export function nanosOf(value: unknown): number {
  if (typeof value === 'number') return Number.isFinite(value) && value >= 0 ? value : 0;
  if (typeof value === 'string') {
    const n = Number(value);
    return Number.isFinite(n) && n >= 0 ? n : 0;
  }
  if (isObject(value) && typeof value.low === 'number' && typeof value.high === 'number') return (value.high >>> 0) * 2 ** 32 + (value.low >>> 0);
  return 0;
}

/** The value of an OTLP `AnyValue`. */
export function anyValue(value: unknown, depth = 0): unknown {
  if (!isObject(value) || depth > 8) return undefined;
  if ('stringValue' in value) return text(value.stringValue);
  if ('boolValue' in value) return value.boolValue === true;
  if ('intValue' in value) return Number(value.intValue);
  if ('doubleValue' in value) return Number(value.doubleValue);
  if ('bytesValue' in value) return text(value.bytesValue);
  if ('arrayValue' in value) return arrayOf(isObject(value.arrayValue) ? value.arrayValue.values : undefined).map((v) => anyValue(v, depth + 1));
  if ('kvlistValue' in value) return attributesOf(isObject(value.kvlistValue) ? value.kvlistValue.values : undefined, depth + 1);
  return undefined;
}

/** OTLP `KeyValue[]` as an object; entries without a string key are skipped. */
export function attributesOf(list: unknown, depth = 0): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const kv of arrayOf(list)) {
    if (!isObject(kv) || typeof kv.key !== 'string') continue;
    const v = anyValue(kv.value, depth);
    if (v !== undefined) out[kv.key] = v;
  }
  return out;
}

const HEX_ID = /^[0-9a-f]+$/;

/**
 * A trace or span id of `hexLength` hex digits: OTLP/JSON writes ids in hex; protobuf-style JSON writers
 * sometimes write base64. Undefined when absent, malformed or all zeros.
 */
export function idOf(value: unknown, hexLength: 32 | 16): string | undefined {
  if (typeof value !== 'string' || value === '') return undefined;
  let hex = value.toLowerCase();
  if (hex.length !== hexLength || !HEX_ID.test(hex)) {
    const bytes = Buffer.from(value, 'base64');
    if (bytes.length !== hexLength / 2) return undefined;
    hex = bytes.toString('hex');
  }
  return /^0+$/.test(hex) ? undefined : hex;
}

/** Nanoseconds since the epoch as OpenTelemetry's HrTime ([seconds, nanoseconds]), for the SDK's exporters. */
export function hrTime(nanos: number): [number, number] {
  const seconds = Math.floor(nanos / 1e9);
  return [seconds, Math.min(999_999_999, Math.max(0, Math.round(nanos - seconds * 1e9)))];
}
