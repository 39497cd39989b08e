"""environment.yml (conda) and requirements.txt (pip) name the same packages and pins."""

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _norm(name):
    return re.sub(r"[-_.]+", "-", name).lower()


def pip_pins():
    pins = {}
    for line in (ROOT / "requirements.txt").read_text().splitlines():
        line = line.split("#")[0].strip()
        if line:
            name, _, version = line.partition("==")
            assert version, f"requirements.txt: {line!r} is not pinned with =="
            pins[_norm(name)] = version
    return pins


def conda_pins():
    pins = {}
    in_deps = False
    for line in (ROOT / "environment.yml").read_text().splitlines():
        if line.startswith("dependencies:"):
            in_deps = True
            continue
        if in_deps and re.match(r"^\S", line):
            in_deps = False
        m = re.match(r"^\s*-\s*([A-Za-z0-9_.-]+)\s*(?:=+\s*([^\s#]+))?", line) if in_deps else None
        if m:
            pins[_norm(m.group(1))] = m.group(2)
    return pins


def test_requirements_are_pinned_and_nonempty():
    assert len(pip_pins()) >= 10


def test_environment_yml_names_every_pip_package_with_the_same_version():
    pip, conda = pip_pins(), conda_pins()
    missing = sorted(set(pip) - set(conda))
    assert not missing, f"environment.yml lacks {missing}"
    differ = {n: (pip[n], conda[n]) for n in pip if conda[n] != pip[n]}
    assert not differ, f"versions differ (pip, conda): {differ}"


def test_environment_yml_has_the_toolchains():
    conda = conda_pins()
    for tool in ("python", "erlang", "rebar3", "go", "openjdk", "maven"):
        assert tool in conda, tool


def test_the_parser_sees_a_missing_package(tmp_path, monkeypatch):
    # guard against a parser that reads nothing and so agrees with everything
    text = (ROOT / "environment.yml").read_text().replace("  - seaborn=", "  # - seaborn=")
    fake = tmp_path / "environment.yml"
    fake.write_text(text)
    monkeypatch.setattr(__import__(__name__), "ROOT", tmp_path)
    assert "seaborn" not in conda_pins() and "pandas" in conda_pins()


def test_the_serverbench_kernel_runs_this_checkouts_python():
    # set-up registers it inside the environment; a kernel of another checkout would run
    # that checkout's code in the notebooks.
    import sys

    from jupyter_client.kernelspec import KernelSpecManager, NoSuchKernel

    try:
        spec = KernelSpecManager().get_kernel_spec("serverbench")
    except NoSuchKernel:
        raise AssertionError("no Jupyter kernel 'serverbench': run scripts/setup.sh") from None
    assert Path(spec.argv[0]).resolve() == Path(sys.executable).resolve()
