import { Link, Outlet, useNavigate, useRouterState } from '@tanstack/react-router';
import { Moon, Search, Sun, TriangleAlert } from 'lucide-react';
import { useCallback, useEffect, useState } from 'react';
import { onUnauthorized } from '../lib/api.js';
import { paletteShortcut, useGlobalShortcuts } from '../lib/keyboard.js';
import { PAGES, visiblePages } from '../lib/pages.js';
import { useConsoleConfig } from '../lib/queries.js';
import { useTheme } from '../lib/theme.js';
import { CommandPalette } from './CommandPalette.js';
import { EnginePill, useEngineState } from './EnginePill.js';
import { LoginGate } from './LoginGate.js';
import './palette.css';

/** `value` once it has held for `ms` (so a state that flips back quickly never shows); `initial` until then. */
function useSettled<T>(value: T, ms: number, initial: T): T {
  const [settled, setSettled] = useState(initial);
  useEffect(() => {
    const t = setTimeout(() => setSettled(value), ms);
    return () => clearTimeout(t);
  }, [value, ms]);
  return settled;
}

/** A line above the page while the engine (or the console server) cannot be reached: the page keeps its last data. */
function ConnectionBanner() {
  const state = useSettled(useEngineState(), 1500, 'connected');
  if (state === 'connected' || state === 'connecting') return null;
  return (
    <div className="shell-banner" role="status" data-testid="connection-banner">
      <TriangleAlert size={16} aria-hidden="true" />
      {state === 'console-offline'
        ? 'The console server cannot be reached; what you see may be out of date. Retrying…'
        : 'The engine is unreachable; what you see may be out of date and calls will fail until it is back. Reconnecting…'}
    </div>
  );
}

/** The shell: sidebar with every page, the engine pill and the theme switch; the page in <main>; the palette on Ctrl/⌘+K. */
export function Layout() {
  const [theme, toggleTheme] = useTheme();
  const config = useConsoleConfig();
  const navigate = useNavigate();
  const pathname = useRouterState({ select: (s) => s.location.pathname });
  const [needsToken, setNeedsToken] = useState(false);
  const [paletteOpen, setPaletteOpen] = useState(false);
  useEffect(() => onUnauthorized(() => setNeedsToken(true)), []);

  const togglePalette = useCallback(() => setPaletteOpen((o) => !o), []);
  const go = useCallback((to: string) => void navigate({ to }), [navigate]);
  useGlobalShortcuts({ togglePalette, go, enabled: !needsToken });

  const page = PAGES.find((n) => pathname === n.to || (n.to !== '/' && pathname.startsWith(`${n.to}/`)));
  useEffect(() => {
    document.title = page ? `${page.label} · Flint console` : 'Flint console';
  }, [page]);

  if (needsToken) return <LoginGate onDone={() => setNeedsToken(false)} />;
  return (
    <div className="shell">
      <a className="skip-link" href="#main">
        Skip to content
      </a>
      <nav className="sidebar" aria-label="Console pages">
        <div className="brand">
          <span className="brand-mark" aria-hidden="true">
            ◆
          </span>
          <span>Flint console</span>
        </div>
        <ul className="nav-list">
          {visiblePages(config.data?.enable_flow ?? false).map(({ to, label, icon: Icon, key }) => (
            <li key={to}>
              <Link
                to={to}
                activeOptions={{ exact: to === '/' }}
                className="nav-link"
                title={`${label} (g then ${key})`}
                activeProps={{ className: 'nav-link active', 'aria-current': 'page' }}
              >
                <Icon size={16} aria-hidden="true" />
                {label}
              </Link>
            </li>
          ))}
        </ul>
        <div className="sidebar-footer">
          <EnginePill />
          <button type="button" className="btn ghost shortcut-btn" onClick={() => setPaletteOpen(true)} aria-keyshortcuts="Control+K Meta+K">
            <span className="check">
              <Search size={15} aria-hidden="true" />
              Jump to…
            </span>
            <kbd>{paletteShortcut()}</kbd>
          </button>
          <button type="button" className="btn ghost" onClick={toggleTheme} aria-label={`Switch to ${theme === 'dark' ? 'light' : 'dark'} theme`}>
            {theme === 'dark' ? <Sun size={16} aria-hidden="true" /> : <Moon size={16} aria-hidden="true" />}
            {theme === 'dark' ? 'Light' : 'Dark'}
          </button>
          {config.data && (
            <div className="muted small">
              Flint console v{config.data.version} · engine {config.data.engine.host}:{config.data.engine.bridge_port}
            </div>
          )}
        </div>
      </nav>
      <main id="main" className="main" tabIndex={-1}>
        <div className="main-inner">
          <ConnectionBanner />
          <Outlet />
        </div>
      </main>
      <CommandPalette open={paletteOpen} onOpenChange={setPaletteOpen} />
    </div>
  );
}
