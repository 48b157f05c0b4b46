"""The queue's Lua scripts: every step that reads and then writes shared state, made atomic in Redis.

Each script gets the key prefix as ARGV[1] and builds its keys from it (one Redis, not a Redis
Cluster: the keys of one run and one pool are not declared up front). The helpers in PRELUDE
(`sandbox.queue.prelude`) are pasted before every script, because Redis scripts cannot call one
another. `sandbox.queue` says what the keys hold and why the scheduling is shaped this way.
"""

from __future__ import annotations

from sandbox.queue.prelude import PRELUDE
from sandbox.queue.script import Script, bind

__all__ = ["PRELUDE", "Script", "bind"]


def _script(body: str, args: str) -> Script:
    """A script with PRELUDE pasted before it; `args`: the names of its ARGV[2:], space-separated."""
    return Script(PRELUDE + body, tuple(args.split()))


# ARGV: prefix, run_id, pool, address, browser, job, cache_key, per_client, per_address, queue_size,
#       ttl, cache_size, rate_per_minute, rate_burst, address_rate_per_minute, address_rate_burst,
#       open_places, light_runs, network, light_network_runs, holder, holder_cap, long ('1': a run that
#       may hold its slot for minutes, `server.queue.long_runs`)
# → {'ok', queued} | {'full', queued} | {'kept', queued} (only the kept places are left, and the address
#   or its network is not light) | {'busy_client', limit} | {'busy_address', limit} | {'busy_holder', limit}
#   | {'rate', seconds}
# `holder`: the address whose cap the run also counts against (`Client.holder`: a class member's own
# address; the run's address otherwise): its runs are those of `active:HOLDER` and `active-held:HOLDER`
# (every run sent from it, to whichever group), counted together.
SUBMIT = _script(
    """
local run_id, pool, addr, browser = ARGV[2], ARGV[3], ARGV[4], ARGV[5]
local per_client, per_address, queue_size = tonumber(ARGV[8]), tonumber(ARGV[9]), tonumber(ARGV[10])
local t = now()

-- Caps count runs not yet done; a member whose run is done or gone no longer counts.
local function active(key)
  for _, id in ipairs(redis.call('SMEMBERS', key)) do
    local state = redis.call('HGET', k('run', id), 'state')
    if not state or state == 'done' then redis.call('SREM', key, id) end
  end
  return redis.call('SCARD', key)
end

local queued = redis.call('ZCARD', k('q', pool, 'since'))
if queued >= queue_size then return {'full', queued} end
local mine, theirs = k('active', addr .. '/' .. browser), k('active', addr)
if active(mine) >= per_client then return {'busy_client', per_client} end
local group = active(theirs)
if group >= per_address then return {'busy_address', per_address} end
-- A holder's runs: its own group's and those it sent to other groups (a member's class runs).
local holder, held_key = k('active', ARGV[21]), k('active-held', ARGV[21])
if holder ~= theirs then active(holder) end
active(held_key)
local held = #redis.call('SUNION', holder, held_key)
if held >= tonumber(ARGV[22]) then return {'busy_holder', tonumber(ARGV[22])} end
-- The queue's last places are kept for addresses (and networks) with few runs:
-- `server.queue.admission.refuses`.
local net = k('active-net', ARGV[19])
local heavy = math.max(group, held) >= tonumber(ARGV[18])
if queued >= tonumber(ARGV[17]) and (heavy or active(net) >= tonumber(ARGV[20])) then
  return {'kept', queued}
end
local wait = take_tokens(addr, browser, ARGV[13], ARGV[14], ARGV[15], ARGV[16], t)
if wait > 0 then return {'rate', wait} end
local rk = k('run', run_id)
redis.call('HSET', rk, 'state', 'queued', 'pool', pool, 'address', addr, 'browser', browser,
  'job', ARGV[6], 'key', ARGV[7], 'created', t, 'attempt', 0, 'ttl', ARGV[11], 'cache', ARGV[12],
  'long', ARGV[23])
-- Long enough for any run to end; `end_run` shortens it to the configured TTL.
redis.call('EXPIRE', rk, 86400)
for _, key in ipairs({mine, theirs, net, held_key}) do
  redis.call('SADD', key, run_id)
  redis.call('EXPIRE', key, 86400)
end
fair_push(pool, addr, browser, run_id, t)
redis.call('SADD', k('pools'), pool)
local bell = k('bell', pool)
redis.call('RPUSH', bell, 1)
redis.call('LTRIM', bell, -1000, -1)
return {'ok', queued + 1}
""",
    "run_id pool address browser job cache_key per_client per_address queue_size ttl cache_size rate_per_minute "
    "rate_burst address_rate_per_minute address_rate_burst open_places light_runs network light_network_runs "
    "holder holder_cap long",
)

