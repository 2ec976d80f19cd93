import { arrayOf, attributesOf, isObject, nanosOf, text } from './otlp-json.js';

/** One data point an SDK sent in an `MTRC` frame, flattened. */
export interface StoredMetric {
  name: string;
  description?: string;
  unit?: string;
  /** `sum`, `gauge`, `histogram`, `exponential_histogram` or `summary`. */
  type: string;
  service_name: string;
  attributes: Record<string, unknown>;
  time_unix_nano: number;
  /** A sum or gauge point's value. */
  value?: number;
  /** A histogram point's count and sum. */
  count?: number;
  sum?: number;
}

const TYPES = ['sum', 'gauge', 'histogram', 'exponentialHistogram', 'summary'] as const;

/** The data points of an OTLP/JSON `ExportMetricsServiceRequest`. */
export function readSdkMetrics(request: unknown): StoredMetric[] {
  const out: StoredMetric[] = [];
  for (const rm of arrayOf(isObject(request) ? request.resourceMetrics : undefined)) {
    if (!isObject(rm)) continue;
    const resource = attributesOf(isObject(rm.resource) ? rm.resource.attributes : undefined);
    const service = typeof resource['service.name'] === 'string' ? resource['service.name'] : 'unknown';
    for (const sm of arrayOf(rm.scopeMetrics)) {
      if (!isObject(sm)) continue;
      for (const m of arrayOf(sm.metrics)) {
        if (!isObject(m) || typeof m.name !== 'string') continue;
        const type = TYPES.find((t) => isObject(m[t]));
        if (!type) continue;
        for (const p of arrayOf((m[type] as Record<string, unknown>).dataPoints)) {
          if (!isObject(p)) continue;
          const point: StoredMetric = {
            name: m.name,
            type: type === 'exponentialHistogram' ? 'exponential_histogram' : type,
            service_name: service,
            attributes: attributesOf(p.attributes),
            time_unix_nano: nanosOf(p.timeUnixNano),
          };
          const description = text(m.description);
          if (description) point.description = description;
          const unit = text(m.unit);
          if (unit) point.unit = unit;
          if ('asDouble' in p || 'asInt' in p) point.value = Number(p.asDouble ?? p.asInt);
          if ('count' in p) point.count = Number(p.count);
          if ('sum' in p) point.sum = Number(p.sum);
          out.push(point);
        }
      }
    }
  }
  return out;
}

/** The most recent SDK metric points, oldest dropped first. */
export class SdkMetricStore {
  private points: StoredMetric[] = [];
  dropped = 0;

  constructor(private readonly max: number) {}

  get size(): number {
    return this.points.length;
  }

  add(points: StoredMetric[]): void {
    this.points.push(...points);
    const over = this.points.length - this.max;
    if (over > 0) {
      this.points.splice(0, over);
      this.dropped += over;
    }
  }

  /** Points within `[startMs, endMs]` (either end optional) and of `name` when given, oldest first. */
  query(name: string | undefined, startMs: number | undefined, endMs: number | undefined): StoredMetric[] {
    return this.points.filter(
      (p) =>
        (name === undefined || p.name === name) &&
        (startMs === undefined || p.time_unix_nano >= startMs * 1e6) &&
        (endMs === undefined || p.time_unix_nano <= endMs * 1e6),
    );
  }

  clear(): void {
    this.points = [];
  }
}
