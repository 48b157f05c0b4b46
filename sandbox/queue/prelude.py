"""The Lua helpers pasted before every script of the queue (`sandbox.queue.lua`): Redis scripts cannot
call one another, so what several of them do (the fair queue's lists, token buckets, ending a run) is
written once here. Kept apart from the scripts so each file reads as one thing.
"""

from __future__ import annotations

from sandbox.queue.metrics import BUCKETS

PRELUDE = (
    """
local prefix = ARGV[1]
local function k(...) return prefix .. table.concat({...}, ':') end
local function now()
  local t = redis.call('TIME')
  return tonumber(t[1]) + tonumber(t[2]) / 1e6
end
local GROUP = 'workers'
local BUCKETS = {"""
    + ", ".join(repr(b) for b in BUCKETS)
    + """}

-- The two-level round-robin of server.queue.fairness.FairQueue, on lists: addresses take turns, and
-- browsers within an address; a key exists only while it holds something.
local function fair_keys(pool, addr, browser)
  return k('q', pool, 'addrs'), k('q', pool, 'a', addr), k('q', pool, 'b', addr .. '/' .. browser)
end

local function fair_push(pool, addr, browser, run_id, created)
  local qa, qb, qr = fair_keys(pool, addr, browser)
  if redis.call('RPUSH', qr, run_id) == 1 and redis.call('RPUSH', qb, browser) == 1 then
    redis.call('RPUSH', qa, addr)
  end
  redis.call('ZADD', k('q', pool, 'since'), created, run_id)
end

-- The next run in fair order; with `skip_long`, the next that is not long (`long` in its hash:
-- server.queue.long_runs). One passed over keeps its place: only the served browser and address
-- go to the back of their lists.
local function fair_take(pool, skip_long)
  local qa = k('q', pool, 'addrs')
  for _, addr in ipairs(redis.call('LRANGE', qa, 0, -1)) do
    local qb = k('q', pool, 'a', addr)
    for _, browser in ipairs(redis.call('LRANGE', qb, 0, -1)) do
      local qr = k('q', pool, 'b', addr .. '/' .. browser)
      for _, run_id in ipairs(redis.call('LRANGE', qr, 0, -1)) do
        if not skip_long or redis.call('HGET', k('run', run_id), 'long') ~= '1' then
          redis.call('LREM', qr, 1, run_id)
          redis.call('LREM', qb, 1, browser)
          if redis.call('LLEN', qr) > 0 then redis.call('RPUSH', qb, browser) end
          redis.call('LREM', qa, 1, addr)
          if redis.call('LLEN', qb) > 0 then redis.call('RPUSH', qa, addr) end
          redis.call('ZREM', k('q', pool, 'since'), run_id)
          return run_id
        end
      end
    end
  end
  return nil
end

local function fair_remove(pool, addr, browser, run_id)
  local qa, qb, qr = fair_keys(pool, addr, browser)
  if redis.call('LREM', qr, 0, run_id) == 0 then return 0 end
  if redis.call('LLEN', qr) == 0 then
    redis.call('LREM', qb, 0, browser)
    if redis.call('LLEN', qb) == 0 then redis.call('LREM', qa, 0, addr) end
  end
  redis.call('ZREM', k('q', pool, 'since'), run_id)
  return 1
end

-- The token buckets of server.ratelimit.RateLimiter: a steady rate with some burst; the
-- seconds until a token is there (0: one was taken).
local function bucket(key, per_minute, burst, t)
  if per_minute <= 0 then return 0 end
  local rate = per_minute / 60.0
  local v = redis.call('HMGET', key, 'tokens', 'last')
  local tokens = math.min(burst, (tonumber(v[1]) or burst) + (t - (tonumber(v[2]) or t)) * rate)
  local wait = 0
  if tokens >= 1 then tokens = tokens - 1 else wait = math.ceil((1 - tokens) / rate) end
  redis.call('HSET', key, 'tokens', tokens, 'last', t)
  redis.call('EXPIRE', key, math.ceil(burst / rate) + 60)
  return wait
end

-- One run's tokens from its browser's and its address's buckets: the seconds to wait, or 0.
local function take_tokens(addr, browser, rate, burst, address_rate, address_burst, t)
  return math.max(bucket(k('rate', 'c', addr .. '/' .. browser), tonumber(rate), tonumber(burst), t),
                  bucket(k('rate', 'a', addr), tonumber(address_rate), tonumber(address_burst), t))
end

-- A done run's stream keeps its milestones: the live-only events (progress) are dropped, the rest
-- written back under their own ids, so a follower holding any id it was sent goes on from there.
local function compact_events(ev)
  local entries = redis.call('XRANGE', ev, '-', '+')
  local kept = {}
  for _, e in ipairs(entries) do
    if e[2][1] ~= 'k' or e[2][2] ~= 'progress' then table.insert(kept, e) end
  end
  if #kept == #entries then return end
  redis.call('DEL', ev)
  for _, e in ipairs(kept) do redis.call('XADD', ev, e[1], unpack(e[2])) end
end

local function observe(name, pool, value)
  local h = k('metrics', name, pool)
  for _, bound in ipairs(BUCKETS) do
    if value <= bound then redis.call('HINCRBY', h, tostring(bound), 1) end
  end
  redis.call('HINCRBY', h, '+Inf', 1)
  redis.call('HINCRBYFLOAT', h, 'sum', value)
end

-- The one way a run becomes done: state, result, the `done` event, caps released, counted, expiring.
local function end_run(run_id, result, status, failure)
  local rk = k('run', run_id)
  local f = redis.call('HMGET', rk, 'state', 'address', 'browser', 'pool', 'created', 'started', 'ttl', 'entry')
  if not f[1] or f[1] == 'done' then return 0 end
  local t = now()
  redis.call('HSET', rk, 'state', 'done', 'result', result, 'finished', t)
  local ev = k('run', run_id, 'ev')
  redis.call('XADD', ev, '*', 'k', 'done', 'd', result)
  compact_events(ev)
  redis.call('SREM', k('active', f[2]), run_id)
  redis.call('SREM', k('active', f[2] .. '/' .. f[3]), run_id)
  redis.call('SREM', k('long', f[4]), run_id)
  local ttl = tonumber(f[7]) or 3600
  redis.call('EXPIRE', rk, ttl)
  redis.call('EXPIRE', ev, ttl)
  local pool = f[4]
  if f[1] == 'queued' then fair_remove(pool, f[2], f[3], run_id) end
  if f[8] then
    redis.call('XACK', k('stream', pool), GROUP, f[8])
    redis.call('XDEL', k('stream', pool), f[8])
  end
  redis.call('HINCRBY', k('metrics', 'runs'), pool .. '|' .. status, 1)
  if failure == '1' then redis.call('HINCRBY', k('metrics', 'failures'), pool, 1) end
  local created = tonumber(f[5])
  if created then
    observe('latency', pool, t - created)
    if f[6] then
      observe('wait', pool, tonumber(f[6]) - created)
      observe('run', pool, t - tonumber(f[6]))
    end
  end
  return 1
end
"""
)
