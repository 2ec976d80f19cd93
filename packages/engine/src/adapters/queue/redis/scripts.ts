import type { Reply } from './packed.js';

/**
 * The Lua scripts of the redis queue adapter: every change that touches more than one key is one script,
 * so it is atomic across every engine on the Redis. Run through `defineScripts` (shared/redis-scripts.ts: EVALSHA,
 * falling back to EVAL once after a SCRIPT FLUSH or a restart).
 *
 * The keys of a queue, after its base `b` (KEYS[1], see keys.ts):
 *
 * | key            | type   | holds                                                                  |
 * | -------------- | ------ | ---------------------------------------------------------------------- |
 * | `:m:<id>`      | hash   | one message: `d` its JSON (data, publishedAt, trace context, function), |
 * |                |        | `a` deliveries so far (a defer gives one back), `g` its FIFO group,     |
 * |                |        | `t` the token of its current delivery (a late settle does not match),  |
 * |                |        | `e` the error of its last attempt once dead                            |
 * | `:wait`        | list   | ungrouped waiting ids, oldest first (retries go back to the front)      |
 * | `:delayed`     | zset   | id → due ms: published with a delay                                    |
 * | `:retry`       | zset   | id → due ms: ungrouped retries and defers (back to the front when due)  |
 * | `:lease`       | zset   | id → lease expiry ms: in flight                                         |
 * | `:gdelay`      | zset   | group → due ms: busy until its head's retry is due                      |
 * | `:due`         | string | no score in the four sets above is lower (absent: unknown)              |
 * | `:seq`         | string | the last delivery token                                                 |
 * | `:g:<group>`   | list   | a group's ids in order; while the group is busy its head is in flight   |
 * | `:gstate`      | hash   | group → `q` (in `:ready`) or `b` (busy); absent when the group is empty |
 * | `:ready`       | list   | groups whose head may go now: a busy group is never in it               |
 * | `:dead`        | zset   | id → failure time in µs (newest first by score)                         |
 * | `:idle`        | string | set when a fetch left room unfilled: the next deliverable message wakes |
 *
 * The hot path costs few Redis calls per message (each call inside a script costs about a microsecond of
 * the server's single thread): a publish writes the message's hash and pushes the ids of a batch in one
 * call; a fetch pops its ids in one call, reads and marks each message, and leases them all with one ZADD;
 * an ack checks the token and deletes, the leases of a batch going in one ZREM. What is due (delays,
 * retries, expired leases) is looked for only once `:due` has passed, so a busy queue reads one key for it.
 *
 * Times come from Redis (`TIME`), so engines with skewed clocks agree on what is due. Scores are written as
 * integers (`%.0f`): Lua would print large numbers with 14 significant digits. Scripts reply with arrays,
 * strings and integers only (never nil or false, which RESP2 and RESP3 render differently); an optional
 * group travels as `=group`, or `''` for none, except in the packed texts of the hot path (packed.ts), where
 * it is the last field of a message's head when there is one.
 */

