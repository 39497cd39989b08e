"""The harness's second wing: one run on this machine, fresh, pinned, capped, classified.

host (/proc readers, process groups), cgroups (memory cgroups v1/v2), jvm (a JVM's heap and
GC-log options), limits (the budget's enforcement, the watchdog, budget floors), pinned (the
one way a child process is started: pinned to its CPUs, in its own session, dying with the
harness), command (a run's command line and environment), classify (a run's status),
environment (host, versions, manifest, load and steal), fingerprint (the machine's
identity), interference (other processes' CPU time on a run's CPUs), launch (the Launcher,
its Family objects and the "process" family), searching (running a declared search step by
step). Imports the planning wing only."""
