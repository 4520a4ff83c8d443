"""The package as a user gets it from ``pip install``.

- The runtime requirements are ranges up to the next major version; the lowest tested set
  (constraints-min.txt) is exactly their lower bounds, the latest (constraints.txt) lies inside.
- The package reports its version.
- The sdist and the wheel built from it (``python -m build``) pass ``twine check --strict``
  and hold every file of the package: the gate's Lambda runtime, ``py.typed``, the LICENSE.
- The metadata describes the project (URLs, classifiers, keywords, typed) and publishes no
  exact pins: the project's own tools are PEP 735 dependency groups, which users never install.
- The README's install words work: a fresh venv outside the repository installs the wheel
  ``make package`` builds (with the latest tested set) and another a copy of the clone (with
  the lowest supported aws-cdk-lib), each with the README's own ``pip install`` command; each
  synthesizes the README example with the real ``cdk`` CLI, printing nothing. ``make test``
  installs the wheel; the clone with the lowest set, a second fresh install of aws-cdk-lib, runs
  in ``make test-deep`` (tests/support/depth.py; the lowest set itself is ``make test-min``'s).
"""

from __future__ import annotations

import email.parser
import functools
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import tomllib
import zipfile
from collections.abc import Callable
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.specifiers import SpecifierSet
from packaging.utils import canonicalize_name
from packaging.version import Version

import hyperpod_constructs
from hyperpod_constructs._version import UNKNOWN, installed_version

ROOT = Path(__file__).resolve().parent.parent
PYPROJECT_TOML = tomllib.loads((ROOT / "pyproject.toml").read_text())
PYPROJECT = PYPROJECT_TOML["project"]
README = (ROOT / "README.md").read_text()
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


def test_exact_pins_are_dependency_groups_never_extras() -> None:
    """Users install extras (``[watch]``), so extras hold ranges; the project's own exact pins
    (test and docs tools) are dependency groups (``pip install --group dev``, ``make setup``)."""
    extras = PYPROJECT.get("optional-dependencies", {})
    assert sorted(extras) == ["watch"]
    assert [r for deps in extras.values() for r in deps if "==" in r] == []
    groups = PYPROJECT_TOML["dependency-groups"]
    assert {"test", "dev"} <= set(groups)
    pinned = [r for deps in groups.values() for r in deps if isinstance(r, str)]
    assert pinned and all("==" in r for r in pinned)
    makefile = (ROOT / "Makefile").read_text()
    assert "--group $(3)" in makefile and "'.[" not in makefile


def test_make_setup_installs_each_locked_set_with_uv_bootstrapped_by_pip() -> None:
    """pip (from ``python -m venv``) installs uv alone, at one exact version; uv installs the
    locked set, the project and its group (docs/performance.md, "Set-up")."""
    makefile = (ROOT / "Makefile").read_text()
    recipe = makefile.split("define make_venv", 1)[1].split("endef", 1)[0]
    (pin,) = re.findall(r"^UV_VERSION := (\S+)$", makefile, re.MULTILINE)
    assert str(Version(pin)) == pin
    assert re.findall(r"/bin/pip install (\S+ \S+)", recipe) == ["--quiet uv==$(UV_VERSION)"]
    assert re.search(r"/bin/uv pip install .*\n.*-c \$\(2\) -e \. --group \$\(3\)", recipe)


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
    assert "hyperpod_constructs/_runtime/hyperpod_gate/poll.py" in names
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


def wheel_metadata(dist: Path) -> email.message.Message:
    name = f"hyperpod_constructs-{PYPROJECT['version']}.dist-info/METADATA"
    text = zipfile.ZipFile(the_wheel(dist)).read(name)
    return email.parser.Parser().parsestr(text.decode())


def test_the_metadata_describes_the_project(dist: Path) -> None:
    """What PyPI shows and tools read: where the project lives, what it is, that it is typed."""
    metadata = wheel_metadata(dist)
    urls = dict(url.split(", ", 1) for url in metadata.get_all("Project-URL") or [])
    assert {"Homepage", "Documentation", "Source", "Issues", "Changelog"} <= set(urls)
    assert all(url.startswith("https://") for url in urls.values())
    classifiers = metadata.get_all("Classifier") or []
    assert {"Framework :: AWS CDK :: 2", "Typing :: Typed"} <= set(classifiers)
    versions = [c.rsplit(" :: ", 1)[1] for c in classifiers if c.startswith("Programming Lang")]
    minors = [v for v in versions if re.fullmatch(r"3\.\d+", v)]
    assert minors and all(SpecifierSet(metadata["Requires-Python"]).contains(v) for v in minors)
    assert "hyperpod" in (metadata["Keywords"] or "").split(",")
    assert metadata.get_all("Provides-Extra") == ["watch"]
    assert metadata["License-Expression"] == "Apache-2.0"


# -- the README's install words, followed in fresh venvs ---------------------------------