/** Helpers shared by the queue scripts. */
const PRELUDE = `
if redis.replicate_commands then pcall(redis.replicate_commands) end
local function num(n) return string.format('%.0f', n) end
local NEVER = 1e15
local function clock()
  local t = redis.call('TIME')
  local us = tonumber(t[1]) * 1000000 + tonumber(t[2])
  return math.floor(us / 1000), us
end
local function mkey(b, id) return b .. ':m:' .. id end
-- Runs a variadic command over a list, in slices (Lua's unpack has a limit).
local function each_slice(cmd, key, list)
  for i = 1, #list, 500 do redis.call(cmd, key, unpack(list, i, math.min(i + 499, #list))) end
end
-- :due, as this script knows it (read once per queue): -1 when unknown, so the next promote looks.
local dues = {}
local function due_of(b)
  local d = dues[b]
  if d == nil then
    d = tonumber(redis.call('GET', b .. ':due') or '-1')
    dues[b] = d
  end
  return d
end
local function lower_due(b, at)
  if at < due_of(b) then
    dues[b] = at
    redis.call('SET', b .. ':due', num(at))
  end
end
local function schedule(b, set, at, member)
  redis.call('ZADD', b .. set, num(at), member)
  lower_due(b, at)
end
local function queue_group(b, g)
  redis.call('HSET', b .. ':gstate', g, 'q')
  redis.call('RPUSH', b .. ':ready', g)
end
local function append(b, id, g)
  if g then
    redis.call('RPUSH', b .. ':g:' .. g, id)
    if not redis.call('HGET', b .. ':gstate', g) then queue_group(b, g) end
  else
    redis.call('RPUSH', b .. ':wait', id)
  end
end
local function release(b, g, id)
  local gk = b .. ':g:' .. g
  if redis.call('LINDEX', gk, 0) == id then redis.call('LPOP', gk) else redis.call('LREM', gk, 1, id) end
  if redis.call('LLEN', gk) > 0 then
    queue_group(b, g)
    return true
  end
  redis.call('HDEL', b .. ':gstate', g)
  return false
end
local function unblock(b, g)
  if redis.call('HGET', b .. ':gstate', g) == 'b' then queue_group(b, g) end
end
-- Stores a message. Ungrouped ones due now are collected in waits[b] (queues in order of first use in
-- waits itself) for push_waits, which appends each queue's in one call.
-- Messages this script stored, by key: a fetch in the same script need not read them back.
local fresh = {}
local function store(b, id, body, g, delay, now, waits)
  local mk = mkey(b, id)
  if g then redis.call('HSET', mk, 'd', body, 'g', g) else redis.call('HSET', mk, 'd', body) end
  fresh[mk] = body
  if delay > 0 then
    schedule(b, ':delayed', now + delay, id)
    -- A new due time: every consumer learns it (a wake-up fetches, and its reply tells when).
    redis.call('PUBLISH', b .. ':wake', '')
  elseif g then
    append(b, id, g)
  else
    local w = waits[b]
    if not w then
      w = {}
      waits[b] = w
      waits[#waits + 1] = b
    end
    w[#w + 1] = id
  end
end
local function push_waits(waits)
  for _, b in ipairs(waits) do each_slice('RPUSH', b .. ':wait', waits[b]) end
end
-- Wakes the queue's consumers when one of them left room unfilled at its last fetch (\`:idle\`, see take)
-- and something is deliverable now. A busy queue (every consumer full, or fetching anyway) sends none.
local function wake(b)
  if redis.call('EXISTS', b .. ':idle') == 1 and (redis.call('LLEN', b .. ':wait') > 0 or redis.call('LLEN', b .. ':ready') > 0) then
    redis.call('DEL', b .. ':idle')
    redis.call('PUBLISH', b .. ':wake', '')
  end
end
-- What is due by now: publish delays to the back, retries to the front, expired leases back to waiting
-- (the consumer died or hung: the attempt is counted when delivered again), groups whose retry is due.
-- Nothing before :due. At most LIMIT of each per call, so one call never runs long; the rest goes on the
-- next (:due is then still past).
local LIMIT = 1000
local function promote(b, now)
  if now < due_of(b) then return end
  local due = redis.call('ZRANGEBYSCORE', b .. ':delayed', '-inf', num(now), 'LIMIT', 0, LIMIT)
  for _, id in ipairs(due) do
    redis.call('ZREM', b .. ':delayed', id)
    append(b, id, redis.call('HGET', mkey(b, id), 'g'))
  end
  due = redis.call('ZRANGEBYSCORE', b .. ':retry', '-inf', num(now), 'LIMIT', 0, LIMIT)
  for i = #due, 1, -1 do
    redis.call('ZREM', b .. ':retry', due[i])
    redis.call('LPUSH', b .. ':wait', due[i])
  end
  due = redis.call('ZRANGEBYSCORE', b .. ':lease', '-inf', num(now), 'LIMIT', 0, LIMIT)
  for i = #due, 1, -1 do
    local id = due[i]
    local mk = mkey(b, id)
    redis.call('ZREM', b .. ':lease', id)
    local g = redis.call('HGET', mk, 'g')
    redis.call('HDEL', mk, 't')
    if g then unblock(b, g) else redis.call('LPUSH', b .. ':wait', id) end
  end
  due = redis.call('ZRANGEBYSCORE', b .. ':gdelay', '-inf', num(now), 'LIMIT', 0, LIMIT)
  for _, g in ipairs(due) do
    redis.call('ZREM', b .. ':gdelay', g)
    unblock(b, g)
  end
  local d = NEVER
  for _, k in ipairs({':delayed', ':retry', ':lease', ':gdelay'}) do
    local first = redis.call('ZRANGE', b .. k, 0, 0, 'WITHSCORES')
    if first[2] then d = math.min(d, tonumber(first[2])) end
  end
  dues[b] = d
  redis.call('SET', b .. ':due', num(d))
end
-- A consumer's fetch: moves what is due to waiting (promote), then leases up to n messages, alternating
-- between ready groups and ungrouped messages so neither starves the other (ungrouped ones are popped in
-- runs). Appends a fetch segment to reply: ms until the next due time or -1, the count, then per message
-- two strings, its head \`id,attempt,token\` (then \`,group\` when it has one: the rest of the text) and its
-- body. Room left unfilled marks the queue idle: the next message to become deliverable wakes its consumers.
local function take(b, n, lease, now, reply)
  local at = #reply + 1
  reply[at] = -1
  reply[at + 1] = 0
  if n <= 0 then return end
  promote(b, now)
  local ready, waiting = redis.call('LLEN', b .. ':ready'), redis.call('LLEN', b .. ':wait')
  local ids, bodies, attempts, groups = {}, {}, {}, {}
  local function add(id, g)
    local mk = mkey(b, id)
    local m = fresh[mk]
    if m then m = {m, 0} else m = redis.call('HMGET', mk, 'd', 'a') end
    if m[1] then
      local k = #ids + 1
      ids[k], bodies[k], attempts[k], groups[k] = id, m[1], (tonumber(m[2]) or 0) + 1, g or false
    elseif g and release(b, g, id) then
      ready = ready + 1
    end
  end
  while #ids < n do
    if ready > 0 and (waiting == 0 or ready >= waiting) then
      ready = ready - 1
      local g = redis.call('LPOP', b .. ':ready')
      local id = redis.call('LINDEX', b .. ':g:' .. g, 0)
      if id then
        redis.call('HSET', b .. ':gstate', g, 'b')
        add(id, g)
      else
        redis.call('HDEL', b .. ':gstate', g)
      end
    elseif waiting > 0 then
      local k = math.min(n - #ids, waiting)
      if ready > 0 then k = math.min(k, waiting - ready) end
      local popped = redis.call('LRANGE', b .. ':wait', 0, k - 1)
      redis.call('LTRIM', b .. ':wait', k, -1)
      waiting = waiting - k
      for _, id in ipairs(popped) do add(id, nil) end
    else
      break
    end
  end
  local taken = #ids
  reply[at + 1] = taken
  if taken > 0 then
    local token = redis.call('INCRBY', b .. ':seq', taken) - taken
    local until_ = now + lease
    local score = num(until_)
    local leases = {}
    for k = 1, taken do
      token = token + 1
      redis.call('HSET', mkey(b, ids[k]), 'a', attempts[k], 't', token)
      leases[#leases + 1] = score
      leases[#leases + 1] = ids[k]
      if groups[k] then
        reply[#reply + 1] = ids[k] .. ',' .. attempts[k] .. ',' .. token .. ',' .. groups[k]
      else
        reply[#reply + 1] = ids[k] .. ',' .. attempts[k] .. ',' .. token
      end
      reply[#reply + 1] = bodies[k]
    end
    each_slice('ZADD', b .. ':lease', leases)
    lower_due(b, until_)
  end
  if taken < n then redis.call('SET', b .. ':idle', '1') end
  local d = due_of(b)
  if d < NEVER then reply[at] = math.max(0, d - now) end
end
`;

