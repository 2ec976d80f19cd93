/** The Traces page's filters ↔ URL params and the list request they make (pure functions). */
import { describe, expect, it } from 'vitest';
import {
  activeFilters,
  fromLocalInput,
  listRequest,
  parseAttribute,
  timeWindow,
  toLocalInput,
  validateTracesSearch,
  withoutFilters,
} from '../../web/src/pages/traces/model/filters.js';
import { validateTracesSearch as fromSearchModule } from '../../web/src/pages/traces/search.js';

const NOW = 1_800_000_000_000;

describe('validateTracesSearch', () => {
  it('keeps every known param with its type and drops the rest', () => {
    const s = validateTracesSearch({
      id: ' 4BF92F ',
      service: 'shop',
      name: 'GET /chain',
      status: 'Error',
      min: '5',
      max: 250,
      range: '1h',
      attr: ['http.route=/chain', 'bad', '=x'],
      root: 'true',
      internal: true,
      sort: 'slowest',
      trace: 'ABC',
      view: 'flame',
      span: 'DEF',
      tab: 'logs',
      other: 'x',
    });
    expect(s).toEqual({
      id: '4bf92f',
      service: 'shop',
      name: 'GET /chain',
      status: 'error',
      min: 5,
      max: 250,
      range: '1h',
      attr: ['http.route=/chain', 'bad'],
      root: true,
      internal: true,
      sort: 'slowest',
      trace: 'abc',
      view: 'flame',
      span: 'def',
      tab: 'logs',
    });
    expect(fromSearchModule).toBe(validateTracesSearch);
  });

  it('drops bad values and defaults, and reads one attribute given as text', () => {
    expect(
      validateTracesSearch({ status: 'pending', min: -1, max: 'x', range: '2h', view: 'waterfall', tab: 'info', sort: 'newest', root: false, attr: 'k=v' }),
    ).toEqual({
      attr: ['k=v'],
    });
    // from/to only go with a custom range; dates may be given as text.
    expect(validateTracesSearch({ range: '15m', from: 1, to: 2 })).toEqual({ range: '15m' });
    expect(validateTracesSearch({ range: 'custom', from: 1000, to: '2026-01-02T03:04:05Z' })).toEqual({
      range: 'custom',
      from: 1000,
      to: Date.parse('2026-01-02T03:04:05Z'),
    });
  });
});

describe('listRequest', () => {
  it('turns the params into the engine filters, combined with AND, newest first', () => {
    const req = listRequest(
      validateTracesSearch({ id: 'abc', service: 'shop', name: 'chain', status: 'unset', min: 5, max: 50, range: '15m', attr: ['a=1', 'b=x=y'] }),
      NOW,
    );
    expect(req).toEqual({
      limit: 100,
      offset: 0,
      trace_id: 'abc',
      service_name: 'shop',
      name: 'chain',
      status: 'unset',
      min_duration_ms: 5,
      max_duration_ms: 50,
      start_time: NOW - 15 * 60_000,
      attributes: [
        ['a', '1'],
        ['b', 'x=y'],
      ],
      search_all_spans: true,
      sort_by: 'start_time',
      sort_order: 'desc',
    });
  });

  it('matches the root span only on request, and sorts as asked', () => {
    const root = listRequest({ name: 'GET', root: true, internal: true, sort: 'slowest' }, NOW, 500);
    expect(root).toEqual({ limit: 500, offset: 0, name: 'GET', include_internal: true, sort_by: 'duration', sort_order: 'desc' });
    expect(listRequest({ sort: 'oldest' }, NOW)).toMatchObject({ sort_by: 'start_time', sort_order: 'asc' });
    expect(listRequest({}, NOW).search_all_spans).toBeUndefined();
    // A reversed duration range is put right.
    expect(listRequest({ min: 50, max: 5 }, NOW)).toMatchObject({ min_duration_ms: 5, max_duration_ms: 50 });
  });

  it('makes the time window of each range', () => {
    expect(timeWindow({}, NOW)).toEqual({});
    expect(timeWindow({ range: '24h' }, NOW)).toEqual({ start_time: NOW - 86_400_000 });
    expect(timeWindow({ range: 'custom', from: 10, to: 20 }, NOW)).toEqual({ start_time: 10, end_time: 20 });
    expect(timeWindow({ range: 'custom', from: 20, to: 10 }, NOW)).toEqual({ start_time: 10, end_time: 20 });
    expect(timeWindow({ range: 'custom', to: 20 }, NOW)).toEqual({ end_time: 20 });
  });
});

describe('filter helpers', () => {
  it('parses key=value at the first =', () => {
    expect(parseAttribute('http.response.status_code=500')).toEqual(['http.response.status_code', '500']);
    expect(parseAttribute(' k = v=w ')).toEqual(['k', 'v=w']);
    expect(parseAttribute('flag')).toEqual(['flag', '']);
    expect(parseAttribute(' =x')).toBeUndefined();
  });

  it('counts and clears the filters, keeping the selection', () => {
    const s = validateTracesSearch({ service: 's', attr: ['a=1', 'b=2'], range: 'custom', from: 1, trace: 'abc', view: 'map', sort: 'oldest' });
    expect(activeFilters(s)).toBe(4);
    expect(withoutFilters(s)).toEqual({ trace: 'abc', view: 'map', sort: 'oldest' });
  });

  it('round-trips datetime-local text in local time', () => {
    const ms = new Date(2026, 4, 1, 10, 30).getTime();
    expect(toLocalInput(ms)).toBe('2026-05-01T10:30');
    expect(fromLocalInput('2026-05-01T10:30')).toBe(ms);
    expect(fromLocalInput('')).toBeUndefined();
    expect(toLocalInput(undefined)).toBe('');
  });
});
