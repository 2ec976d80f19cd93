/**
 * Hostile worker frames for the bridge fuzz (bridge/fuzz.test.ts), and the oracle that says how the
 * engine must answer a batch of them (docs/bridge.md, "Bad input" and the frame table): each refused
 * frame gets an `error` (or, for a call with an `invocation_id`, an `invocationresult` carrying the
 * error), each sync call exactly one `invocationresult`, each `registertrigger` exactly one
 * `triggerregistrationresult`, each `ping` a `pong`, and nothing else is said.
 *
 * The ids a batch registers and the ids it calls come from disjoint name spaces (`fzr-…` registered,
 * never called; `fzf-…` named by triggers, never registered; `fzy-…` trigger types, never used by a
 * trigger), so the engine never waits on the fuzzing client for a call. (Hostile ids, the same in every
 * name space, can still meet: see Expected.providedTypes.)
 */
import { decodeWorkerFrame } from '@flint/protocol';
import fc from 'fast-check';

// biome-ignore lint/suspicious/noExplicitAny: frames are arbitrary JSON
export type Frame = Record<string, any>;

const PROTO_KEYS = ['__proto__', 'constructor', 'prototype', 'toString', 'hasOwnProperty'] as const;

/** Sets `key` as an own, enumerable property (so `__proto__` is data and JSON.stringify writes it). */
export function withKey(obj: Frame, key: string, value: unknown): Frame {
  Object.defineProperty(obj, key, { value, enumerable: true, writable: true, configurable: true });
  return obj;
}

const control = fc.string({ unit: fc.integer({ min: 0, max: 0x1f }).map((c) => String.fromCharCode(c)), minLength: 1, maxLength: 4 });
const word = fc.stringMatching(/^[a-z0-9:._-]{1,16}$/);

/** Strings ids trip on: too long (257, 300), control characters, whitespace, prototype names, non-ASCII. */
export const hostileString: fc.Arbitrary<string> = fc.oneof(
  fc.constantFrom('', ' ', 'x'.repeat(257), 'y'.repeat(300), 'a\u0000b', 'a\tb', 'a b', '\u007f', '\u2028', '😀'.repeat(130), 'engine::x', 'state::set'),
  fc.constantFrom(...PROTO_KEYS),
  fc.tuple(word, control, word).map(([a, c, b]) => a + c + b),
  fc.string({ maxLength: 30 }),
  fc.string({ unit: 'binary', maxLength: 30 }),
  fc.integer({ min: 1, max: 20_000 }).map((n) => 'z'.repeat(n)),
);

/** A value of a type a field does not take, or a value of the right type that is still hostile. */
export const hostileValue: fc.Arbitrary<unknown> = fc.oneof(
  fc.constantFrom(null, true, false, 0, -1, 1e308, -0.5, 2_147_483_648, Number.MAX_SAFE_INTEGER),
  hostileString,
  fc.integer(),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
  fc.uuid(),
  fc.array(fc.jsonValue({ maxDepth: 2 }), { maxLength: 3 }),
  fc.dictionary(fc.string({ maxLength: 8 }), fc.jsonValue({ maxDepth: 2 }), { maxKeys: 3 }),
  fc.tuple(fc.constantFrom(...PROTO_KEYS), fc.jsonValue({ maxDepth: 1 })).map(([k, v]) => withKey({}, k, withKey({}, 'polluted', v ?? true))),
);

/** Absent one time in `absentOneIn`. */
const opt = <T>(arb: fc.Arbitrary<T>, absentOneIn = 2) => fc.option(arb, { nil: undefined, freq: absentOneIn });
/** Present one time in `presentOneIn`. */
const rare = <T>(arb: fc.Arbitrary<T>, presentOneIn: number) =>
  fc.oneof({ weight: presentOneIn - 1, arbitrary: fc.constant(undefined) }, { weight: 1, arbitrary: arb });
const mix = <T>(good: fc.Arbitrary<T>) => fc.oneof({ weight: 8, arbitrary: good }, { weight: 1, arbitrary: hostileValue });

