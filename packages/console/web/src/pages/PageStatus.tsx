import { useEngineState } from '../components/EnginePill.js';

/** The short line a page shows while its first data loads (and why it may take a while). */
export function LoadingLine() {
  const state = useEngineState();
  return (
    <p className="loading-line" role="status">
      {state === 'disconnected'
        ? 'Loading… (the engine is unreachable; retrying)'
        : state === 'console-offline'
          ? 'Loading… (the console server is unreachable; retrying)'
          : 'Loading…'}
    </p>
  );
}
