"""The harness's third wing: the socket family, one server and one client per run.

limits (open files, ports, TCP memory, CPU placement), probe (the server seen from /proc
during the run, and the kernel-memory guard), accounting (server and client byte counts
cross-checked), server (a started server: listening line, stop, reap), run (one run: the
"socket" family's runner and its CPUs), serve (`python -m serverbench serve`: one server in
the foreground). Imports the planning and running wings."""
