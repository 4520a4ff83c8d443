"""The package as a user gets it from ``pip install``.

- The runtime requirements are ranges up to the next major version; the lowest tested set
  (constraints-min.txt) is exactly their lower bounds, the latest (constraints.txt) lies inside.
- The package reports its version.
- The sdist and the wheel built from it (``python -m build``) pass ``twine check --strict``
  and hold every file of the package: the gate's Lambda runtime, ``py.typed``, the LICENSE.
- The wheel, installed into a fresh venv outside the repository with the latest and with the
  lowest supported aws-cdk-lib, synthesizes the README example with the real ``cdk`` CLI,
  printing nothing.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tomllib
import zipfile
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.specifiers import SpecifierSet
from packaging.utils import canonicalize_name
from packaging.version import Version

import hyperpod_constructs
from hyperpod_constructs._version import UNKNOWN, installed_version

ROOT = Path(__file__).resolve().parent.parent
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
RUNTIME = [Requirement(line) for line in PYPROJECT["dependencies"]]
NODE_BIN = ROOT / "node_modules" / ".bin"
CONSTRAINTS = {"latest": ROOT / "constraints.txt", "lowest": ROOT / "constraints-min.txt"}


def pins(path: Path) -> dict[str, Version]:
    """``name==version`` lines of a constraints file, by canonical name."""
    found: dict[str, Version] = {}
    for line in path.read_text().splitlines():
        match = re.fullmatch(r"([A-Za-z0-9_.\-]+)==(\S+)", line.strip())
        if match:
            found[canonicalize_name(match[1])] = Version(match[2])
    return found


def lower_bound(specifier: SpecifierSet) -> Version:
    (bound,) = [Version(s.version) for s in specifier if s.operator == ">="]
    return bound


# -- requirements --------------------------------------------------------------------------


@pytest.mark.parametrize("requirement", RUNTIME, ids=str)
def test_runtime_requirement_is_a_range_below_the_next_major(requirement: Requirement) -> None:
    operators = sorted(s.operator for s in requirement.specifier)
    assert operators == ["<", ">="], f"{requirement}: want '>=lowest,<next major'"
    (upper,) = [Version(s.version) for s in requirement.specifier if s.operator == "<"]
    assert upper == Version(f"{lower_bound(requirement.specifier).major + 1}")


def test_the_lowest_tested_set_is_the_lower_bounds() -> None:
    lowest = pins(CONSTRAINTS["lowest"])
    for requirement in RUNTIME:
        name = canonicalize_name(requirement.name)
        assert lowest.get(name) == lower_bound(requirement.specifier), requirement


@pytest.mark.parametrize("tested", sorted(CONSTRAINTS))
def test_each_tested_set_satisfies_the_ranges(tested: str) -> None:
    pinned = pins(CONSTRAINTS[tested])
    for requirement in RUNTIME:
        version = pinned[canonicalize_name(requirement.name)]
        assert version in requirement.specifier, f"{tested}: {requirement.name} {version}"


def test_the_package_reports_its_installed_version() -> None:
    assert hyperpod_constructs.__version__ == PYPROJECT["version"]
    assert installed_version("hyperpod-constructs-not-installed") == UNKNOWN


# -- the built distributions --------------------------------------------------------------


@pytest.fixture(scope="session")
def dist(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The sdist, and the wheel built from it, in a fresh folder."""
    out = tmp_path_factory.mktemp("dist")
    build = [sys.executable, "-m", "build", "--outdir", str(out), str(ROOT)]
    subprocess.run(build, check=True, capture_output=True, text=True)
    return out


def the_wheel(dist: Path) -> Path:
    (wheel,) = dist.glob("hyperpod_constructs-*.whl")
    return wheel


