/**
 * A stream group as one kv scope: `<stream>:<group>` with `%` and `:` escaped in both names, so that
 * names holding `:` come back whole (`a:b` / `c` and `a` / `b:c` are different scopes).
 */
export function groupScope(stream: string, group: string): string {
  return `${escapeName(stream)}:${escapeName(group)}`;
}

/** The stream and group of a scope made by groupScope; undefined for any other scope. */
export function parseGroupScope(scope: string): { stream: string; group: string } | undefined {
  const colon = scope.indexOf(':');
  if (colon < 0 || scope.indexOf(':', colon + 1) >= 0) return undefined;
  return { stream: unescapeName(scope.slice(0, colon)), group: unescapeName(scope.slice(colon + 1)) };
}

/** Groups scopes (sorted) by stream, streams sorted by name. */
export function streamsOfScopes(scopes: readonly string[]): { stream: string; groups: string[] }[] {
  const byStream = new Map<string, string[]>();
  for (const scope of scopes) {
    const parsed = parseGroupScope(scope);
    if (!parsed) continue;
    const groups = byStream.get(parsed.stream);
    if (groups) groups.push(parsed.group);
    else byStream.set(parsed.stream, [parsed.group]);
  }
  return [...byStream.keys()].sort().map((stream) => ({ stream, groups: (byStream.get(stream) ?? []).sort() }));
}

function escapeName(name: string): string {
  return name.replace(/%/g, '%25').replace(/:/g, '%3A');
}

function unescapeName(text: string): string {
  return text.replace(/%3A/g, ':').replace(/%25/g, '%');
}
