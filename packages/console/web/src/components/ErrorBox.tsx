import { ApiRequestError } from '../lib/api.js';

/** An API failure, with its stable code (and the engine's code for engine errors). */
export function ErrorBox({ error }: { error: unknown }) {
  if (!error) return null;
  const e = error instanceof ApiRequestError ? error : undefined;
  return (
    <div className="card result error" role="alert">
      <strong>{e ? (e.engineCode ?? e.code) : 'Error'}</strong>
      <div>{error instanceof Error ? error.message : String(error)}</div>
    </div>
  );
}
