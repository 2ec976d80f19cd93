import { createHash } from 'node:crypto';
import type { Command } from 'ioredis';

/** An argument of a Redis command as the adapters pass them: never an array. */
export type RedisArg = string | number;

/** Sends one command with its arguments as given (RedisConnection.send). */
export type SendCommand = <T>(name: string, args: RedisArg[]) => Promise<T>;

/**
 * A subclass of ioredis's Command that takes its arguments as given. ioredis's own constructor flattens
 * every command's arguments (one level, for the `client.sadd(key, [a, b])` form) with
 * `Array.prototype.flat`, which V8 in Node 20 runs element by element through its runtime: about 1 µs
 * for a command of two arguments and 2 µs for one of ten, more than the rest of sending the command. The
 * adapters never pass arrays: the base class gets an empty list, and `args` is set after it as the
 * base's constructor would leave them, numbers as decimal text. (What the base's constructor also
 * does, and this one does not need: ioredis's argument transformers, which exist only for the object
 * forms of HSET, HMSET, MSET and MSETNX.) Made from the Command class of the ioredis module loaded at run time
 * (ioredis is loaded only when a Redis-backed adapter opens).
 */
export function flatCommandClass(base: typeof Command): FlatCommandClass {
  // One class for every connection (the same ioredis module): the call sites that make commands stay monomorphic.
  if (made?.base === base) return made.flat;
  const flat = class FlatCommand extends base {
    constructor(name: string, args: RedisArg[]) {
      // Replies as strings, like the client's own methods (ioredis reads them as buffers otherwise).
      super(name, [], { replyEncoding: 'utf8' });
      const text: string[] = new Array<string>(args.length);
      for (let i = 0; i < args.length; i++) text[i] = String(args[i]);
      this.args = text;
    }
  };
  made = { base, flat };
  return flat;
}

type FlatCommandClass = new (name: string, args: RedisArg[]) => Command;
let made: { base: typeof Command; flat: FlatCommandClass } | undefined;

/** A Lua script: how many of its arguments are keys, and its text. */
export interface ScriptDefinition {
  numberOfKeys: number;
  lua: string;
}

/**
 * What ioredis's `defineCommand` adds to a client, on an object of its own: one method per script,
 * taking the keys then the other arguments, that runs it by EVALSHA and, when Redis answers NOSCRIPT (a
 * new server, or after SCRIPT FLUSH), by EVAL, which loads it again.
 */
export function defineScripts<T>(send: SendCommand, definitions: Readonly<Record<string, ScriptDefinition>>): T {
  const methods: Record<string, (...args: RedisArg[]) => Promise<unknown>> = {};
  for (const [name, { numberOfKeys, lua }] of Object.entries(definitions)) {
    const sha = createHash('sha1').update(lua).digest('hex');
    methods[name] = (...args: RedisArg[]) =>
      send('evalsha', [sha, numberOfKeys, ...args]).catch((err: unknown) => {
        if (!(err instanceof Error) || !err.message.includes('NOSCRIPT')) throw err;
        return send('eval', [lua, numberOfKeys, ...args]);
      });
  }
  return methods as T;
}
