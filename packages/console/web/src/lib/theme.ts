import { useCallback, useState } from 'react';

export type Theme = 'light' | 'dark';
const KEY = 'flint-console-theme';

/** The theme on <html data-theme>, set before first paint by /theme.js; toggling saves the choice. */
export function useTheme(): [Theme, () => void] {
  const [theme, setTheme] = useState<Theme>(() => (document.documentElement.dataset.theme === 'light' ? 'light' : 'dark'));
  const toggle = useCallback(() => {
    setTheme((t) => {
      const next: Theme = t === 'dark' ? 'light' : 'dark';
      document.documentElement.dataset.theme = next;
      try {
        localStorage.setItem(KEY, next);
      } catch {
        // private mode: the choice lasts for this page only
      }
      return next;
    });
  }, []);
  return [theme, toggle];
}