# A run answered from the cache: done at once, but a run for the rate limits (not for the caps on
# runs in flight: it costs no slot). ARGV: prefix, run_id, pool, address, browser, job, result, ttl,
# rate_per_minute, rate_burst, address_rate_per_minute, address_rate_burst → {'ok', 0} | {'rate', seconds}
STORE_DONE = _script(
    """
local wait = take_tokens(ARGV[4], ARGV[5], ARGV[9], ARGV[10], ARGV[11], ARGV[12], now())
if wait > 0 then return {'rate', wait} end
local rk, ev = k('run', ARGV[2]), k('run', ARGV[2], 'ev')
redis.call('HSET', rk, 'state', 'done', 'pool', ARGV[3], 'address', ARGV[4], 'browser', ARGV[5],
  'job', ARGV[6], 'result', ARGV[7], 'created', now(), 'ttl', ARGV[8])
redis.call('XADD', ev, '*', 'k', 'done', 'd', ARGV[7])
redis.call('EXPIRE', rk, tonumber(ARGV[8]))
redis.call('EXPIRE', ev, tonumber(ARGV[8]))
return {'ok', 0}
""",
    "run_id pool address browser job result ttl rate_per_minute rate_burst address_rate_per_minute "
    "address_rate_burst",
)

# A worker's slot asks for work. First an entry whose holder's lease ran out (its worker died):
# run it once more, or hand it back as lost when it was lost too often. Else the next run in fair
# order, appended to the pool's stream and read back at once, so the stream holds only runs that
# a worker holds (the order is decided at the moment a slot is free, as in the in-process queue). A
# long run (a sweep's shard) starts only while fewer than the pool's live slots but one hold long
# runs (`long:POOL`; the rule of `server.queue.long_runs`), else the next run that is not long.
# ARGV: prefix, pool, consumer, slot, lease_ms, max_deliveries
# → nil | {'run'|'lost'|'skip', run_id, entry_id, attempt, job}
TAKE = _script(
    """
local pool, consumer = ARGV[2], ARGV[3]
local stream = k('stream', pool)

local function field(fields, name)
  for i = 1, #fields, 2 do if fields[i] == name then return fields[i + 1] end end
  return nil
end

local function start(run_id, entry_id, attempt)
  local rk = k('run', run_id or '')
  local f = redis.call('HMGET', rk, 'state', 'job')
  if not run_id or not f[1] or f[1] == 'done' then
    redis.call('XACK', stream, GROUP, entry_id)
    redis.call('XDEL', stream, entry_id)
    return {'skip', run_id or '', entry_id, attempt, ''}
  end
  if attempt > tonumber(ARGV[6]) then return {'lost', run_id, entry_id, attempt, f[2]} end
  local t = now()
  redis.call('HSET', rk, 'state', 'running', 'attempt', attempt, 'worker', consumer, 'entry', entry_id)
  if attempt == 1 then redis.call('HSET', rk, 'started', t) end
  if redis.call('HGET', rk, 'long') == '1' then redis.call('SADD', k('long', pool), run_id) end
  local data = cjson.encode({slot = tonumber(ARGV[4]), attempt = attempt})
  redis.call('XADD', k('run', run_id, 'ev'), '*', 'k', 'running', 'd', data)
  return {'run', run_id, entry_id, attempt, f[2]}
end

-- Long runs holding slots of the pool now (one that ended or was lost no longer counts), and how many
-- may: the pool's live worker slots but one, at least one.
local function running_long(pool_name)
  local key = k('long', pool_name)
  for _, id in ipairs(redis.call('SMEMBERS', key)) do
    if redis.call('HGET', k('run', id), 'state') ~= 'running' then redis.call('SREM', key, id) end
  end
  return redis.call('SCARD', key)
end

local function long_slots(pool_name)
  local slots = 0
  for _, id in ipairs(redis.call('ZRANGEBYSCORE', k('workers', pool_name), now(), '+inf')) do
    slots = slots + (tonumber(redis.call('HGET', k('worker', id), 'slots')) or 0)
  end
  return math.max(1, slots - 1)
end

local claimed = redis.call('XAUTOCLAIM', stream, GROUP, consumer, ARGV[5], '0-0', 'COUNT', 1)
local lost = claimed[2][1]
if lost then
  local pending = redis.call('XPENDING', stream, GROUP, lost[1], lost[1], 1)
  return start(field(lost[2], 'run'), lost[1], tonumber(pending[1][4]))
end
local run_id = fair_take(pool, running_long(pool) >= long_slots(pool))
if not run_id then return nil end
-- When the queue last moved: health tells a busy pool from a stuck one by it.
redis.call('SET', k('q', pool, 'moved'), now())
redis.call('XADD', stream, '*', 'run', run_id)
local got = redis.call('XREADGROUP', 'GROUP', GROUP, consumer, 'COUNT', 1, 'STREAMS', stream, '>')
local entry = got[1][2][1]
return start(field(entry[2], 'run'), entry[1], 1)
""",
    "pool consumer slot lease_ms max_deliveries",
)

