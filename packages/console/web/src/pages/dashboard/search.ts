/** The Dashboard page's URL search params (every filter and selection is a deep link). */
export type DashboardSearch = Record<string, string | undefined>;

const str = (v: unknown): string | undefined => (typeof v === 'string' && v !== '' ? v : typeof v === 'number' ? String(v) : undefined);

/** Keeps the string params the page knows. */
export function validateDashboardSearch(s: Record<string, unknown>): DashboardSearch {
  const out: DashboardSearch = {};
  for (const [k, v] of Object.entries(s)) {
    const text = str(v);
    if (text !== undefined) out[k] = text;
  }
  return out;
}
