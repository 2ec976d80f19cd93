import { Link } from '@tanstack/react-router';
import { useLive } from '../lib/live.js';
import { useConsoleConfig, useStatus } from '../lib/queries.js';

export type EngineState = 'connected' | 'connecting' | 'disconnected' | 'console-offline';

/** What the shell knows about the engine connection: the live socket first, then the bridge. */
export function useEngineState(): EngineState {
  const { live, bridge } = useLive();
  return !live ? 'console-offline' : bridge;
}

/**
 * Engine connection: green when the console server is connected to the bridge, amber while it
 * (re)connects, red while the engine is unreachable. Links to the Config page's connectivity rows.
 */
export function EnginePill() {
  const state = useEngineState();
  const status = useStatus();
  const config = useConsoleConfig();
  const version = status.data?.engine?.version;
  const label =
    state === 'connected'
      ? `Engine connected${version ? ` · v${version}` : ''}`
      : state === 'connecting'
        ? 'Connecting to the engine…'
        : state === 'console-offline'
          ? 'Console server unreachable, retrying…'
          : 'Engine unreachable, reconnecting…';
  const tone = state === 'connected' ? 'ok' : state === 'disconnected' ? 'error' : 'warn';
  const bridgeUrl = config.data?.engine.bridge_url;
  return (
    <Link to="/config" className="pill-link" title={bridgeUrl ? `Engine bridge: ${bridgeUrl}` : undefined}>
      <output className={`pill pill-${tone}`} aria-live="polite" data-testid="engine-pill" data-state={state}>
        <span className="dot" aria-hidden="true" />
        {label}
      </output>
    </Link>
  );
}
