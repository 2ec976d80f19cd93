import { useMutation } from '@tanstack/react-query';
import { Check, Send, Terminal } from 'lucide-react';
import { type FormEvent, useId, useState } from 'react';
import type { HttpProbeRequest, HttpProbeResponse, TriggerInfo } from '../../../../src/api-types.js';
import { ErrorBox } from '../../components/ErrorBox.js';
import { JsonEditor, parseJson } from '../../components/JsonEditor.js';
import { JsonView } from '../../components/JsonView.js';
import { api } from '../../lib/api.js';
import { configString } from './model.js';
import { type Pair, PairsEditor, pairsToTuples } from './PairsEditor.js';

export const HTTP_METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'HEAD', 'OPTIONS'] as const;
const BODY_METHODS = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

/** An api_path's segments; `:name` ones are parameters. */
export function pathSegments(apiPath: string | undefined): string[] {
  return (apiPath ?? '').split('/').filter((s) => s !== '');
}

/** The path with every parameter filled in (URL-encoded), or the first parameter left empty. */
export function fillPath(segments: string[], params: Record<string, string>): { ok: true; path: string } | { ok: false; missing: string } {
  const out: string[] = [];
  for (const s of segments) {
    if (s.startsWith(':')) {
      const name = s.slice(1);
      const v = params[name] ?? '';
      if (v === '') return { ok: false, missing: name };
      out.push(encodeURIComponent(v));
    } else {
      out.push(s);
    }
  }
  return { ok: true, path: `/${out.join('/')}` };
}

/** A word for the shell, in single quotes. */
const shq = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;

/** The same request as a curl command line. */
export function curlCommand(method: string, url: string, headers: [string, string][], body: unknown): string {
  const parts = ['curl', '-sS'];
  if (method === 'HEAD') parts.push('--head');
  else if (method !== 'GET' || body !== undefined) parts.push('-X', method);
  parts.push(shq(url));
  const hasType = headers.some(([k]) => k.toLowerCase() === 'content-type');
  for (const [k, v] of headers) parts.push('-H', shq(`${k}: ${v}`));
  if (body !== undefined) {
    if (!hasType) parts.push('-H', shq('content-type: application/json'));
    parts.push('--data-raw', shq(JSON.stringify(body)));
  }
  return parts.join(' ');
}

function statusClass(status: number): string {
  if (status >= 500) return 'error';
  if (status >= 400) return 'warn';
  if (status >= 300) return 'info';
  return 'ok';
}