/** Helpers of the topic scripts: a topic's live bindings (holders whose hold has not lapsed). */
const TOPIC_PRELUDE = `
local function queue_of(member) return string.sub(member, string.find(member, ':', 1, true) + 1) end
local function bindings(hk, ok, now)
  local seen, queues = {}, {}
  for _, m in ipairs(redis.call('ZRANGEBYSCORE', hk, '(' .. num(now), '+inf')) do
    local q = queue_of(m)
    if not seen[q] then
      seen[q] = true
      queues[#queues + 1] = q
    end
  end
  table.sort(queues)
  local list, parts = {}, {}
  for _, q in ipairs(queues) do
    local o = redis.call('HGET', ok, q) or '{}'
    list[#list + 1] = q
    list[#list + 1] = o
    parts[#parts + 1] = #q .. ':' .. q .. #o .. ':' .. o
  end
  if #list == 0 then return '', list end
  return redis.sha1hex(table.concat(parts)), list
end
local function prune(hk, ok, now)
  redis.call('ZREMRANGEBYSCORE', hk, '-inf', num(now))
  local live, any = {}, false
  for _, m in ipairs(redis.call('ZRANGE', hk, 0, -1)) do
    live[queue_of(m)] = true
    any = true
  end
  for _, q in ipairs(redis.call('HKEYS', ok)) do
    if not live[q] then redis.call('HDEL', ok, q) end
  end
  return any
end
`;

