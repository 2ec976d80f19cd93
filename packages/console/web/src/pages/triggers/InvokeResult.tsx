import type { ReactNode } from 'react';
import type { InvokeResponse } from '../../../../src/api-types.js';
import { ErrorBox } from '../../components/ErrorBox.js';
import { JsonView } from '../../components/JsonView.js';

/** A finished call shown inline: the function's result or its error, with the time it took. */
export function InvokeResult({ response, children }: { response: InvokeResponse; children?: ReactNode }) {
  const ms = `${Math.round(response.duration_ms * 10) / 10} ms`;
  if (response.status === 'ok') {
    return (
      <div className="card result ok tr-result" data-testid="action-result" role="status">
        <div className="tr-result-head">
          <span className="badge ok">ok</span>
          <span className="muted small">{ms}</span>
        </div>
        {children}
        <JsonView value={response.result} label="Result" maxHeight={260} />
      </div>
    );
  }
  return (
    <div className="card result error tr-result" data-testid="action-result" role="alert">
      <div className="tr-result-head">
        <span className="badge error">{response.error.code}</span>
        <span className="muted small">{ms}</span>
      </div>
      {children}
      <div>{response.error.message}</div>
    </div>
  );
}

/** A failed action's error, inline where the action's result would be. */
export function ActionError({ error }: { error: unknown }) {
  if (!error) return null;
  return (
    <div data-testid="action-result">
      <ErrorBox error={error} />
    </div>
  );
}
