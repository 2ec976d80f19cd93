/**
 * What a caller sees when a handler fails: the handler's own code (`throw new FlintError('out_of_stock')`)
 * reaches @flint/sdk and iii-sdk callers; a failing nested call is the handler's `invocation_failed` with
 * the nested code and message as its cause, never a routing code that blames the called function.
 */
import { FlintError, FlintInvocationError } from '@flint/sdk';
import { afterEach, describe, expect, it } from 'vitest';
import { cleanup } from '../support/cleanup.js';
import { SDK_KINDS, type SdkKind, startTestEngine, startWorker, waitForFunction } from '../support/harness.js';
import { RawClient } from '../support/raw-client.js';

afterEach(cleanup);

async function failure(promise: Promise<unknown>): Promise<Error & { code: string; cause?: unknown }> {
  let value: unknown;
  try {
    value = await promise;
  } catch (err) {
    return err as Error & { code: string; cause?: unknown };
  }
  throw new Error(`expected a failure, got ${JSON.stringify(value)}`);
}

describe.each(SDK_KINDS)('handler failures seen by a %s caller', (callerKind: SdkKind) => {
  it("a handler's own code reaches the caller, also through a chain of handlers", async () => {
    const engine = await startTestEngine();
    await startWorker('flint', engine, (w) => {
      w.registerFunction('shop::reserve', () => {
        throw new FlintError('out_of_stock', 'No stock for sku-1');
      });
      // Not caught here: the nested domain failure passes on unchanged.
      w.registerFunction('shop::order', () => w.trigger({ function_id: 'shop::reserve', payload: {} }));
      w.registerFunction('shop::plain', () => {
        throw new Error('plain failure');
      });
    });
    const caller = await startWorker(callerKind, engine);
    for (const id of ['shop::reserve', 'shop::order']) {
      const err = await failure(caller.trigger({ function_id: id, payload: {} }));
      expect(err.code, id).toBe('out_of_stock');
      expect(err.message, id).toMatch(/^(out_of_stock: )?No stock for sku-1$/); // iii-sdk prefixes the code
    }
    expect((await failure(caller.trigger({ function_id: 'shop::plain', payload: {} }))).code).toBe('invocation_failed');
  });

  it('a failing nested call is the handler’s invocation_failed, naming the nested code and function', async () => {
    const engine = await startTestEngine();
    await startWorker('flint', engine, (w) => {
      w.registerFunction('orders::create', () => w.trigger({ function_id: 'stock::missing', payload: {} }));
    });
    const caller = await startWorker(callerKind, engine);
    const err = await failure(caller.trigger({ function_id: 'orders::create', payload: {} }));
    expect(err.code).toBe('invocation_failed');
    expect(err.message).toContain('orders::create failed: its call to stock::missing failed with function_not_found');
    if (callerKind === 'flint') {
      expect(err).toBeInstanceOf(FlintInvocationError);
      expect(err.cause).toBeInstanceOf(FlintError);
      expect(err.cause).toMatchObject({ code: 'function_not_found', message: expect.stringContaining('stock::missing') });
    }
  });
});

describe('routing codes from a worker', () => {
  it('a worker answering with a routing code only the engine gives is reported as a nested failure; function_not_found stays', async () => {
    const engine = await startTestEngine();
    const raw = await RawClient.connect(engine.bridgeUrl);
    raw.send({ type: 'registerfunction', id: 'raw::fn' });
    await waitForFunction(engine, 'raw::fn');
    const caller = await startWorker('flint', engine);
    const answeredWith = async (error: { code: string; message: string }) => {
      const call = failure(caller.trigger({ function_id: 'raw::fn', payload: {} }));
      const frame = await raw.next((f) => f.type === 'invokefunction');
      raw.send({ type: 'invocationresult', invocation_id: frame.invocation_id, function_id: 'raw::fn', error });
      return call;
    };
    const timedOut = await answeredWith({ code: 'invocation_timeout', message: 'Invocation of deep::fn timed out after 5 ms' });
    expect(timedOut.code).toBe('invocation_failed');
    expect(timedOut.cause).toMatchObject({ code: 'invocation_timeout', message: 'Invocation of deep::fn timed out after 5 ms' });
    const gone = await answeredWith({ code: 'function_not_found', message: 'Function raw::fn not found on this worker' });
    expect(gone.code).toBe('function_not_found');
  });
});
