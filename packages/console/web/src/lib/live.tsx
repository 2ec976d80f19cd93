import { useQueryClient } from '@tanstack/react-query';
import { type ReactNode, createContext, useContext, useEffect, useState } from 'react';
import type { BridgeState, LiveEvent } from '../../../src/api-types.js';

export interface LiveStatus {
  /** The live socket to the console server is open (updates are pushed; no polling needed). */
  live: boolean;
  /** The console server's connection to the engine bridge, as last pushed. */
  bridge: BridgeState;
}

const LiveContext = createContext<LiveStatus>({ live: false, bridge: 'connecting' });

/** The live status: pages poll (`pollWhenOffline`) only while `live` is false. */
export const useLive = () => useContext(LiveContext);

/** Refetch interval for a query: none while updates are pushed, `ms` as a fallback while they are not. */
export function usePollWhenOffline(ms = 5000): number | false {
  return useLive().live ? false : ms;
}

/** Opens /_console/live and turns each pushed event into query invalidations; reconnects with a backoff. */
export function LiveProvider({ children }: { children: ReactNode }) {
  const queryClient = useQueryClient();
  const [status, setStatus] = useState<LiveStatus>({ live: false, bridge: 'connecting' });

  useEffect(() => {
    let ws: WebSocket | undefined;
    let timer: ReturnType<typeof setTimeout> | undefined;
    let attempt = 0;
    let closed = false;
    let opened = false;
    // The bridge state last pushed (undefined until the first message of a socket).
    let lastBridge: BridgeState | undefined;
    const invalidate = (...keys: string[]) => {
      for (const key of keys) void queryClient.invalidateQueries({ queryKey: [key] });
    };
    const connect = () => {
      const url = new URL('/_console/live', window.location.href);
      url.protocol = url.protocol === 'https:' ? 'wss:' : 'ws:';
      ws = new WebSocket(url);
      ws.onopen = () => {
        attempt = 0;
        setStatus((s) => ({ ...s, live: true }));
        // On a reconnection, whatever changed while the socket was down (the first open has nothing to catch up on).
        if (opened) void queryClient.invalidateQueries();
        opened = true;
      };
      ws.onmessage = (msg) => {
        let event: LiveEvent;
        try {
          event = JSON.parse(String(msg.data)) as LiveEvent;
        } catch {
          return;
        }
        switch (event.type) {
          case 'bridge':
            setStatus((s) => ({ ...s, bridge: event.state }));
            invalidate('status');
            // Back after an outage: refetch what failed or went stale meanwhile.
            if (event.state === 'connected' && lastBridge !== undefined && lastBridge !== 'connected') void queryClient.invalidateQueries();
            lastBridge = event.state;
            break;
          case 'functions':
            invalidate('functions', 'workers', 'triggers', 'cron', 'cluster');
            break;
          case 'workers':
            // A worker's functions come and go with their own `functions` event.
            invalidate('workers', 'cluster');
            break;
          case 'triggers':
            invalidate('triggers', 'cron');
            break;
          case 'state':
            invalidate('state-groups');
            void queryClient.invalidateQueries({ queryKey: ['state-entries', event.scope] });
            break;
        }
      };
      ws.onclose = () => {
        lastBridge = undefined;
        setStatus((s) => ({ ...s, live: false }));
        if (closed) return;
        const delay = Math.min(10_000, 500 * 2 ** attempt++);
        timer = setTimeout(connect, delay);
      };
    };
    connect();
    return () => {
      closed = true;
      clearTimeout(timer);
      ws?.close();
    };
  }, [queryClient]);

  return <LiveContext.Provider value={status}>{children}</LiveContext.Provider>;
}