def readme_example() -> str:
    (example,) = re.findall(r"```python\n(.*?)```", README, re.DOTALL)
    return example


def install_commands() -> dict[str, list[str]]:
    """The ``pip install`` commands of the README's Install section, by the way they install:
    ``clone`` (a folder), ``wheel`` (a file) and ``index`` (PyPI, once published)."""
    section = README.split("\n## Install", 1)[1].split("\n## ", 1)[0]
    blocks = re.findall(r"```sh\n(.*?)```", section, re.DOTALL)
    found: dict[str, list[str]] = {}
    for line in "\n".join(blocks).splitlines():
        words = shlex.split(line)
        if words[:2] == ["pip", "install"]:
            target = words[-1]
            way = "wheel" if target.endswith(".whl") else "clone" if "/" in target else "index"
            assert way not in found, f"two {way} installs in the README"
            found[way] = words
    return found


def clone_command() -> list[str]:
    section = README.split("\n## Install", 1)[1]
    (line,) = re.findall(r"^git clone .*$", section, re.MULTILINE)
    return shlex.split(line)


def test_the_readme_names_the_repository_the_wheel_and_the_release(dist: Path) -> None:
    """The clone URL is the project's Source URL; the wheel the README installs is the file
    ``make package`` builds (same name: a version bump needs the README too); the PyPI line
    takes the current version and no release that may break it."""
    commands = install_commands()
    assert sorted(commands) == ["clone", "index", "wheel"]
    _, _, url = clone_command()
    assert url == PYPROJECT["urls"]["Source"] + ".git"
    assert commands["clone"][-1] == "./" + url.rsplit("/", 1)[1].removesuffix(".git")
    assert commands["wheel"][-1] == f"dist/{the_wheel(dist).name}"
    package = (ROOT / "Makefile").read_text().split("\npackage:", 1)[1].split("\n\n", 1)[0]
    assert "-m build" in package and "--outdir dist" in package
    requirement = Requirement(commands["index"][-1])
    assert requirement.name == PYPROJECT["name"]
    version = Version(PYPROJECT["version"])
    assert version in requirement.specifier
    assert Version(f"{version.major}.{version.minor + 1}") not in requirement.specifier


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


WAYS = {"latest": "wheel", "lowest": "clone"}
"""Which of the README's ways each tested set installs with."""


def _clone(destination: Path) -> Path:
    """A copy of what a clone holds: the repository's files (tracked, and new ones not
    ignored), without .git or anything built."""
    listed = subprocess.run(
        ["git", "ls-files", "--cached", "--others", "--exclude-standard", "-z"],
        cwd=ROOT,
        check=True,
        capture_output=True,
        text=True,
    ).stdout.split("\0")
    for name in filter(None, listed):
        source = ROOT / name
        if source.is_file():
            (destination / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, destination / name)
    return destination


@pytest.fixture(scope="session")
def installed(dist: Path, tmp_path_factory: pytest.TempPathFactory) -> Callable[[str], Path]:
    """Tested set -> the python of a fresh venv (outside the repository) where the README's
    ``pip install`` command for that set's way ran, in a folder laid out as the README says
    (``dist/<wheel>`` after ``make package``; the clone's folder). The tested set is applied
    with ``PIP_CONSTRAINT`` so that the command stays the README's. Each set is installed when
    a test first asks for it (a run may skip one); pip's cache is used, byte-compiling is left
    to the first import."""
    if not (NODE_BIN / "cdk").exists():
        pytest.fail("the cdk CLI is missing: run `make setup`")
    commands = install_commands()

    @functools.cache
    def install(tested: str) -> Path:
        constraints = CONSTRAINTS[tested]
        venv = tmp_path_factory.mktemp(f"venv-{tested}")
        subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
        python = venv / "bin" / "python"
        words = commands[WAYS[tested]]
        where = tmp_path_factory.mktemp(f"user-{tested}")
        if WAYS[tested] == "wheel":
            (where / "dist").mkdir()
            shutil.copy2(the_wheel(dist), where / "dist")
        else:
            _clone(where / words[-1])
        command = [sys.executable, "-m", "pip", "--python", str(python), *words[1:]]
        command += ["--quiet", "--disable-pip-version-check", "--no-compile"]
        process = subprocess.run(
            command,
            cwd=where,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            env={**user_env(), "PIP_CONSTRAINT": str(constraints)},
            check=False,
        )
        assert process.returncode == 0, f"{tested}: {process.stdout}"
        return python

    return install


@pytest.mark.deep(
    why="a fresh venv with aws-cdk-lib installed and a real cdk synth in it; make test "
    "builds the wheel and checks its files and metadata (this module), make test-min runs "
    "the lowest aws-cdk-lib"
)
@pytest.mark.parametrize("tested", ["latest", "lowest"])
def test_the_wheel_synthesizes_the_readme_example_in_a_fresh_venv(
    tested: str, installed: Callable[[str], Path], tmp_path: Path
) -> None:
    python = installed(tested)
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