/** Functions a hostile call may name: the engine's, the loaded modules', unknown ones, broken ids. */
const calledFunction = fc.oneof(
  {
    weight: 4,
    arbitrary: fc.constantFrom(
      'engine::functions::list',
      'engine::triggers::list',
      'engine::trigger-types::list',
      'engine::workers::list',
      'engine::workers::register',
      'engine::channels::create',
      'engine::log::info',
      'engine::log::nope',
      'state::set',
      'state::get',
      'state::list',
      'state::delete',
    ),
  },
  { weight: 2, arbitrary: word.map((w) => `fzx-${w}`) },
  hostileString.filter((s) => !s.startsWith('fzr-')),
);

const registeredId = fc.oneof(
  { weight: 8, arbitrary: word.map((w) => `fzr-${w}`) },
  fc.constantFrom('engine::fz', 'state::set', 'flint::x', 'stream::x'),
  hostileString,
);
const triggerFunction = fc.oneof(
  { weight: 8, arbitrary: word.map((w) => `fzf-${w}`) },
  hostileString.filter((s) => !s.startsWith('fzr-')),
);
const triggerId = fc.oneof({ weight: 8, arbitrary: fc.uuid().map((u) => `fzt-${u}`) }, hostileString);
const triggerType = fc.oneof(
  fc.constantFrom('http', 'state', 'cron', 'log', 'stream', 'subscribe', 'durable:subscriber', 'engine::functions-available', 'engine::workers-available'),
  word.map((w) => `fzp-${w}`),
  hostileString.filter((s) => !s.startsWith('fzy-')),
);
const providedType = fc.oneof(
  { weight: 2, arbitrary: word.map((w) => `fzy-${w}`) },
  fc.constantFrom('http', 'state', 'cron', 'log', 'stream', 'stream:join', 'durable:subscriber', 'engine::x', 'engine::functions-available'),
  hostileString.filter((s) => !s.startsWith('fzp-')),
);

/** Nesting built as text (deeper than JSON.stringify would go), object or array levels. */
export function nestedText(depth: number, objects: boolean): string {
  const [open, close] = objects ? ['{"k":', '}'] : ['[', ']'];
  return `${open.repeat(depth)}0${close.repeat(depth)}`;
}

/** A trigger config: hostile values, the keys modules check with wrong types, prototype keys. */
const config = fc.oneof(
  fc.constant({}),
  hostileValue,
  fc.record({ api_path: mix(fc.constantFrom('/fz', '/fz/:id', '', '/', '//', '/a/../b')), http_method: mix(fc.constantFrom('GET', 'POST', 'get', 'BREW')) }),
  fc.record({ expression: mix(fc.constantFrom('* * * * *', '61 * * * *', '@hourly', '', '* * * * * * *')), timezone: opt(hostileValue) }),
  fc.record({ scope: mix(word), key: opt(hostileValue) }),
  fc.dictionary(fc.oneof(fc.constantFrom(...PROTO_KEYS), word), hostileValue, { maxKeys: 3 }),
);

/** One hostile frame: a known type with fields replaced by wrong types, huge or broken values, extra keys. */
const hostileFrame: fc.Arbitrary<Frame> = fc.oneof(
  {
    weight: 4,
    arbitrary: fc.record({
      type: fc.constant('invokefunction'),
      invocation_id: opt(fc.oneof({ weight: 4, arbitrary: fc.uuid() }, fc.constantFrom(null, '', 'not-a-uuid', `${'0'.repeat(36)}`), hostileValue), 4),
      function_id: mix(calledFunction),
      data: opt(hostileValue),
      traceparent: opt(mix(fc.string({ maxLength: 60 })), 4),
      baggage: opt(mix(fc.string({ maxLength: 60 })), 4),
      action: opt(mix(fc.oneof(fc.constant({ type: 'void' }), fc.record({ type: fc.constant('enqueue'), queue: mix(word) }))), 3),
      timeout_ms: opt(mix(fc.integer({ min: 1, max: 3000 })), 3),
    }),
  },
  fc.record({
    type: fc.constant('registerfunction'),
    id: mix(registeredId),
    description: opt(mix(fc.string({ maxLength: 40 }))),
    request_format: opt(hostileValue),
    response_format: opt(hostileValue),
    metadata: opt(mix(fc.dictionary(fc.oneof(fc.constantFrom(...PROTO_KEYS), word), hostileValue, { maxKeys: 3 }))),
    invocation: rare(hostileValue, 6),
  }),
  fc.record({ type: fc.constant('unregisterfunction'), id: mix(registeredId) }),
  {
    weight: 4,
    arbitrary: fc.record({
      type: fc.constant('registertrigger'),
      id: mix(triggerId),
      trigger_type: mix(triggerType),
      function_id: mix(triggerFunction),
      config: opt(config, 8),
      metadata: opt(mix(fc.dictionary(word, hostileValue, { maxKeys: 2 }))),
    }),
  },
  fc.record({ type: fc.constant('unregistertrigger'), id: mix(triggerId), trigger_type: opt(hostileValue) }),
  fc.record({ type: fc.constant('registertriggertype'), id: mix(providedType), description: opt(hostileValue), trigger_request_format: opt(hostileValue) }),
  fc.record({ type: fc.constant('unregistertriggertype'), id: mix(providedType) }),
  fc.record({
    type: fc.constant('registerservice'),
    id: mix(word),
    name: opt(hostileValue),
    description: opt(hostileValue),
    parent_service_id: opt(hostileValue),
  }),
  fc.record({
    type: fc.constant('invocationresult'),
    invocation_id: mix(fc.uuid()),
    function_id: opt(hostileValue),
    result: opt(hostileValue),
    error: opt(hostileValue),
  }),
  fc.record({ type: fc.constant('triggerregistrationresult'), id: mix(triggerId), error: opt(hostileValue), parked: opt(hostileValue) }),
  fc.record({ type: fc.constantFrom('ping', 'pong') }),
  fc.record({ type: hostileValue, id: opt(hostileValue) }),
);

