import { useEffect, useRef } from 'react';
import { PAGES, type PagePath } from './pages.js';

/** Whether keystrokes on `target` are text entry (an input, textarea, select or contenteditable). */
export function isTypingTarget(target: EventTarget | null): boolean {
  if (!(target instanceof HTMLElement)) return false;
  if (target.isContentEditable) return true;
  const tag = target.tagName;
  if (tag === 'TEXTAREA' || tag === 'SELECT') return true;
  if (tag !== 'INPUT') return false;
  const type = (target as HTMLInputElement).type;
  return !['checkbox', 'radio', 'button', 'submit', 'reset', 'range', 'color', 'file'].includes(type);
}

/** The platform's name for the palette shortcut: "⌘K" on Apple systems, "Ctrl K" elsewhere. */
export const paletteShortcut = (): string => (/Mac|iPhone|iPad/.test(navigator.platform || navigator.userAgent) ? '⌘K' : 'Ctrl K');

/** Focuses the page's search input (the visible element with `data-search`); false when there is none. */
export function focusPageSearch(): boolean {
  const inputs = document.querySelectorAll<HTMLElement>('main [data-search]');
  for (const el of inputs) {
    if (el.offsetParent !== null) {
      el.focus();
      if (el instanceof HTMLInputElement) el.select();
      return true;
    }
  }
  return false;
}

/** `g` then this key jumps to the page. */
export const GO_KEYS: Record<string, PagePath> = Object.fromEntries(PAGES.map((p) => [p.key, p.to]));

/**
 * The console's global keys: Ctrl/⌘+K toggles the palette (even while typing); when not typing,
 * `/` focuses the page's search input and `g` then w/f/t/s/q/c jumps to a page.
 */
export function useGlobalShortcuts({ togglePalette, go, enabled = true }: { togglePalette: () => void; go: (to: string) => void; enabled?: boolean }) {
  const handlers = useRef({ togglePalette, go });
  handlers.current = { togglePalette, go };

  useEffect(() => {
    if (!enabled) return;
    let gPressedAt = 0;
    const onKey = (e: KeyboardEvent) => {
      if (e.defaultPrevented || e.isComposing) return;
      const key = e.key.toLowerCase();
      if (key === 'k' && (e.ctrlKey || e.metaKey) && !e.altKey && !e.shiftKey) {
        e.preventDefault();
        handlers.current.togglePalette();
        return;
      }
      if (e.ctrlKey || e.metaKey || e.altKey || isTypingTarget(e.target)) return;
      // Inside a dialog (the palette, a confirmation) keys belong to it.
      if (e.target instanceof Element && e.target.closest('[role="dialog"],[role="alertdialog"]')) return;
      if (e.key === '/') {
        if (focusPageSearch()) e.preventDefault();
        return;
      }
      const now = Date.now();
      if (gPressedAt && now - gPressedAt < 1200) {
        gPressedAt = 0;
        const to = GO_KEYS[key];
        if (to) {
          e.preventDefault();
          handlers.current.go(to);
        }
        return;
      }
      if (key === 'g' && !e.shiftKey) gPressedAt = now;
    };
    window.addEventListener('keydown', onKey);
    return () => window.removeEventListener('keydown', onKey);
  }, [enabled]);
}
