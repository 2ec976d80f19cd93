import { useMutation, useQueryClient } from '@tanstack/react-query';
import { Send } from 'lucide-react';
import { useId, useState } from 'react';
import { JsonEditor, parseJson } from '../../components/JsonEditor.js';
import { api, seg } from '../../lib/api.js';
import { ActionError } from '../triggers/InvokeResult.js';

/** Publishes one message to a durable queue topic (`flint::durable::publish` through the console server). */
export function PublishForm({ topic }: { topic: string }) {
  const id = useId();
  const queryClient = useQueryClient();
  const [text, setText] = useState('{}');
  const parsed = parseJson(text);
  const publish = useMutation({
    mutationFn: (data: unknown) => api.post<{ message_id?: string } | null>(`_console/queues/${seg(topic)}/publish`, { data }),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: ['queues'] }),
  });
  const submit = () => {
    if (parsed.ok) publish.mutate(parsed.value);
  };
  const messageId = publish.data && typeof publish.data === 'object' ? publish.data.message_id : undefined;
  return (
    <section className="section" aria-labelledby={`${id}-title`}>
      <h3 id={`${id}-title`}>Publish</h3>
      <p className="muted small">
        Every function subscribed to <span className="code-id">{topic}</span> gets the message once (with retries, then the dead letters).
      </p>
      <JsonEditor label="Message data (JSON)" value={text} onChange={setText} onSubmit={submit} rows={6} />
      <div>
        <button type="button" className="btn primary" data-testid="publish-button" disabled={!parsed.ok || publish.isPending} onClick={submit}>
          <Send size={14} aria-hidden="true" />
          {publish.isPending ? 'Publishing…' : 'Publish'}
        </button>
      </div>
      <ActionError error={publish.error} />
      {publish.isSuccess && (
        <div className="card result ok" data-testid="action-result" role="status">
          Published to <span className="code-id">{topic}</span>
          {messageId ? (
            <>
              {' '}
              as message <span className="code-id">{messageId}</span>
            </>
          ) : null}
          .
        </div>
      )}
    </section>
  );
}