/** A hostile frame as text: undefined fields dropped, extra (prototype) keys, and sometimes a deeply nested field. */
export const hostileFrameText: fc.Arbitrary<string> = fc
  .tuple(
    hostileFrame,
    fc.array(fc.tuple(fc.oneof(fc.constantFrom(...PROTO_KEYS, 'message_type'), word), hostileValue), { maxLength: 2 }),
    rare(fc.tuple(fc.constantFrom('config', 'data', 'metadata', 'result'), fc.integer({ min: 200, max: 400 }), fc.boolean()), 6),
  )
  .map(([frame, extra, deep]) => {
    const out: Frame = {};
    for (const [k, v] of Object.entries(frame)) if (v !== undefined) withKey(out, k, v);
    for (const [k, v] of extra) withKey(out, k, v);
    if (!deep) return JSON.stringify(out);
    const [field, depth, objects] = deep;
    delete out[field];
    const text = JSON.stringify(out);
    return `${text.slice(0, -1)}${text.length > 2 ? ',' : ''}"${field}":${nestedText(depth, objects)}}`;
  });

// ---------------------------------------------------------------------------------------------
// The oracle
// ---------------------------------------------------------------------------------------------

/** Error codes the engine may answer an accepted (decoded) frame of a type with. */
const REFUSALS: Record<string, readonly string[]> = {
  registerfunction: ['function_id_reserved', 'function_not_invokable'],
  registertriggertype: ['trigger_type_reserved', 'trigger_type_taken'],
  unregistertrigger: ['trigger_not_owned'],
};

/** What the engine owes a client for the frames it sent, in the order sent. */
export interface Expected {
  /** `invocationresult` frames owed, by invocation id (a count: a hostile batch may repeat an id). */
  results: Map<string, number>;
  /** `invalid_frame` / `invalid_function_id` `error` frames owed, in order. */
  frameErrors: string[];
  /** `triggerregistrationresult` frames owed, by trigger id. */
  triggerResults: Map<string, number>;
  pongs: number;
  /** How many `error` frames of each refusal code may come (frames the engine may refuse after decoding). */
  mayRefuse: Map<string, number>;
  /** Refusals owed to registerfunction frames with `invocation` (`function_not_invokable`, or `function_id_reserved` for a reserved id). */
  notInvokable: number;
  /**
   * Trigger types the batch registers as their provider. A hostile id can be both such a type and the
   * type of one of the batch's triggers (`__proto__`, say): the engine then forwards that trigger's
   * `registertrigger` to this client, as to any provider of its type.
   */
  providedTypes: Set<string>;
}

const bump = (m: Map<string, number>, k: string, by = 1) => m.set(k, (m.get(k) ?? 0) + by);