/**
 * Publishes of one turn of an engine's event loop, in one call (each as PUBLISH or PUBLISH_TOPIC would).
 * All are stored first, then the fetches for idle consumers of the engine run (oldest first, so the first
 * fetch of a queue takes every message the batch put there), then the wake-ups: a batch wakes a queue once.
 *
 * The arguments come packed, a few per message rather than a dozen (every argument costs the engine's
 * client and the server a little: see packed.ts). ARGV: the number k of names, the
 * k names (the holders and options keys of the topics and the bases of the queues in this call), then per
 * publish: its head \`delay ms,count,holders,options,signature\` (holders and options: indexes of names, 0
 * for none, as a named queue has; the signature: the text after the fourth comma), its body, then per
 * queue \`base,n,lease ms,id\` (base: an index of names) with \`,group\` after when it has one (the rest).
 * Reply: per publish, as PUBLISH_TOPIC's (a named queue's: \`{1, 1, segment}\`).
 */
const PUBLISH_MANY = `${PRELUDE}${TOPIC_PRELUDE}
local now = clock()
local names = {}
local k = tonumber(ARGV[1])
names[0] = ''
for n = 1, k do names[n] = ARGV[n + 1] end
local replies, takes, woken, seen, waits = {}, {}, {}, {}, {}
local i = k + 2
while i <= #ARGV do
  local delay, count, h, o, signature = string.match(ARGV[i], '^(%d+),(%d+),(%d+),(%d+),(.*)$')
  delay, count = tonumber(delay), tonumber(count)
  local hk, body = names[tonumber(h)], ARGV[i + 1]
  local reply
  local sig, list = '', nil
  if hk ~= '' then
    local known = seen[hk]
    if not known then
      local s, l = bindings(hk, names[tonumber(o)], now)
      known = {s, l}
      seen[hk] = known
    end
    sig, list = known[1], known[2]
  end
  if hk ~= '' and sig ~= signature then
    reply = {0, sig}
    for _, v in ipairs(list) do reply[#reply + 1] = v end
  else
    reply = {1, count}
    for j = i + 2, i + 1 + count do
      local base, n, lease, id, rest = string.match(ARGV[j], '^(%d+),(%d+),(%d+),([^,]*)(.*)$')
      local b = names[tonumber(base)]
      local g = nil
      if rest ~= '' then g = string.sub(rest, 2) end
      store(b, id, body, g, delay, now, waits)
      takes[#takes + 1] = {reply, b, tonumber(n), tonumber(lease)}
      if not woken[b] then
        woken[b] = true
        woken[#woken + 1] = b
      end
    end
  end
  replies[#replies + 1] = reply
  i = i + 2 + count
end
push_waits(waits)
for _, t in ipairs(takes) do take(t[2], t[3], t[4], now, t[1]) end
for _, b in ipairs(woken) do wake(b) end
return replies`;

/**
 * Takes and releases this engine's holds on bindings. KEYS: topics set. ARGV: mode (`bind` sets the options,
 * `renew` restores them only when gone, `release` lets go), hold ms, prefix, then per hold: encoded topic,
 * member (`instance:queue`), queue, options JSON.
 */