# The holder of a run keeps its lease (the entry's idle time back to 0) and learns of a cancel.
# ARGV: prefix, pool, consumer, entry_id, run_id, attempt → -1 lease lost | 0 carry on | 1 cancel
RENEW = _script(
    """
local stream = k('stream', ARGV[2])
local pending = redis.call('XPENDING', stream, GROUP, ARGV[4], ARGV[4], 1)
if #pending == 0 or pending[1][2] ~= ARGV[3] then return -1 end
local f = redis.call('HMGET', k('run', ARGV[5]), 'state', 'attempt', 'cancel')
if f[1] ~= 'running' or f[2] ~= ARGV[6] then return -1 end
redis.call('XCLAIM', stream, GROUP, ARGV[3], 0, ARGV[4], 'JUSTID')
if f[3] == '1' then return 1 end
return 0
""",
    "pool consumer entry_id run_id attempt",
)

# One progress event of the attempt that holds the run (a superseded attempt writes nothing); the
# stream keeps its last `max_events` (the bytes forwarded per run are capped by the worker's
# `sandbox.backends.execute`). ARGV: prefix, run_id, attempt, kind, data, max_events → 1 | 0
EMIT = _script(
    """
local f = redis.call('HMGET', k('run', ARGV[2]), 'state', 'attempt')
if f[1] ~= 'running' or f[2] ~= ARGV[3] then return 0 end
redis.call('XADD', k('run', ARGV[2], 'ev'), 'MAXLEN', tonumber(ARGV[6]), '*', 'k', ARGV[4], 'd', ARGV[5])
return 1
""",
    "run_id attempt kind data max_events",
)

# The attempt that holds the run ends it: exactly one result per run, whoever else tried.
# ARGV: prefix, run_id, attempt, result, status, failure (0|1), reusable (0|1), phases ('' | a JSON
# object of the run's phase seconds, `RunResult.phases`) → 1 | 0
FINISH = _script(
    """
local rk = k('run', ARGV[2])
local f = redis.call('HMGET', rk, 'state', 'attempt', 'key', 'cache', 'pool', 'created', 'started')
if f[1] ~= 'running' or f[2] ~= ARGV[3] then return 0 end
end_run(ARGV[2], ARGV[4], ARGV[5], ARGV[6])
-- Each phase the run went through (the queue wait is end_run's `wait`), and submission → first verdict.
local p = ARGV[8] ~= '' and cjson.decode(ARGV[8]) or {}
for name, s in pairs(p) do
  if type(s) == 'number' and name ~= 'queued' and name ~= 'first_verdict_after' then observe('phase:' .. name, f[5], s) end
end
local after = p['first_verdict_after']
if type(after) == 'number' and f[6] and f[7] then observe('first_verdict', f[5], after + f[7] - f[6]) end
local size = tonumber(f[4]) or 0
if ARGV[7] == '1' and size > 0 and f[3] and f[3] ~= '' then
  local lru = k('cache', 'lru')
  -- Spliced, not re-encoded: cjson would turn the result's empty arrays into objects.
  local entry = '{"run":' .. cjson.encode(ARGV[2]) .. ',"at":' .. string.format('%.6f', now()) .. ',"result":' .. ARGV[4] .. '}'
  redis.call('SET', k('cache', f[3]), entry)
  redis.call('ZADD', lru, now(), f[3])
  local extra = redis.call('ZCARD', lru) - size
  if extra > 0 then
    for _, key in ipairs(redis.call('ZRANGE', lru, 0, extra - 1)) do redis.call('DEL', k('cache', key)) end
    redis.call('ZREMRANGEBYRANK', lru, 0, extra - 1)
  end
end
return 1
""",
    "run_id attempt result status failure reusable phases",
)