export function expectedAnswers(texts: readonly string[]): Expected {
  const e: Expected = {
    results: new Map(),
    frameErrors: [],
    triggerResults: new Map(),
    pongs: 0,
    mayRefuse: new Map(),
    notInvokable: 0,
    providedTypes: new Set(),
  };
  for (const text of texts) {
    const d = decodeWorkerFrame(text);
    if (!d.ok) {
      if (d.invocationId !== undefined) bump(e.results, d.invocationId);
      else e.frameErrors.push(d.code);
      continue;
    }
    const m = d.message as Frame;
    switch (m.type) {
      case 'invokefunction':
        if (m.invocation_id && m.action?.type !== 'void') bump(e.results, m.invocation_id);
        break;
      case 'registertrigger':
        bump(e.triggerResults, m.id);
        break;
      case 'ping':
        e.pongs++;
        break;
      case 'registerfunction':
        if (m.invocation !== undefined) e.notInvokable++;
        break;
      case 'registertriggertype':
        e.providedTypes.add(m.id);
        break;
    }
    for (const code of REFUSALS[m.type] ?? []) bump(e.mayRefuse, code);
  }
  return e;
}

/** True once every owed answer has arrived (more may still be wrong: see `answerProblems`). */
export function allAnswered(e: Expected, received: readonly Frame[]): boolean {
  const results = received.filter((f) => f.type === 'invocationresult').length;
  const triggers = received.filter((f) => f.type === 'triggerregistrationresult').length;
  const owedResults = [...e.results.values()].reduce((a, b) => a + b, 0);
  const owedTriggers = [...e.triggerResults.values()].reduce((a, b) => a + b, 0);
  return results >= owedResults && triggers >= owedTriggers;
}

/**
 * What is wrong with `received` (the frames after `workerregistered`, up to and including the
 * barrier's pong) as the answer to the frames `e` was made from; empty when nothing is.
 */
export function answerProblems(e: Expected, received: readonly Frame[]): string[] {
  const problems: string[] = [];
  const results = new Map<string, number>();
  const triggers = new Map<string, number>();
  const frameErrors: string[] = [];
  const refusals = new Map<string, number>();
  let pongs = 0;
  for (const f of received) {
    switch (f.type) {
      case 'invocationresult':
        bump(results, String(f.invocation_id));
        break;
      case 'triggerregistrationresult':
        bump(triggers, String(f.id));
        break;
      case 'pong':
        pongs++;
        break;
      case 'error': {
        const code = String(f.error?.code);
        if (code === 'invalid_frame' || code === 'invalid_function_id') frameErrors.push(code);
        else bump(refusals, code);
        break;
      }
      case 'invokefunction':
        break; // a trigger firing at a function this client registered: allowed, never awaited
      case 'registertrigger':
        // A trigger of a type this client provides, forwarded to it (see providedTypes): allowed, never awaited.
        if (!e.providedTypes.has(String(f.trigger_type))) problems.push(`unexpected frame ${JSON.stringify(f).slice(0, 200)}`);
        break;
      default:
        problems.push(`unexpected frame ${JSON.stringify(f).slice(0, 200)}`);
    }
  }
  const same = (a: Map<string, number>, b: Map<string, number>) => a.size === b.size && [...a].every(([k, n]) => b.get(k) === n);
  if (!same(results, e.results)) problems.push(`invocationresult ids ${show(results)}, expected ${show(e.results)}`);
  if (!same(triggers, e.triggerResults)) problems.push(`triggerregistrationresult ids ${show(triggers)}, expected ${show(e.triggerResults)}`);
  if (frameErrors.join() !== e.frameErrors.join()) problems.push(`error frames [${frameErrors.join()}], expected [${e.frameErrors.join()}]`);
  if (pongs !== e.pongs + 1) problems.push(`${pongs} pongs, expected ${e.pongs + 1}`);
  for (const [code, n] of refusals) {
    if (n > (e.mayRefuse.get(code) ?? 0)) problems.push(`${n} error frame(s) with code ${code}, at most ${e.mayRefuse.get(code) ?? 0} expected`);
  }
  // A registerfunction with `invocation` is refused, as not invokable or (checked first) as reserved.
  const registrationRefusals = (refusals.get('function_not_invokable') ?? 0) + (refusals.get('function_id_reserved') ?? 0);
  if (registrationRefusals < e.notInvokable) {
    problems.push(`${registrationRefusals} function_not_invokable/function_id_reserved errors, expected at least ${e.notInvokable}`);
  }
  return problems;
}

const show = (m: Map<string, number>) => `{${[...m].map(([k, n]) => `${JSON.stringify(k).slice(0, 80)}×${n}`).join(', ')}}`;
