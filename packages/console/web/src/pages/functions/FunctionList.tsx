import { Link } from '@tanstack/react-router';
import { useVirtualizer } from '@tanstack/react-virtual';
import { type KeyboardEvent, useEffect, useRef } from 'react';
import type { FunctionInfo } from '../../../../src/api-types.js';
import { shortId } from '../../lib/format.js';

/** Every row has this height (px): two lines, the id and the description. */
const ROW_HEIGHT = 54;

/** "orders-worker", "module flint-http", "a1b2c3d4 +1". */
export function providerLabel(fn: FunctionInfo): string {
  const providers = fn.providers ?? [];
  const first = providers[0];
  if (!first) return '';
  const name = 'module' in first ? first.module : (first.worker_name ?? shortId(first.worker_id));
  return providers.length > 1 ? `${name} +${providers.length - 1}` : name;
}

/**
 * The function list, virtualised (only the rows in view are in the DOM, so 10,000 functions stay
 * fast). Arrow keys, Home and End move between rows; Enter opens one.
 */
export function FunctionList({
  functions,
  selected,
  linkSearch,
}: {
  functions: FunctionInfo[];
  selected: string | undefined;
  linkSearch: (id: string) => { fn: string; q?: string; internal?: boolean };
}) {
  const scrollRef = useRef<HTMLDivElement>(null);
  const virtualizer = useVirtualizer({
    count: functions.length,
    getScrollElement: () => scrollRef.current,
    estimateSize: () => ROW_HEIGHT,
    overscan: 12,
    getItemKey: (i) => functions[i]?.function_id ?? i,
  });

  // A deep link to a function scrolls it into view once the list is there.
  const scrolledFor = useRef<string | undefined>(undefined);
  useEffect(() => {
    if (!selected || scrolledFor.current === selected) return;
    const index = functions.findIndex((f) => f.function_id === selected);
    if (index < 0) return;
    scrolledFor.current = selected;
    virtualizer.scrollToIndex(index, { align: 'auto' });
  }, [selected, functions, virtualizer]);

  const focusRow = (index: number) => {
    const i = Math.max(0, Math.min(functions.length - 1, index));
    virtualizer.scrollToIndex(i, { align: 'auto' });
    const focus = (tries: number) => {
      const el = scrollRef.current?.querySelector<HTMLElement>(`[data-index="${i}"]`);
      if (el) el.focus();
      else if (tries > 0) requestAnimationFrame(() => focus(tries - 1));
    };
    requestAnimationFrame(() => focus(5));
  };

  const onKeyDown = (e: KeyboardEvent<HTMLAnchorElement>) => {
    const current = Number(e.currentTarget.dataset.index ?? -1);
    const page = Math.max(1, Math.floor((scrollRef.current?.clientHeight ?? ROW_HEIGHT * 10) / ROW_HEIGHT) - 1);
    let next: number | undefined;
    if (e.key === 'ArrowDown') next = current + 1;
    else if (e.key === 'ArrowUp') next = current < 0 ? 0 : current - 1;
    else if (e.key === 'PageDown') next = current + page;
    else if (e.key === 'PageUp') next = current - page;
    else if (e.key === 'Home') next = 0;
    else if (e.key === 'End') next = functions.length - 1;
    if (next === undefined || functions.length === 0) return;
    e.preventDefault();
    focusRow(next);
  };

  return (
    <div ref={scrollRef} className="page-list fn-scroll" data-testid="function-list">
      <div className="fn-sizer" style={{ height: virtualizer.getTotalSize() }}>
        {virtualizer.getVirtualItems().map((item) => {
          const fn = functions[item.index];
          if (!fn) return null;
          const isSelected = fn.function_id === selected;
          const provider = providerLabel(fn);
          return (
            <Link
              key={item.key}
              to="/functions"
              search={linkSearch(fn.function_id)}
              preload={false}
              className={`row fn-row${isSelected ? ' selected' : ''}`}
              data-testid="function-row"
              data-index={item.index}
              data-function-id={fn.function_id}
              aria-current={isSelected ? 'true' : undefined}
              onKeyDown={onKeyDown}
              style={{ transform: `translateY(${item.start}px)`, height: ROW_HEIGHT }}
            >
              <span className="fn-row-line">
                <span className="code-id fn-row-id">{fn.function_id}</span>
                {provider && (
                  <span className="fn-row-provider small muted" title={`Provided by ${provider}`}>
                    {provider}
                  </span>
                )}
              </span>
              <span className="fn-row-desc small muted">{fn.description ?? '\u00a0'}</span>
            </Link>
          );
        })}
      </div>
    </div>
  );
}