const HOLD = `${PRELUDE}${TOPIC_PRELUDE}
local now = clock()
local mode, ttl, prefix = ARGV[1], tonumber(ARGV[2]), ARGV[3]
for i = 4, #ARGV, 4 do
  local t = ARGV[i]
  local hk, ok = prefix .. ':t:' .. t .. ':holders', prefix .. ':t:' .. t .. ':opts'
  if mode == 'release' then
    redis.call('ZREM', hk, ARGV[i + 1])
    if not prune(hk, ok, now) then redis.call('SREM', KEYS[1], t) end
  else
    prune(hk, ok, now)
    redis.call('ZADD', hk, num(now + ttl), ARGV[i + 1])
    if mode == 'bind' then redis.call('HSET', ok, ARGV[i + 2], ARGV[i + 3]) else redis.call('HSETNX', ok, ARGV[i + 2], ARGV[i + 3]) end
    redis.call('SADD', KEYS[1], t)
  end
end
return 1`;

/** Topics with live bindings: `{encoded topic, count, queue…, …}`. KEYS: topics set. ARGV: prefix. */
const TOPICS = `${PRELUDE}${TOPIC_PRELUDE}
local now = clock()
local reply = {}
for _, t in ipairs(redis.call('SMEMBERS', KEYS[1])) do
  local hk, ok = ARGV[1] .. ':t:' .. t .. ':holders', ARGV[1] .. ':t:' .. t .. ':opts'
  local _, list = bindings(hk, ok, now)
  if #list == 0 and not prune(hk, ok, now) then redis.call('SREM', KEYS[1], t) end
  if #list > 0 then
    reply[#reply + 1] = t
    reply[#reply + 1] = #list / 2
    for i = 1, #list, 2 do reply[#reply + 1] = list[i] end
  end
end
return reply`;

/**
 * One consumer's fetch (see take). Reply: a fetch segment. KEYS: base. ARGV: n, lease ms.
 */
const FETCH = `${PRELUDE}
local reply = {}
take(KEYS[1], tonumber(ARGV[1]), tonumber(ARGV[2]), clock(), reply)
return reply`;

/**
 * Settles deliveries (each ignored unless it is still the message's current delivery: token), then fetches
 * up to n messages into the room they made (0: none). Reply: a fetch segment.
 * KEYS: base, dead queues set. ARGV: n, lease ms, encoded queue name, then per settle one text
 * \`id,token,ack|retry|defer|dead,delay ms,error\` (the error: the rest of the text).
 */
const SETTLE = `${PRELUDE}
local b = KEYS[1]
local now, us = clock()
-- A retry or defer for later is a new due time: every consumer learns it.
local announce = false
local settled, acked = {}, {}
for i = 4, #ARGV do
  local id, token, kind, delay, err = string.match(ARGV[i], '^([^,]*),([^,]*),([^,]*),(%d+),(.*)$')
  local mk = mkey(b, id)
  local m = redis.call('HMGET', mk, 't', 'g')
  if m[1] == token then
    settled[#settled + 1] = id
    local g = m[2]
    if kind == 'ack' then
      acked[#acked + 1] = mk
      if g then release(b, g, id) end
    elseif kind == 'dead' then
      redis.call('HDEL', mk, 't')
      redis.call('HSET', mk, 'e', err)
      redis.call('ZADD', b .. ':dead', num(us), id)
      redis.call('SADD', KEYS[2], ARGV[3])
      if g then release(b, g, id) end
    else
      redis.call('HDEL', mk, 't')
      if kind == 'defer' then redis.call('HINCRBY', mk, 'a', -1) end
      delay = tonumber(delay)
      if delay > 0 then announce = true end
      if g then
        if delay > 0 then schedule(b, ':gdelay', now + delay, g) else unblock(b, g) end
      elseif delay > 0 then
        schedule(b, ':retry', now + delay, id)
      else
        redis.call('LPUSH', b .. ':wait', id)
      end
    end
  end
end
if #settled > 0 then each_slice('ZREM', b .. ':lease', settled) end
if #acked > 0 then
  for k = 1, #acked, 500 do redis.call('DEL', unpack(acked, k, math.min(k + 499, #acked))) end
end
local reply = {}
take(b, tonumber(ARGV[1]), tonumber(ARGV[2]), now, reply)
if announce then redis.call('PUBLISH', b .. ':wake', '') else wake(b) end
return reply`;

