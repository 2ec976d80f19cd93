/**
 * SequenceTable: values by sequence number in a ring of slots, with the values that outlive their slot
 * in an overflow map — lookups, deletes and snapshots see both alike.
 */
import { SequenceTable } from '@flint/protocol';
import { describe, expect, it } from 'vitest';

describe('SequenceTable', () => {
  it('keeps a value until it is deleted, also after its slot is taken by a later one', () => {
    const table = new SequenceTable<string>(4);
    for (let seq = 0; seq < 10; seq++) table.set(seq, `v${seq}`);
    expect(table.size).toBe(10);
    // 0–5 had their slots taken (4 slots) and moved to the overflow map; 6–9 are in the ring.
    for (let seq = 0; seq < 10; seq++) expect(table.get(seq)).toBe(`v${seq}`);
    expect(table.get(10)).toBeUndefined();
    expect(table.delete(1)).toBe(true);
    expect(table.delete(8)).toBe(true);
    expect(table.delete(8)).toBe(false);
    expect(table.delete(42)).toBe(false);
    expect(table.size).toBe(8);
    expect(table.get(1)).toBeUndefined();
    expect(table.get(8)).toBeUndefined();
    expect(table.snapshot().sort()).toEqual(['v0', 'v2', 'v3', 'v4', 'v5', 'v6', 'v7', 'v9']);
  });

  it('does not take a value of another number in the same slot for its own', () => {
    const table = new SequenceTable<string>(8);
    table.set(3, 'three');
    expect(table.get(11)).toBeUndefined(); // 11 & 7 === 3
    expect(table.delete(11)).toBe(false);
    expect(table.get(3)).toBe('three');
  });

  it('works with numbers past 2^32', () => {
    const table = new SequenceTable<string>(16);
    const big = 2 ** 40 + 5;
    table.set(big, 'big');
    table.set(5, 'five'); // the same slot: big moves to the overflow map
    expect(table.get(big)).toBe('big');
    expect(table.get(5)).toBe('five');
  });

  it('refuses a slot count that is not a power of two', () => {
    for (const slots of [0, 3, 1000, -8, 1.5]) expect(() => new SequenceTable(slots)).toThrow(/slots must be a power of two/);
    expect(new SequenceTable(1).size).toBe(0);
  });
});
