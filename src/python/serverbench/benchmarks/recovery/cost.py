"""What a recovery run costs, for the plan's estimates: its fixed duration and a little."""


def run_s(language: str, params: dict) -> float:
    return params["duration_s"] + 0.3