/** `{waiting, in flight, delayed, dead}` as of one moment (what is due counted as waiting, even with no consumer). KEYS: base. */
const STATS = `${PRELUDE}
local b = KEYS[1]
promote(b, clock())
local waiting = redis.call('LLEN', b .. ':wait')
local st = redis.call('HGETALL', b .. ':gstate')
for i = 1, #st, 2 do
  waiting = waiting + redis.call('LLEN', b .. ':g:' .. st[i])
  if st[i + 1] == 'b' then waiting = waiting - 1 end
end
local delayed = redis.call('ZCARD', b .. ':delayed') + redis.call('ZCARD', b .. ':retry') + redis.call('ZCARD', b .. ':gdelay')
return {waiting, redis.call('ZCARD', b .. ':lease'), delayed, redis.call('ZCARD', b .. ':dead')}`;

/**
 * Waiting messages: `{grouped (0/1), then per message: id, body, group}`. Without groups, the page of the
 * list; with groups every waiting message (the caller orders them by publish time and pages). KEYS: base.
 * ARGV: offset, limit.
 */
const PEEK = `${PRELUDE}
local b = KEYS[1]
promote(b, clock())
local st = redis.call('HGETALL', b .. ':gstate')
local reply = {0}
local function add(ids, g)
  for i, id in ipairs(ids) do
    reply[#reply + 1] = id
    reply[#reply + 1] = redis.call('HGET', mkey(b, id), 'd') or 'null'
    reply[#reply + 1] = g
  end
end
if #st == 0 then
  local from = tonumber(ARGV[1])
  add(redis.call('LRANGE', b .. ':wait', from, from + tonumber(ARGV[2]) - 1), '')
  return reply
end
reply[1] = 1
add(redis.call('LRANGE', b .. ':wait', 0, -1), '')
for i = 1, #st, 2 do
  local first = 0
  if st[i + 1] == 'b' then first = 1 end
  add(redis.call('LRANGE', b .. ':g:' .. st[i], first, -1), '=' .. st[i])
end
return reply`;

/** Removes a waiting message (not one in flight, delayed or dead): 1, or 0 when there is none. KEYS: base. ARGV: id. */
const REMOVE = `${PRELUDE}
local b, id = KEYS[1], ARGV[1]
if redis.call('LREM', b .. ':wait', 1, id) == 0 then
  local g = redis.call('HGET', mkey(b, id), 'g')
  if not g then return 0 end
  local gk = b .. ':g:' .. g
  if redis.call('HGET', b .. ':gstate', g) == 'b' and redis.call('LINDEX', gk, 0) == id then return 0 end
  if redis.call('LREM', gk, 1, id) == 0 then return 0 end
  if redis.call('LLEN', gk) == 0 then
    redis.call('HDEL', b .. ':gstate', g)
    redis.call('LREM', b .. ':ready', 1, g)
  end
end
redis.call('DEL', mkey(b, id))
return 1`;

/** Dead letters newest first: per letter id, body, error, attempts, failure µs, group. KEYS: base. ARGV: offset, limit. */
const DEAD_LETTERS = `
local b = KEYS[1]
local from = tonumber(ARGV[1])
local page = redis.call('ZREVRANGE', b .. ':dead', from, from + tonumber(ARGV[2]) - 1, 'WITHSCORES')
local reply = {}
for i = 1, #page, 2 do
  local id = page[i]
  local m = redis.call('HMGET', b .. ':m:' .. id, 'd', 'e', 'a', 'g')
  reply[#reply + 1] = id
  reply[#reply + 1] = m[1] or 'null'
  reply[#reply + 1] = m[2] or ''
  reply[#reply + 1] = m[3] or '0'
  reply[#reply + 1] = page[i + 1]
  if m[4] then reply[#reply + 1] = '=' .. m[4] else reply[#reply + 1] = '' end
end
return reply`;

/**
 * Moves dead letters back to waiting with their attempts reset (oldest failure first): all of them
 * (ARGV[2] = `all`), or the one with id ARGV[3]. Replies how many. KEYS: base, dead queues set. ARGV[1]: encoded queue name.
 */
