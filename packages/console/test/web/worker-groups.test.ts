/** The Workers page's grouping by engine in a cluster (pure functions, no DOM). */
import { describe, expect, it } from 'vitest';
import type { ClusterMember, WorkerInfo } from '../../src/api-types.js';
import { groupByEngine, heardAgo } from '../../web/src/pages/workers/groups.js';

const worker = (id: string, engine?: string): WorkerInfo => ({
  id,
  name: id,
  runtime: 'node',
  version: null,
  os: null,
  ip_address: null,
  internal: false,
  status: 'available',
  connected_at_ms: 0,
  function_count: 0,
  functions: [],
  active_invocations: 0,
  latest_metrics: null,
  ...(engine === undefined ? {} : { engine }),
});
const member = (node: string, last_seen_ms = 0): ClusterMember => ({
  node,
  bridge: `ws://${node}:49134`,
  version: '0.1.0',
  started_at: 0,
  last_seen_ms,
  link_ms: null,
  functions: 0,
  workers: 0,
});
const cluster = (node_id: string, ...nodes: string[]) => ({ available: true, node_id, members: [member(node_id), ...nodes.map((n) => member(n, 120))] });
const summary = (groups: ReturnType<typeof groupByEngine>) => groups.map((g) => [g.node, g.self, g.workers.map((w) => w.id), g.total]);

describe('groupByEngine', () => {
  const all = [worker('w1', 'c'), worker('w2', 'b'), worker('w3', 'b'), worker('w4', 'a')];

  it("puts the console's engine first, then the others by node id, each with its workers in the order given", () => {
    expect(summary(groupByEngine(all, all, cluster('b', 'c', 'a'), false))).toEqual([
      ['b', true, ['w2', 'w3'], 2],
      ['a', false, ['w4'], 1],
      ['c', false, ['w1'], 1],
    ]);
  });

  it('keeps each engine of the member list, with its member entry, even without workers', () => {
    const groups = groupByEngine([worker('w1', 'a')], [worker('w1', 'a')], cluster('a', 'z'), false);
    expect(summary(groups)).toEqual([
      ['a', true, ['w1'], 1],
      ['z', false, [], 0],
    ]);
    expect(groups[1]?.member).toMatchObject({ node: 'z', bridge: 'ws://z:49134', last_seen_ms: 120 });
  });

  it('with a filter, keeps only the engines with a match, counting all their workers', () => {
    const shown = all.filter((w) => w.id === 'w3');
    expect(summary(groupByEngine(all, shown, cluster('a', 'b', 'c'), true))).toEqual([['b', false, ['w3'], 2]]);
  });

  it('without a member list, groups by the engines the workers name, in node id order, none marked as this engine', () => {
    const groups = groupByEngine(all, all, undefined, false);
    expect(summary(groups)).toEqual([
      ['a', false, ['w4'], 1],
      ['b', false, ['w2', 'w3'], 2],
      ['c', false, ['w1'], 1],
    ]);
    expect(groups.every((g) => g.member === undefined)).toBe(true);
    expect(summary(groupByEngine(all, all, { available: false, node_id: null, members: [] }, false))).toEqual(summary(groups));
  });

  it("counts a worker without engine with the console's engine, and an engine missing from the member list has no entry", () => {
    const mixed = [worker('w1'), worker('w2', 'gone')];
    const groups = groupByEngine(mixed, mixed, cluster('a'), false);
    expect(summary(groups)).toEqual([
      ['a', true, ['w1'], 1],
      ['gone', false, ['w2'], 1],
    ]);
    expect(groups[1]?.member).toBeUndefined();
  });
});

describe('heardAgo', () => {
  it('says under 1 s, then seconds, minutes and hours', () => {
    expect([0, 999, 1000, 59_999, 60_000, 3_599_999, 3_600_000].map(heardAgo)).toEqual(['under 1 s', 'under 1 s', '1 s', '59 s', '1 min', '59 min', '1 h']);
  });
});
