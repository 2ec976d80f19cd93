import { type EngineDecodeResult, decodeEngineFrame } from '@flint/protocol';
import { describe, expect, it } from 'vitest';

const ID = '0b6f8a52-3c1e-4c8e-9a55-2f1d7c0e9b41';

const decode = (frame: unknown): EngineDecodeResult => decodeEngineFrame(JSON.stringify(frame));

function reasonOf(frame: unknown): string {
  const result = decode(frame);
  if (result.ok) throw new Error(`expected ${JSON.stringify(frame)} to be refused`);
  return result.reason;
}

describe('decodeEngineFrame: good frames', () => {
  const good: Record<string, Record<string, unknown>[]> = {
    workerregistered: [{ type: 'workerregistered', worker_id: 'w-1' }],
    invokefunction: [
      { type: 'invokefunction', invocation_id: ID, function_id: 'math::add', data: { a: 1, b: 2 } },
      { type: 'invokefunction', function_id: 'fire::and::forget' },
      { type: 'invokefunction', invocation_id: null, function_id: 'f', data: null, traceparent: '00-abc-def-01', baggage: 'k=v' },
      { type: 'invokefunction', invocation_id: ID, function_id: 'f', action: { type: 'enqueue', queue: 'q' }, timeout_ms: 500 },
    ],
    invocationresult: [
      { type: 'invocationresult', invocation_id: ID, function_id: 'f', result: [1, 2, 3] },
      { type: 'invocationresult', invocation_id: ID, function_id: '', error: { code: 'invalid_frame', message: 'bad' } },
      { type: 'invocationresult', invocation_id: ID, function_id: 'f', error: null, traceparent: '00-abc-def-01' },
      { type: 'invocationresult', invocation_id: ID, result: 'no function_id: older engines' },
    ],
    registertrigger: [
      { type: 'registertrigger', id: 't1', trigger_type: 'cron', function_id: 'f', config: { expression: '* * * * *' } },
      { type: 'registertrigger', id: 't1', trigger_type: 'cron', function_id: 'f', config: {}, metadata: { owner: 'me' } },
    ],
    unregistertrigger: [
      { type: 'unregistertrigger', id: 't1', trigger_type: 'cron' },
      { type: 'unregistertrigger', id: 't1' },
    ],
    triggerregistrationresult: [
      { type: 'triggerregistrationresult', id: 't1', trigger_type: 'cron', function_id: 'f' },
      { type: 'triggerregistrationresult', id: 't1', parked: true },
      { type: 'triggerregistrationresult', id: 't1', error: { code: 'trigger_type_not_found', message: 'no provider' } },
    ],
    pong: [{ type: 'pong' }],
    error: [{ type: 'error', error: { code: 'invalid_frame', message: 'frame is not valid JSON' } }],
  };

  for (const [type, frames] of Object.entries(good)) {
    it(`accepts ${type} frames and returns the parsed frame`, () => {
      for (const frame of frames) {
        const result = decode(frame);
        expect(result).toEqual({ ok: true, message: frame });
      }
    });
  }

  it('ignores unknown fields (iii engines send message_type)', () => {
    const frame = { type: 'workerregistered', worker_id: 'w-1', message_type: 'workerregistered', extra: { nested: true } };
    expect(decode(frame)).toEqual({ ok: true, message: frame });
  });
});

