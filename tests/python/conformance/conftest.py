"""Reports how many process-level conformance cases spec/cli.json generated per language."""

from collections import Counter

from .cases import load_cli, process_cases


def pytest_collection_finish(session):
    session.config._conformance_ran = Counter(
        item.callspec.params["case"].language
        for item in session.items
        if hasattr(item, "callspec") and "case" in item.callspec.params and "conformance" in item.nodeid
    )


def pytest_terminal_summary(terminalreporter, exitstatus, config):  # noqa: ARG001
    ran = getattr(config, "_conformance_ran", None)
    if not ran:
        return
    generated = Counter(c.language for c in process_cases(load_cli()))
    text = ", ".join(f"{lang} {n} (selected {ran.get(lang, 0)})" for lang, n in generated.items())
    terminalreporter.write_line(f"conformance cases generated from spec/cli.json per language: {text}")