# End a run from outside its attempt: a cancel while queued, a run lost too often, a pool left
# without runners. ARGV: prefix, run_id, result, status, failure (0|1), only_if ('' | a state) → 1 | 0
ABORT = _script(
    """
local state = redis.call('HGET', k('run', ARGV[2]), 'state')
if ARGV[6] ~= '' and state ~= ARGV[6] then return 0 end
return end_run(ARGV[2], ARGV[3], ARGV[4], ARGV[5])
""",
    "run_id result status failure only_if",
)

# A cancel: a queued run is ended by the caller (ABORT with only_if='queued'); a running one is
# flagged for its holder, who stops the job. ARGV: prefix, run_id → state before ('' if unknown)
FLAG_CANCEL = _script(
    """
local rk = k('run', ARGV[2])
local state = redis.call('HGET', rk, 'state')
if not state then return '' end
if state == 'running' then redis.call('HSET', rk, 'cancel', '1') end
return state
""",
    "run_id",
)

# The waiting runs of a pool as the fair queue holds them: {{address, {{run ids of a browser}, …}}, …}.
# ARGV: prefix, pool
SNAPSHOT = _script(
    """
local out = {}
for _, addr in ipairs(redis.call('LRANGE', k('q', ARGV[2], 'addrs'), 0, -1)) do
  local browsers = {}
  for _, browser in ipairs(redis.call('LRANGE', k('q', ARGV[2], 'a', addr), 0, -1)) do
    table.insert(browsers, redis.call('LRANGE', k('q', ARGV[2], 'b', addr .. '/' .. browser), 0, -1))
  end
  table.insert(out, browsers)
end
return out
""",
    "pool",
)

# A worker is alive: its expiry (Redis's clock, so hosts' clocks do not matter) and what it offers.
# ARGV: prefix, pool, worker, ttl_ms, slots, busy, host, unavailable (JSON: jax version → why this
# worker cannot run it), out (slots its sandbox holds out of service: a job it could not stop) → 1
HEARTBEAT = _script(
    """
local t = now()
redis.call('ZADD', k('workers', ARGV[2]), t + tonumber(ARGV[4]) / 1000, ARGV[3])
local wk = k('worker', ARGV[3])
redis.call('HSET', wk, 'pool', ARGV[2], 'slots', ARGV[5], 'busy', ARGV[6], 'host', ARGV[7], 'seen', t,
  'unavailable', ARGV[8], 'out', ARGV[9])
redis.call('PEXPIRE', wk, 2 * tonumber(ARGV[4]))
redis.call('SADD', k('pools'), ARGV[2])
return 1
""",
    "pool worker ttl_ms slots busy host unavailable out",
)

# The live workers of a pool (dead ones are dropped): {{worker, slots, busy, unavailable, out}, …}.
# ARGV: prefix, pool
LIVE_WORKERS = _script(
    """
local key = k('workers', ARGV[2])
redis.call('ZREMRANGEBYSCORE', key, '-inf', now())
local out = {}
for _, id in ipairs(redis.call('ZRANGE', key, 0, -1)) do
  local f = redis.call('HMGET', k('worker', id), 'slots', 'busy', 'unavailable', 'out')
  table.insert(out, {id, f[1] or '0', f[2] or '0', f[3] or '{}', f[4] or '0'})
end
return out
""",
    "pool",
)
