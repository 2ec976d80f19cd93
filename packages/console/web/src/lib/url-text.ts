import { useEffect, useRef, useState } from 'react';

/**
 * A text input kept in the URL (a search box's `q`): typing updates local state at once and writes
 * the URL (replace, not push); a URL that changes on its own (back, a link) updates the text.
 */
export function useUrlText(urlValue: string | undefined, write: (value: string | undefined) => void): [string, (value: string) => void] {
  const [text, setText] = useState(urlValue ?? '');
  const written = useRef(urlValue ?? '');
  useEffect(() => {
    const u = urlValue ?? '';
    if (u !== written.current) {
      written.current = u;
      setText(u);
    }
  }, [urlValue]);
  const update = (value: string) => {
    setText(value);
    written.current = value;
    write(value === '' ? undefined : value);
  };
  return [text, update];
}
