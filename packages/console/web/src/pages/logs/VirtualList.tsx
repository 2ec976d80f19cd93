import { useVirtualizer } from '@tanstack/react-virtual';
import { ArrowUp } from 'lucide-react';
import { type ReactNode, useLayoutEffect, useRef, useState } from 'react';

/**
 * A virtualised list of rows of varying height (only the rows in view are in the DOM; an expanded row
 * is measured), newest first. When rows are added at the top while the reader is scrolled down, the
 * view stays where it was and a button offers the new rows.
 */
export function VirtualList<T>({
  items,
  itemKey,
  rowHeight,
  renderItem,
  label,
  testId,
  className = '',
  newLabel = (n: number) => `${n} new`,
}: {
  items: T[];
  itemKey: (item: T) => string | number;
  /** The height of a collapsed row (px): new rows are assumed to be collapsed. */
  rowHeight: number;
  renderItem: (item: T, index: number) => ReactNode;
  label: string;
  testId?: string;
  className?: string;
  newLabel?: (n: number) => string;
}) {
  const scrollRef = useRef<HTMLDivElement>(null);
  const virtualizer = useVirtualizer({
    count: items.length,
    getScrollElement: () => scrollRef.current,
    estimateSize: () => rowHeight,
    overscan: 10,
    getItemKey: (i) => {
      const item = items[i];
      return item === undefined ? i : itemKey(item);
    },
  });
  const [unseen, setUnseen] = useState(0);

  // Rows added above the first one: keep the rows in view where they are, unless the reader is at the top.
  const firstKey = useRef<string | number | undefined>(undefined);
  useLayoutEffect(() => {
    const first = items[0] === undefined ? undefined : itemKey(items[0]);
    const before = firstKey.current;
    firstKey.current = first;
    if (before === undefined || first === undefined || before === first) return;
    const el = scrollRef.current;
    if (!el || el.scrollTop < 2) return;
    let index = -1;
    for (let i = 0; i < items.length && i < 20_000; i++) {
      const item = items[i];
      if (item !== undefined && itemKey(item) === before) {
        index = i;
        break;
      }
    }
    if (index <= 0) return;
    el.scrollTop += index * rowHeight;
    setUnseen((n) => n + index);
  }, [items, itemKey, rowHeight]);

  const toTop = () => {
    scrollRef.current?.scrollTo({ top: 0 });
    setUnseen(0);
  };

  return (
    <div className={`vl ${className}`}>
      {unseen > 0 && (
        <button type="button" className="btn small vl-new" onClick={toTop} data-testid="new-rows-button">
          <ArrowUp size={13} aria-hidden="true" />
          {newLabel(unseen)}
        </button>
      )}
      <div
        ref={scrollRef}
        className="vl-scroll"
        data-testid={testId}
        onScroll={(e) => {
          if (unseen > 0 && e.currentTarget.scrollTop < 2) setUnseen(0);
        }}
      >
        <ul className="vl-sizer" aria-label={label} style={{ height: virtualizer.getTotalSize() }}>
          {virtualizer.getVirtualItems().map((v) => {
            const item = items[v.index];
            if (item === undefined) return null;
            return (
              <li
                key={v.key}
                aria-setsize={items.length}
                aria-posinset={v.index + 1}
                data-index={v.index}
                ref={virtualizer.measureElement}
                className="vl-row"
                style={{ transform: `translateY(${v.start}px)` }}
              >
                {renderItem(item, v.index)}
              </li>
            );
          })}
        </ul>
      </div>
    </div>
  );
}
