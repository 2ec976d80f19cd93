import { useMutation } from '@tanstack/react-query';
import { Link } from '@tanstack/react-router';
import { Zap } from 'lucide-react';
import { useId, useState } from 'react';
import type { EmitRequest, EmitResponse, TriggerInfo } from '../../../../src/api-types.js';
import { JsonEditor, parseJson } from '../../components/JsonEditor.js';
import { api } from '../../lib/api.js';
import { ActionError, InvokeResult } from './InvokeResult.js';
import { configString } from './model.js';

/** How an emit reached its target, in words. */
function Delivery({ response, trigger }: { response: EmitResponse; trigger: TriggerInfo }) {
  const topic = configString(trigger, 'topic');
  switch (response.delivered_via) {
    case 'publish':
      return (
        <p className="small">
          Published to topic <span className="code-id">{topic ?? '?'}</span> (every subscriber receives it).
        </p>
      );
    case 'durable_publish':
      return (
        <p className="small">
          Published to queue topic <span className="code-id">{topic ?? '?'}</span> (each subscribing function handles it once, with retries).
        </p>
      );
    default:
      return (
        <p className="small">
          Delivered to{' '}
          <Link to="/functions" search={{ fn: trigger.function_id }} className="code-id">
            {trigger.function_id}
          </Link>
          .
        </p>
      );
  }
}

/**
 * Emit: delivers a payload to the trigger as its source would (the console server publishes on a
 * `subscribe` trigger's topic, or calls the function of a worker-defined trigger type with it).
 */
export function EmitPanel({ trigger, intro }: { trigger: TriggerInfo; intro: string }) {
  const id = useId();
  const [text, setText] = useState('{}');
  const parsed = parseJson(text);
  const emit = useMutation({
    mutationFn: (payload: unknown) => api.post<EmitResponse>('_console/emit', { trigger_id: trigger.id, payload } satisfies EmitRequest),
  });
  const submit = () => {
    if (parsed.ok) emit.mutate(parsed.value);
  };
  return (
    <section className="section" aria-labelledby={`${id}-title`}>
      <h3 id={`${id}-title`}>Emit</h3>
      <p className="muted small">{intro}</p>
      <JsonEditor label="Payload (JSON)" value={text} onChange={setText} onSubmit={submit} rows={6} />
      <div>
        <button type="button" className="btn primary" data-testid="emit-button" disabled={!parsed.ok || emit.isPending} onClick={submit}>
          <Zap size={14} aria-hidden="true" />
          {emit.isPending ? 'Emitting…' : 'Emit'}
        </button>
      </div>
      <ActionError error={emit.error} />
      {emit.data && (
        <InvokeResult response={emit.data}>
          <Delivery response={emit.data} trigger={trigger} />
        </InvokeResult>
      )}
    </section>
  );
}
