/**
 * `redactConfig` and `redactUrl` (src/lib/redact.ts): what `engine::config::get` shows an operator of a
 * module's config. Values under secret-looking keys become `***`, URLs lose their password; everything
 * else comes back as it was, and the input is not changed.
 *
 * The helpers are not part of the package's public entry, so this file imports the built module
 * (dist/, the same copy `@flint/engine` loads; run `npx tsc -b` first).
 */
import { describe, expect, it } from 'vitest';
import { redactUrl as redactUrlReexported } from '../../dist/adapters/shared/url-text.js';
import { redactConfig, redactUrl } from '../../dist/lib/redact.js';

describe('redactUrl', () => {
  it('replaces the password, keeps the rest; a URL without one is returned unchanged', () => {
    expect(redactUrl('redis://default:s3cret@127.0.0.1:6379/2')).toBe('redis://default:***@127.0.0.1:6379/2');
    expect(redactUrl('redis://:only-password@cache:6379')).toBe('redis://:***@cache:6379');
    expect(redactUrl('amqps://user:p%40ss@mq.example.com/vhost')).toBe('amqps://user:***@mq.example.com/vhost');
    for (const url of ['redis://127.0.0.1:6379', 'https://user@example.com/x?y=1', 'http://localhost:4318/v1/traces']) expect(redactUrl(url)).toBe(url);
  });

  it('replaces the values of secret-looking query parameters, and leaves the others', () => {
    expect(redactUrl('ws://10.0.0.5:49134/?token=s3cret')).toBe('ws://10.0.0.5:49134/?token=***');
    expect(redactUrl('https://hooks.example.com/x?api_key=k1&user=ann&sig=abc&access_token=t')).toBe(
      'https://hooks.example.com/x?api_key=***&user=ann&sig=***&access_token=***',
    );
    expect(redactUrl('nats://user:pw@nats:4222?auth=x')).toBe('nats://user:***@nats:4222?auth=***');
    expect(redactUrl('https://example.com/search?q=token&page=2')).toBe('https://example.com/search?q=token&page=2');
    // Not a URL the parser takes: the same rules on the text.
    expect(redactUrl('redis://a:b@[bad/?token=t&x=1')).toBe('redis://a:***@[bad/?token=***&x=1');
  });

  it('is still exported from adapters/shared/url-text', () => {
    expect(redactUrlReexported).toBe(redactUrl);
  });
});

describe('redactConfig', () => {
  it('shows values under secret-looking keys as ***, at any depth and in arrays of objects', () => {
    const config = {
      port: 3111,
      auth_token: 'tok-123',
      password: 'pw',
      client_secret: 'cs',
      apiKey: 'k1',
      'api-key': 'k2',
      private_key: 'pem',
      Authorization: 'Bearer x',
      cookie: 'sid=1',
      nested: { deeper: { db_password: 'pw2', name: 'kept' } },
      listeners: [
        { port: 1, secret: 's1' },
        { port: 2, secret: 's2' },
      ],
      pin_token: 1234,
    };
    expect(redactConfig(config)).toEqual({
      port: 3111,
      auth_token: '***',
      password: '***',
      client_secret: '***',
      apiKey: '***',
      'api-key': '***',
      private_key: '***',
      Authorization: '***',
      cookie: '***',
      nested: { deeper: { db_password: '***', name: 'kept' } },
      listeners: [
        { port: 1, secret: '***' },
        { port: 2, secret: '***' },
      ],
      pin_token: '***',
    });
  });

  it('takes the password out of URLs wherever they are; URLs without one and other strings are unchanged', () => {
    const config = {
      adapter: { name: 'redis', config: { redis_url: 'redis://default:s3cret@127.0.0.1:6379', key_prefix: 'flint:' } },
      urls: ['amqp://guest:guest@mq:5672', 'http://collector:4318'],
      endpoint: 'https://otel.example.com/v1/traces',
      text: 'no url here: a:b@c',
    };
    expect(redactConfig(config)).toEqual({
      adapter: { name: 'redis', config: { redis_url: 'redis://default:***@127.0.0.1:6379', key_prefix: 'flint:' } },
      urls: ['amqp://guest:***@mq:5672', 'http://collector:4318'],
      endpoint: 'https://otel.example.com/v1/traces',
      text: 'no url here: a:b@c',
    });
  });

  it('keeps what is not a secret: other scalars, null and absent secrets, booleans, empty objects and arrays', () => {
    const config = {
      n: 0,
      f: 1.5,
      on: true,
      off: false,
      nothing: null,
      token: null,
      password: undefined,
      empty: {},
      list: [],
      cors: { origins: ['*'], credentials: true },
      validate_tokens: false,
    };
    expect(redactConfig(config)).toEqual(config);
    for (const scalar of [null, 0, 'x', true]) expect(redactConfig(scalar)).toBe(scalar);
  });

  it('redacts every item of a list of secrets (an array under a secret-looking key)', () => {
    expect(redactConfig({ api_keys: ['k1', 'k2'], tokens: [['t1'], { label: 'ci', token: 't2' }], secrets: [] })).toEqual({
      api_keys: ['***', '***'],
      tokens: [['***'], { label: 'ci', token: '***' }],
      secrets: [],
    });
  });

  it('returns a copy and leaves the input as it was', () => {
    const config = { auth_token: 't', nested: { url: 'redis://u:p@h:1' }, list: [{ secret: 's' }] };
    const before = structuredClone(config);
    const out = redactConfig(config) as typeof config;
    expect(config).toEqual(before);
    expect(out).not.toBe(config);
    expect(out.nested).not.toBe(config.nested);
    expect(out.list).not.toBe(config.list);
  });
});
