import { useMutation, useQueryClient } from '@tanstack/react-query';
import { Save } from 'lucide-react';
import { useState } from 'react';
import { JsonEditor, parseJson } from '../../components/JsonEditor.js';
import { ActionError } from '../triggers/InvokeResult.js';
import { invalidateState, putState } from './model.js';

const pretty = (value: unknown) => JSON.stringify(value, null, 2) ?? 'null';

/** Edits a key's value as JSON; Save writes it (state triggers of the scope fire state:updated). */
export function ItemEditor({ scope, stateKey, value, onDone }: { scope: string; stateKey: string; value: unknown; onDone: (saved: boolean) => void }) {
  const queryClient = useQueryClient();
  const [base] = useState(() => pretty(value));
  const [text, setText] = useState(base);
  const parsed = parseJson(text);
  const save = useMutation({
    mutationFn: (v: unknown) => putState(scope, stateKey, v),
    onSuccess: async () => {
      await invalidateState(queryClient, scope);
      onDone(true);
    },
  });
  const submit = () => {
    if (parsed.ok && !save.isPending) save.mutate(parsed.value);
  };
  const changedElsewhere = pretty(value) !== base;
  return (
    <form
      className="st-editor"
      onSubmit={(e) => {
        e.preventDefault();
        submit();
      }}
    >
      <JsonEditor label={`Value of ${stateKey} (JSON)`} value={text} onChange={setText} onSubmit={submit} rows={14} />
      {changedElsewhere && (
        <p className="small st-warn" role="status">
          This key changed since you started editing; Save overwrites the new value.
        </p>
      )}
      <div className="st-actions">
        <button type="submit" className="btn primary" data-testid="state-save" disabled={!parsed.ok || save.isPending}>
          <Save size={14} aria-hidden="true" />
          {save.isPending ? 'Saving…' : 'Save'}
        </button>
        <button type="button" className="btn" onClick={() => onDone(false)} disabled={save.isPending}>
          Cancel
        </button>
      </div>
      <ActionError error={save.error} />
    </form>
  );
}
