import { type RefObject, useEffect, useState } from 'react';

/** Services take the colours `--trc-c0` … `--trc-c7` of traces.css (one set per theme), in order of first appearance. */
export const PALETTE_SIZE = 8;

export const serviceColorVar = (serviceIndex: number): string => `var(--trc-c${serviceIndex % PALETTE_SIZE})`;

/** The theme's colours a canvas needs, read from the CSS variables (canvas cannot use var()). */
export interface CanvasColors {
  services: string[];
  /** Text on a service colour. */
  onService: string;
  text: string;
  muted: string;
  bg: string;
  raised: string;
  border: string;
  error: string;
  accent: string;
  focus: string;
}

function readColors(el: Element): CanvasColors {
  const style = getComputedStyle(el);
  const v = (name: string, fallback: string) => style.getPropertyValue(name).trim() || fallback;
  return {
    services: Array.from({ length: PALETTE_SIZE }, (_, i) => v(`--trc-c${i}`, '#888')),
    onService: v('--trc-on', '#111'),
    text: v('--text', '#ddd'),
    muted: v('--text-muted', '#999'),
    bg: v('--bg', '#111'),
    raised: v('--bg-raised', '#161a20'),
    border: v('--border', '#333'),
    error: v('--error', '#e33'),
    accent: v('--accent', '#f59e0b'),
    focus: v('--focus', '#60a5fa'),
  };
}

/** The canvas colours under `ref`'s element, read again whenever the theme changes (`<html data-theme>`). */
export function useCanvasColors(ref: RefObject<Element | null>): CanvasColors | undefined {
  const [colors, setColors] = useState<CanvasColors | undefined>(undefined);
  useEffect(() => {
    const read = () => {
      if (ref.current) setColors(readColors(ref.current));
    };
    read();
    const observer = new MutationObserver(read);
    observer.observe(document.documentElement, { attributes: true, attributeFilter: ['data-theme', 'class', 'style'] });
    const media = window.matchMedia?.('(prefers-color-scheme: dark)');
    media?.addEventListener?.('change', read);
    return () => {
      observer.disconnect();
      media?.removeEventListener?.('change', read);
    };
  }, [ref]);
  return colors;
}
