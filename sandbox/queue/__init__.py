"""The run queue on Redis, shared by the web servers (`server.queue.redis_queue`) and the runner workers
(`sandbox.worker`): host side, never JAX, never `server/`.

Scheduling design
-----------------
Several web servers take runs and several workers, on any hosts, run them; Redis (>= 7) is the one
place that decides. Per *pool* (where a job can run: `interpret` on any CPU, `tpu-v5e` natively on
that chip kind):

1. **Waiting runs** sit in a two-level round-robin, the rule of `server.queue.fairness.FairQueue` kept on
   Redis lists: `q:POOL:addrs` (addresses in turn order), `q:POOL:a:ADDR` (that address's browsers in
   turn order), `q:POOL:b:ADDR/BROWSER` (that browser's runs, FIFO), and `q:POOL:since` (run → time
   queued: the depth and the oldest wait). Submitting (`lua.SUBMIT`) checks, in one atomic step,
   the queue size, the per-browser and per-address caps (sets of active runs; every run an address
   sent, to whichever group, also in `active-held:ADDRESS`, so a class member's class runs count
   against its own cap), the queue's last
   places kept for addresses and networks with few runs (`server.queue.admission`; a network's
   active runs in `active-net:NETWORK`) and both token
   buckets (`server.ratelimit.RateLimiter`'s rule), so the limits hold across web servers exactly
   as they do in one. Then it rings the pool's doorbell (`bell:POOL`) that idle workers block on.
2. **Dispatch happens when a slot is free**, as in the in-process queue: a worker's slot runs
   `lua.TAKE`, which pops the next run in round-robin order, appends it to the pool's stream
   (`stream:POOL`) and reads it back through the consumer group `workers` in the same atomic
   step. So the stream holds only runs that some worker holds, and a greedy client with 100 waiting
   runs gets one turn per round whichever web server each of them came through. A long run (a
   sweep's shard, `long` in its hash) starts only while the runs in `long:POOL` hold fewer than the
   pool's live slots but one (`server.queue.long_runs`); otherwise the next run that is not long.
3. **Leases**: an entry a worker has read stays in the group's pending list until the run ends.
   The holder renews it (`lua.RENEW`: the entry's idle time back to 0) several times per lease;
   an entry idle for longer than the lease belongs to a dead worker (kill -9, host gone). The next
   slot that asks for work claims it (`XAUTOCLAIM`) and runs it once more; its delivery count is
   the attempt number, and past `max_deliveries` the run ends `error` with an infrastructure
   message instead. A holder whose lease was taken over learns it at its next renewal and stops.
4. **Exactly one result**: a run's hash (`run:ID`) records the attempt that holds it; events
   (`lua.EMIT`) and the result (`lua.FINISH`) of any other attempt are refused, and `end_run` (in
   `sandbox.queue.prelude`) is the one way a run becomes done: result, `done` event, caps released, metrics
   counted, the entry acknowledged, the run and its events set to expire (`PLAYGROUND_RUNS_TTL`).
5. **Events anywhere**: every event of a run is an entry of `run:ID:ev`; its entry id is the SSE
   `id:`, so any web server can resume a stream after `Last-Event-ID`. The stream keeps its last
   `worker_side.MAX_EVENTS` entries while the run runs; `end_run` drops its `progress` entries (the
   result supersedes them) and writes the rest back under the same ids. Queue positions are computed
   by whichever web server a client follows (`lua.SNAPSHOT` through `fair_order`), sent without an id.
6. **Liveness**: workers heartbeat into `workers:POOL` (a sorted set scored by expiry on Redis's own
   clock); a pool with no live worker refuses new runs (503), and a web server ends the runs of a
   pool that stayed without workers instead of letting them wait forever.

One Redis, not a Redis Cluster: the scripts build a run's and a pool's keys from a prefix.
"""

from sandbox.queue.keys import DEFAULT_PREFIX, GROUP, Claim, pool_for
from sandbox.queue.worker_side import WorkerQueue

__all__ = ["DEFAULT_PREFIX", "GROUP", "Claim", "WorkerQueue", "pool_for"]