def test_twine_accepts_the_distributions(dist: Path) -> None:
    files = sorted(str(path) for path in dist.iterdir())
    check = [sys.executable, "-m", "twine", "check", "--strict", *files]
    result = subprocess.run(check, capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr
    assert len(files) == 2


def test_the_wheel_holds_every_file_of_the_package_and_the_license(dist: Path) -> None:
    tracked = subprocess.run(
        ["git", "ls-files", "hyperpod_constructs"],
        cwd=ROOT,
        check=True,
        capture_output=True,
        text=True,
    ).stdout.split()
    names = set(zipfile.ZipFile(the_wheel(dist)).namelist())
    assert [path for path in tracked if path not in names] == []
    assert "hyperpod_constructs/gate/runtime/hyperpod_gate/poll.py" in names
    assert "hyperpod_constructs/py.typed" in names
    assert not [name for name in names if "__pycache__" in name or name.endswith(".pyc")]
    version = PYPROJECT["version"]
    assert f"hyperpod_constructs-{version}.dist-info/licenses/LICENSE" in names
    metadata = zipfile.ZipFile(the_wheel(dist)).read(
        f"hyperpod_constructs-{version}.dist-info/METADATA"
    )
    requires = {
        str(Requirement(line.split(":", 1)[1]))
        for line in metadata.decode().splitlines()
        if line.startswith("Requires-Dist:") and "extra ==" not in line
    }
    assert requires == {str(requirement) for requirement in RUNTIME}


# -- the wheel in a user's app ------------------------------------------------------------


def readme_example() -> str:
    (example,) = re.findall(r"```python\n(.*?)```", (ROOT / "README.md").read_text(), re.DOTALL)
    return example


def user_env() -> dict[str, str]:
    """The environment of a user's shell: nothing of this repository or of pytest, but the
    supported Node.js the README's Install section asks for (here: node_modules/.bin)."""
    env = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith(("PYTEST", "CDK_", "VIRTUAL_ENV", "PYTHON"))
    }
    env["PATH"] = f"{NODE_BIN}{os.pathsep}{env.get('PATH', '')}"
    env["CDK_DISABLE_CLI_TELEMETRY"] = "true"
    return env


@pytest.fixture(scope="session")
def installed(dist: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Tested set -> the python of a fresh venv (outside the repository) where pip installed
    the wheel under that set's constraints. Both installs run at once; pip's cache is used,
    byte-compiling is left to the first import."""
    if not (NODE_BIN / "cdk").exists():
        pytest.fail("the cdk CLI is missing: run `make setup`")
    running: dict[str, tuple[Path, subprocess.Popen[str]]] = {}
    for tested, constraints in CONSTRAINTS.items():
        venv = tmp_path_factory.mktemp(f"venv-{tested}")
        subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
        python = venv / "bin" / "python"
        install = [sys.executable, "-m", "pip", "--python", str(python), "install", "--quiet"]
        install += ["--disable-pip-version-check", "--no-compile", "-c", str(constraints)]
        process = subprocess.Popen(
            [*install, str(the_wheel(dist))],
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            env=user_env(),
        )
        running[tested] = (python, process)
    pythons: dict[str, Path] = {}
    for tested, (python, process) in running.items():
        output, _ = process.communicate()
        assert process.returncode == 0, f"{tested}: {output}"
        pythons[tested] = python
    return pythons


@pytest.mark.parametrize("tested", ["latest", "lowest"])
def test_the_wheel_synthesizes_the_readme_example_in_a_fresh_venv(
    tested: str, installed: dict[str, Path], tmp_path: Path
) -> None:
    python = installed[tested]
    venv = python.parent.parent

    app = tmp_path / "app"
    (app / "lifecycle").mkdir(parents=True)
    (app / "lifecycle" / "on_create.sh").write_text("#!/bin/bash\n")
    (app / "app.py").write_text(readme_example())
    # The cdk.json `cdk init` writes: the app command and the recommended feature flags.
    flags = json.loads((ROOT / "cdk.json").read_text())["context"]
    (app / "cdk.json").write_text(json.dumps({"app": f"{python} app.py", "context": flags}))
    command = [str(NODE_BIN / "cdk"), "synth", "--quiet", "--no-notices", "--no-version-reporting"]
    synth = subprocess.run(command, cwd=app, capture_output=True, text=True, env=user_env())

    assert synth.returncode == 0, synth.stdout + synth.stderr
    assert (synth.stdout, synth.stderr) == ("", "")
    template = json.loads((app / "cdk.out" / "Training.template.json").read_text())
    types = [resource["Type"] for resource in template["Resources"].values()]
    assert "AWS::CloudFormation::WaitCondition" in types
    (cluster,) = [
        r for r in template["Resources"].values() if r["Type"] == "AWS::SageMaker::Cluster"
    ]
    gpu = [g for g in cluster["Properties"]["InstanceGroups"] if g["InstanceGroupName"] == "gpu"]
    assert gpu[0]["MinInstanceCount"] == 16
    # The gate's Lambda code came out of the installed wheel into the cloud assembly.
    staged = {path.name for path in (app / "cdk.out").glob("asset.*/**/*.py")}
    assert {"poll.py", "arm.py", "decision.py"} <= staged
    location = subprocess.run(
        [str(python), "-c", "import hyperpod_constructs as h; print(h.__file__, h.__version__)"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        env=user_env(),
        check=True,
    ).stdout.split()
    assert location == [
        str(
            venv
            / "lib"
            / f"python{sys.version_info.major}.{sys.version_info.minor}"
            / "site-packages"
            / "hyperpod_constructs"
            / "__init__.py"
        ),
        PYPROJECT["version"],
    ]