describe('decodeEngineFrame: bad frames', () => {
  it('refuses text that is not JSON', () => {
    expect(decodeEngineFrame('{"type":"pong"')).toEqual({ ok: false, reason: 'frame is not valid JSON' });
    expect(decodeEngineFrame('')).toEqual({ ok: false, reason: 'frame is not valid JSON' });
  });

  it('refuses JSON that is not an object', () => {
    for (const text of ['null', '42', '"pong"', '[{"type":"pong"}]', 'true']) {
      expect(decodeEngineFrame(text)).toEqual({ ok: false, reason: 'frame must be a JSON object' });
    }
  });

  it('refuses a frame without a type', () => {
    expect(reasonOf({ worker_id: 'w-1' })).toBe('frame has no "type" field');
    expect(reasonOf({ type: 7 })).toBe('frame has no "type" field');
  });

  it('marks frames of an unknown type, so they can be ignored quietly', () => {
    expect(decode({ type: 'ping' })).toEqual({ ok: false, reason: 'unknown frame type "ping"', unknownType: 'ping' });
    expect(decode({ type: 'somethingnew', x: 1 })).toEqual({ ok: false, reason: 'unknown frame type "somethingnew"', unknownType: 'somethingnew' });
    // Other refusals carry no unknownType.
    expect(decode({ type: 'workerregistered' })).not.toHaveProperty('unknownType');
  });

  const bad: [frame: Record<string, unknown>, reason: RegExp][] = [
    [{ type: 'workerregistered' }, /worker_id/],
    [{ type: 'workerregistered', worker_id: 12 }, /worker_id/],
    [{ type: 'invokefunction', invocation_id: ID }, /function_id/],
    [{ type: 'invokefunction', function_id: 42 }, /function_id/],
    [{ type: 'invokefunction', invocation_id: 5, function_id: 'f' }, /invocation_id/],
    [{ type: 'invokefunction', function_id: 'f', traceparent: 1 }, /traceparent/],
    [{ type: 'invokefunction', function_id: 'f', baggage: {} }, /baggage/],
    [{ type: 'invokefunction', function_id: 'f', timeout_ms: '500' }, /timeout_ms/],
    [{ type: 'invokefunction', function_id: 'f', action: 'void' }, /action/],
    [{ type: 'invokefunction', function_id: 'f', action: { type: 'enqueue' } }, /action\.queue/],
    [{ type: 'invokefunction', function_id: 'f', action: { type: 'later' } }, /action\.type/],
    [{ type: 'invocationresult', function_id: 'f', result: 1 }, /invocation_id/],
    [{ type: 'invocationresult', invocation_id: 1, function_id: 'f' }, /invocation_id/],
    [{ type: 'invocationresult', invocation_id: ID, function_id: 7 }, /function_id/],
    [{ type: 'invocationresult', invocation_id: ID, function_id: 'f', error: 'boom' }, /error/],
    [{ type: 'invocationresult', invocation_id: ID, function_id: 'f', error: ['boom'] }, /error/],
    [{ type: 'invocationresult', invocation_id: ID, function_id: 'f', baggage: 3 }, /baggage/],
    [{ type: 'registertrigger', trigger_type: 'cron', function_id: 'f', config: {} }, /id/],
    [{ type: 'registertrigger', id: 't1', function_id: 'f', config: {} }, /trigger_type/],
    [{ type: 'registertrigger', id: 't1', trigger_type: 'cron', config: {} }, /function_id/],
    [{ type: 'registertrigger', id: 't1', trigger_type: 'cron', function_id: 'f', metadata: 'm' }, /metadata/],
    [{ type: 'unregistertrigger' }, /id/],
    [{ type: 'unregistertrigger', id: 't1', trigger_type: 5 }, /trigger_type/],
    [{ type: 'triggerregistrationresult' }, /id/],
    [{ type: 'triggerregistrationresult', id: 't1', function_id: 3 }, /function_id/],
    [{ type: 'triggerregistrationresult', id: 't1', error: 'rejected' }, /error/],
    [{ type: 'triggerregistrationresult', id: 't1', parked: 'yes' }, /parked/],
    [{ type: 'error' }, /error/],
    [{ type: 'error', error: 'boom' }, /error/],
    [{ type: 'error', error: { code: 'x' } }, /message/],
  ];

  it('refuses missing or ill-typed required fields, naming the frame type and the field', () => {
    for (const [frame, reason] of bad) {
      const got = reasonOf(frame);
      expect(got, JSON.stringify(frame)).toMatch(reason);
      expect(got.startsWith(`${frame.type}: `), got).toBe(true);
    }
  });
});
