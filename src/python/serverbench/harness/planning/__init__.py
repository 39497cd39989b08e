"""The harness's first wing: what a sweep will run, before anything runs.

values (checked settings: integers, sizes, parameter lists), profiles (TOML -> the resolved
profile), resolved (the resolved profile as a frozen value), task (the Task: one run, and
its config_id / group_id), search (a search a benchmark declares, e.g. spawn's max
processes, as a plan item), socket_plan (the socket family's tasks: client x server x
placement), plan (profile -> Tasks and Searches, their round-robin order, estimates),
pieces (a long profile's parts, each a sweep of its own). Imports nothing of the other
wings."""