const REDRIVE = `${PRELUDE}
local b = KEYS[1]
local ids
if ARGV[2] == 'all' then
  ids = redis.call('ZRANGE', b .. ':dead', 0, -1)
elseif redis.call('ZSCORE', b .. ':dead', ARGV[3]) then
  ids = {ARGV[3]}
else
  return 0
end
for _, id in ipairs(ids) do
  redis.call('ZREM', b .. ':dead', id)
  local mk = mkey(b, id)
  redis.call('HDEL', mk, 'e', 'a')
  append(b, id, redis.call('HGET', mk, 'g'))
end
if redis.call('ZCARD', b .. ':dead') == 0 then redis.call('SREM', KEYS[2], ARGV[1]) end
if #ids > 0 then redis.call('PUBLISH', b .. ':wake', '') end
return #ids`;

/** Deletes a dead letter: 1, or 0 when there is none. KEYS: base, dead queues set. ARGV: encoded queue name, id. */
const DISCARD = `${PRELUDE}
local b, id = KEYS[1], ARGV[2]
if redis.call('ZREM', b .. ':dead', id) == 0 then return 0 end
redis.call('DEL', mkey(b, id))
if redis.call('ZCARD', b .. ':dead') == 0 then redis.call('SREM', KEYS[2], ARGV[1]) end
return 1`;

/** Queues with dead letters: `{encoded name, count, …}`. KEYS: dead queues set. ARGV: prefix. */
const DEAD_QUEUES = `
local reply = {}
for _, q in ipairs(redis.call('SMEMBERS', KEYS[1])) do
  local n = redis.call('ZCARD', ARGV[1] .. ':q:' .. q .. ':dead')
  if n > 0 then
    reply[#reply + 1] = q
    reply[#reply + 1] = n
  end
end
return reply`;

/** Every script, by the command name it is registered under, with how many of its arguments are keys. */
export const QUEUE_SCRIPTS = {
  flintQueuePublishMany: { numberOfKeys: 0, lua: PUBLISH_MANY },
  flintQueueHold: { numberOfKeys: 1, lua: HOLD },
  flintQueueTopics: { numberOfKeys: 1, lua: TOPICS },
  flintQueueFetch: { numberOfKeys: 1, lua: FETCH },
  flintQueueSettle: { numberOfKeys: 2, lua: SETTLE },
  flintQueueStats: { numberOfKeys: 1, lua: STATS },
  flintQueuePeek: { numberOfKeys: 1, lua: PEEK },
  flintQueueRemove: { numberOfKeys: 1, lua: REMOVE },
  flintQueueDeadLetters: { numberOfKeys: 1, lua: DEAD_LETTERS },
  flintQueueRedrive: { numberOfKeys: 2, lua: REDRIVE },
  flintQueueDiscard: { numberOfKeys: 2, lua: DISCARD },
  flintQueueDeadQueues: { numberOfKeys: 1, lua: DEAD_QUEUES },
} as const;

type Arg = string | number;

/** The script commands (`defineScripts` makes one method per script). */
export interface QueueScripts {
  flintQueuePublishMany(...args: Arg[]): Promise<Reply[]>;
  flintQueueHold(topics: string, ...args: Arg[]): Promise<number>;
  flintQueueTopics(topics: string, prefix: string): Promise<Reply>;
  flintQueueFetch(base: string, n: number, leaseMs: number): Promise<Reply>;
  flintQueueSettle(base: string, deadQueues: string, ...args: Arg[]): Promise<Reply>;
  flintQueueStats(base: string): Promise<number[]>;
  flintQueuePeek(base: string, offset: number, limit: number): Promise<Reply>;
  flintQueueRemove(base: string, id: string): Promise<number>;
  flintQueueDeadLetters(base: string, offset: number, limit: number): Promise<string[]>;
  flintQueueRedrive(base: string, deadQueues: string, queue: string, mode: 'all' | 'one', id: string): Promise<number>;
  flintQueueDiscard(base: string, deadQueues: string, queue: string, id: string): Promise<number>;
  flintQueueDeadQueues(deadQueues: string, prefix: string): Promise<Reply>;
}
