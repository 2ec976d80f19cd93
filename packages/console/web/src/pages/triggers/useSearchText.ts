import { useCallback, useEffect, useRef, useState } from 'react';

/**
 * A filter box's text, kept in a URL search param: the input answers at once, the URL follows after
 * `delay` ms (one history entry per pause, not per key); a URL change from elsewhere (back, a link)
 * replaces the text.
 */
export function useSearchText(urlValue: string | undefined, push: (value: string | undefined) => void, delay = 200): [string, (value: string) => void] {
  const [text, setText] = useState(urlValue ?? '');
  const pushed = useRef(urlValue ?? '');
  const pushRef = useRef(push);
  pushRef.current = push;
  const timer = useRef<ReturnType<typeof setTimeout> | undefined>(undefined);

  useEffect(() => {
    const v = urlValue ?? '';
    if (v !== pushed.current) {
      pushed.current = v;
      clearTimeout(timer.current);
      setText(v);
    }
  }, [urlValue]);

  useEffect(() => () => clearTimeout(timer.current), []);

  const change = useCallback(
    (value: string) => {
      setText(value);
      clearTimeout(timer.current);
      timer.current = setTimeout(() => {
        pushed.current = value;
        pushRef.current(value === '' ? undefined : value);
      }, delay);
    },
    [delay],
  );
  return [text, change];
}
