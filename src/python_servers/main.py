"""Entry point: main.py {twisted|eventlet|python_threads} <serverbench arguments>."""

from __future__ import annotations

import sys

import sbcommon

SERVERS = ("twisted", "eventlet", "python_threads")


def main(argv: list[str]) -> int:
    if not argv or argv[0] not in SERVERS:
        print(f"error: the first argument names the server runtime: {', '.join(SERVERS)}", file=sys.stderr)
        return 2
    lang = argv[0]
    try:
        parsed = sbcommon.parse(lang, argv[1:])
    except sbcommon.Usage as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    if parsed is None:
        return 0
    _role, params, variant = parsed
    if lang == "twisted":
        import twisted_server as mod
    elif lang == "eventlet":
        import eventlet_server as mod
    else:
        import threads_server as mod
    return mod.serve(params, variant)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
