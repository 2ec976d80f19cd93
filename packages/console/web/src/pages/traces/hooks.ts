import { useEffect, useRef, useState } from 'react';

/**
 * A text input kept in the URL after a pause in typing: the input updates at once, the URL (and so the
 * query) `delayMs` after the last keystroke; a URL that changes on its own (back, a link, Clear) updates
 * the text.
 */
export function useDebouncedUrlText(
  urlValue: string | undefined,
  write: (value: string | undefined) => void,
  delayMs = 300,
): [string, (value: string) => void] {
  const [text, setText] = useState(urlValue ?? '');
  const written = useRef(urlValue ?? '');
  const timer = useRef<ReturnType<typeof setTimeout> | undefined>(undefined);
  const writeRef = useRef(write);
  writeRef.current = write;
  useEffect(() => {
    const u = urlValue ?? '';
    if (u !== written.current) {
      written.current = u;
      clearTimeout(timer.current);
      setText(u);
    }
  }, [urlValue]);
  useEffect(() => () => clearTimeout(timer.current), []);
  const update = (value: string) => {
    setText(value);
    clearTimeout(timer.current);
    timer.current = setTimeout(() => {
      written.current = value.trim();
      writeRef.current(value.trim() === '' ? undefined : value.trim());
    }, delayMs);
  };
  return [text, update];
}

/** The size of an element (pass the callback as its `ref`), updated as it resizes. */
export function useElementSize<T extends HTMLElement>(): [(el: T | null) => void, { width: number; height: number }, T | null] {
  const [el, setEl] = useState<T | null>(null);
  const [size, setSize] = useState({ width: 0, height: 0 });
  useEffect(() => {
    if (!el) return;
    const measure = () => setSize((s) => (s.width === el.clientWidth && s.height === el.clientHeight ? s : { width: el.clientWidth, height: el.clientHeight }));
    measure();
    const observer = new ResizeObserver(measure);
    observer.observe(el);
    return () => observer.disconnect();
  }, [el]);
  return [setEl, size, el];
}
