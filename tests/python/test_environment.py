"""The pip route (requirements.txt, requirements.lock, pyproject.toml's extras) and the conda
routes (environment.yml, binder/environment.yml) name the same packages and versions."""

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


# conda-forge's name where it differs from PyPI's
CONDA_TO_PIP = {"python-fastjsonschema": "fastjsonschema"}


def conda_pins(name="environment.yml"):
    pins = {}
    in_deps = False
    for line in (ROOT / name).read_text().splitlines():
        if line.startswith("dependencies:"):
            in_deps = True
            continue
        if in_deps and re.match(r"^\S", line):
            in_deps = False
        m = re.match(r"^\s*-\s*([A-Za-z0-9_.-]+)\s*(?:=+\s*([^\s#]+))?", line) if in_deps else None
        if m:
            pins[CONDA_TO_PIP.get(_norm(m.group(1)), _norm(m.group(1)))] = m.group(2)
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
    for tool in ("python", "erlang", "rebar3", "go", "openjdk", "maven", "nodejs", "c-compiler"):
        assert tool in conda, tool


def test_environment_yml_installs_the_package_itself():
    text = (ROOT / "environment.yml").read_text()
    assert re.search(r"^  - pip:\n(\s+#.*\n)*\s+- -e \.$", text, re.M), "environment.yml: pip: [-e .]"


def test_binder_environment_declares_the_same_as_the_root_one():
    root = conda_pins()
    assert root.pop("-e") is None  # pip: -e . (binder/postBuild installs the package instead)
    assert conda_pins("binder/environment.yml") == root


def lock_pins():
    pins, hashes, name = {}, {}, None
    for line in (ROOT / "requirements.lock").read_text().splitlines():
        m = re.match(r"^([A-Za-z0-9_.-]+)==(\S+)", line)
        if m:
            name = _norm(m.group(1))
            pins[name] = m.group(2)
        elif name and "--hash=sha256:" in line:
            hashes[name] = hashes.get(name, 0) + 1
    return pins, hashes


def test_the_lock_pins_every_package_with_hashes_and_agrees_with_requirements_txt():
    lock, hashes = lock_pins()
    assert len(lock) >= 100  # the whole environment, not only the direct pins
    assert set(lock) == set(hashes), f"without hashes: {sorted(set(lock) - set(hashes))}"
    pip = pip_pins()
    differ = {n: (v, lock.get(n)) for n, v in pip.items() if lock.get(n) != v}
    assert not differ, f"requirements.txt vs requirements.lock: {differ}"
    conda = conda_pins()
    differ = {n: (v, lock[n]) for n, v in conda.items() if n in lock and v and v != lock[n]}
    assert not differ, f"environment.yml vs requirements.lock: {differ}"


def test_extras_group_every_pinned_package():
    import tomllib

    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    extras = project["optional-dependencies"]
    assert {"notebooks", "servers", "reference", "dev"} <= set(extras)
    named = {_norm(d) for d in project["dependencies"]}
    for deps in extras.values():
        named |= {_norm(d) for d in deps if not d.startswith("serverbench")}
    missing = sorted(set(pip_pins()) - named)
    assert not missing, f"pinned in requirements.txt but in no dependency group of pyproject.toml: {missing}"
    assert "openpyxl" in {_norm(d) for d in extras["reference"]}  # data/reference/extract_reference.py


def test_binder_installs_the_package_and_the_kernel_the_notebooks_ask_for():
    import json

    post = (ROOT / "binder" / "postBuild").read_text()
    assert "pip install --no-deps" in post and "-e ." in post
    assert "ipykernel install --sys-prefix --name serverbench" in post
    for nb in [ROOT / "notebooks" / "explore.ipynb", *sorted((ROOT / "notebooks" / "teaching").glob("*.ipynb"))]:
        assert json.loads(nb.read_text())["metadata"]["kernelspec"]["name"] == "serverbench", nb.name


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