/** Sends a request to an http trigger's route through the console server and shows the answer. */
export function HttpRequestBuilder({ trigger }: { trigger: TriggerInfo }) {
  const id = useId();
  const apiPath = configString(trigger, 'api_path');
  const segments = pathSegments(apiPath);
  const paramNames = segments.filter((s) => s.startsWith(':')).map((s) => s.slice(1));
  const initialMethod = (configString(trigger, 'http_method') ?? 'GET').toUpperCase();

  const [method, setMethod] = useState<string>((HTTP_METHODS as readonly string[]).includes(initialMethod) ? initialMethod : 'GET');
  const [params, setParams] = useState<Record<string, string>>({});
  const [query, setQuery] = useState<Pair[]>([]);
  const [headers, setHeaders] = useState<Pair[]>([]);
  const [bodyText, setBodyText] = useState('');
  const [formError, setFormError] = useState<string | null>(null);

  const send = useMutation({
    mutationFn: (req: HttpProbeRequest) => api.post<HttpProbeResponse>('_console/http', req),
  });

  const withBody = BODY_METHODS.has(method);
  const parsedBody = bodyText.trim() === '' ? ({ ok: true, value: undefined } as const) : parseJson(bodyText);

  const build = (): HttpProbeRequest | string => {
    const filled = fillPath(segments, params);
    if (!filled.ok) return `Fill in path parameter ${filled.missing}`;
    if (withBody && !parsedBody.ok) return `The body is not valid JSON: ${parsedBody.error}`;
    const req: HttpProbeRequest = { method, path: filled.path };
    const q = pairsToTuples(query);
    const h = pairsToTuples(headers);
    if (q.length > 0) req.query = q;
    if (h.length > 0) req.headers = h;
    if (withBody && parsedBody.ok && parsedBody.value !== undefined) req.body = parsedBody.value;
    return req;
  };

  const submit = (e?: FormEvent) => {
    e?.preventDefault();
    const req = build();
    if (typeof req === 'string') {
      setFormError(req);
      return;
    }
    setFormError(null);
    send.mutate(req);
  };

  const res = send.data;
  const sent = send.variables;

  return (
    <section className="section" aria-labelledby={`${id}-title`}>
      <h3 id={`${id}-title`}>Request builder</h3>
      <form className="tr-form" onSubmit={submit} noValidate>
        <div className="tr-request-line">
          <div className="field">
            <label htmlFor={`${id}-method`}>Method</label>
            <select id={`${id}-method`} className="input" value={method} onChange={(e) => setMethod(e.target.value)}>
              {HTTP_METHODS.map((m) => (
                <option key={m} value={m}>
                  {m}
                </option>
              ))}
            </select>
          </div>
          <div className="field tr-grow">
            <label htmlFor={`${id}-path`}>Path</label>
            <input id={`${id}-path`} className="input mono" value={`/${segments.join('/')}`} readOnly />
          </div>
        </div>
        {paramNames.length > 0 && (
          <fieldset className="tr-pairs">
            <legend>Path parameters</legend>
            {paramNames.map((name) => (
              <div className="field" key={name}>
                <label htmlFor={`${id}-p-${name}`}>
                  <span className="code-id">:{name}</span> (required)
                </label>
                <input
                  id={`${id}-p-${name}`}
                  className="input mono"
                  required
                  aria-required="true"
                  value={params[name] ?? ''}
                  onChange={(e) => setParams((p) => ({ ...p, [name]: e.target.value }))}
                />
              </div>
            ))}
          </fieldset>
        )}
        <PairsEditor title="Query parameters" noun="Query parameter" rows={query} onChange={setQuery} keyPlaceholder="name" testId="http-query" />
        <PairsEditor title="Headers" noun="Header" rows={headers} onChange={setHeaders} keyPlaceholder="header-name" testId="http-headers" />
        {withBody && <JsonEditor label="Body (JSON; empty sends no body)" value={bodyText} onChange={setBodyText} onSubmit={submit} rows={6} emptyAs={null} />}
        {formError && (
          <p className="error-text" role="alert">
            {formError}
          </p>
        )}
        <div>
          <button type="submit" className="btn primary" data-testid="http-send" disabled={send.isPending}>
            <Send size={14} aria-hidden="true" />
            {send.isPending ? 'Sending…' : 'Send'}
          </button>
        </div>
      </form>
      <ErrorBox error={send.error} />
      {res && sent && <HttpResponseView res={res} method={sent.method} headers={sent.headers ?? []} body={sent.body} />}
    </section>
  );
}

function HttpResponseView({ res, method, headers, body }: { res: HttpProbeResponse; method: string; headers: [string, string][]; body: unknown }) {
  const cls = statusClass(res.status);
  // Headers may repeat (set-cookie): the position keeps each row apart.
  const headerRows = res.headers.map(([name, value], n) => ({ key: `${n}:${name}`, name, value }));
  return (
    <div className={`card result ${cls === 'error' || cls === 'warn' ? 'error' : 'ok'} tr-result`} data-testid="action-result" aria-live="polite">
      <div className="tr-result-head">
        <span className={`badge ${cls}`} data-testid="http-response-status">
          {res.status}
        </span>
        <span className="muted small">{Math.round(res.duration_ms * 10) / 10} ms</span>
      </div>
      <div className="tr-url">
        <code className="mono">
          {method} {res.url}
        </code>
        <CopyCurlButton command={curlCommand(method, res.url, headers, body)} />
      </div>
      <details open>
        <summary>Response headers ({res.headers.length})</summary>
        <table className="table tr-headers">
          <thead>
            <tr>
              <th scope="col">Header</th>
              <th scope="col">Value</th>
            </tr>
          </thead>
          <tbody>
            {headerRows.map((h) => (
              <tr key={h.key}>
                <td className="mono">{h.name}</td>
                <td className="mono">{h.value}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </details>
      <div className="field">
        <span className="muted small">Body</span>
        {res.body_is_json ? (
          <JsonView value={res.body} label="Response body" maxHeight={320} />
        ) : res.body === '' || res.body === null || res.body === undefined ? (
          <p className="muted small">(empty body)</p>
        ) : (
          <pre className="json">{String(res.body)}</pre>
        )}
      </div>
    </div>
  );
}

function CopyCurlButton({ command }: { command: string }) {
  const [done, setDone] = useState(false);
  return (
    <button
      type="button"
      className="btn small"
      title={command}
      onClick={() => {
        void navigator.clipboard?.writeText(command).then(() => {
          setDone(true);
          setTimeout(() => setDone(false), 1500);
        });
      }}
    >
      {done ? <Check size={14} aria-hidden="true" /> : <Terminal size={14} aria-hidden="true" />}
      {done ? 'Copied' : 'Copy as curl'}
    </button>
  );
}
