"""Inside bubblewrap: the warm pool and the hardened sandbox's layers. May import JAX (the pool
preloads it) and the harness (a forked child runs it); never the backends or the server.

The layers, one module each, applied by `sandbox.jail.child` in this order:

1. `cgroups`     join the job's cgroups: memory, pids and CPU caps; whole-job kill (cgroup.kill)
2. `namespaces`  private net, IPC, UTS, cgroup and mount namespaces; the size-capped tmpfs scratch at
                 /tmp; a /proc that shows only the job's own processes; cgroupfs hidden
3. `privilege`   stdio and the event fd in place, every other fd closed, rlimits, a scrubbed environ
4. `landlock`    read-only filesystem (no execute) but the scratch; no TCP; signals and abstract unix
                 sockets scoped to the job
5. `privilege`   an unprivileged per-slot uid, then PR_SET_PDEATHSIG (the uid change clears it)
6. `seccomp`     no sockets, exec, namespaces, mounts, ptrace, bpf, io_uring, perf, keyrings

The warm pool (`pool`) that forks each job already runs inside bubblewrap (`outer`): its own pid
namespace, no network, and a minimal read-only root that holds nothing of the server. `channel` is
its control socket to the backend, `runtime` the job interpreter it runs, `probe` checks that this
machine supports every layer, and `poolbench` times the layers for `bench/sandbox_overhead.py`.
"""
