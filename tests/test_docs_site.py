"""The docs site: its own checks (docs/hooks.py, run by ``mkdocs build --strict``: an API page
per public package, none left over), and the built site's HTML: an API entry for every public
name (``__all__`` of every public package) describing each parameter of its signature, and
no cross-reference left as raw text."""

from __future__ import annotations

import ast
import dataclasses
import enum
import importlib
import importlib.util
import inspect
import os
import re
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from html.parser import HTMLParser
from pathlib import Path
from types import ModuleType

import pytest

from tests.conftest import ROOT


def _hooks() -> ModuleType:
    spec = importlib.util.spec_from_file_location("docs_hooks", ROOT / "docs" / "hooks.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


hooks = _hooks()
PUBLISHED = hooks.PUBLISHED


def _tree(tmp_path: Path, packages: list[str], pages: dict[str, str]) -> tuple[Path, Path]:
    root, api = tmp_path / "repo", tmp_path / "repo" / "docs" / "api"
    for package in ["", *packages]:
        folder = root / "hyperpod_constructs" / package
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "__init__.py").write_text("")
    api.mkdir(parents=True)
    for name, module in pages.items():
        (api / name).write_text(f"# {module}\n\n::: {module}\n")
    return root, api


def test_the_repository_has_one_api_page_per_public_package_and_top_level_class() -> None:
    assert hooks.stale_api_pages(classes=hooks.top_level_classes()) == []
    assert set(hooks.documented_packages()) == hooks.public_packages()
    assert {"HyperPodSlurmCluster", "MinCountGate", "InstanceGroup", "MinCountGateOptions"} <= (
        set(hooks.documented_classes())
    )


def test_a_class_without_its_page_fails(tmp_path: Path) -> None:
    root, api = _tree(tmp_path, [], {"index.md": "hyperpod_constructs"})
    (api / "Old.md").write_text("# Old\n\n::: hyperpod_constructs.Old\n")
    assert hooks.stale_api_pages(root, api, classes={"Cluster"}) == [
        "API reference: class hyperpod_constructs.Cluster has no page "
        "(add docs/api/Cluster.md with '::: hyperpod_constructs.Cluster')",
        "API reference: docs/api/Old.md documents hyperpod_constructs.Old, which is not a class "
        "of the top level",
    ]


def test_a_package_without_a_page_and_a_page_without_a_package_fail(tmp_path: Path) -> None:
    root, api = _tree(
        tmp_path,
        ["gate", "sizing", "_private"],
        {"index.md": "hyperpod_constructs", "gate.md": "hyperpod_constructs.gate"}
        | {"old.md": "hyperpod_constructs.old"},
    )
    assert hooks.stale_api_pages(root, api) == [
        "API reference: package hyperpod_constructs.sizing has no page "
        "(add docs/api/<name>.md with '::: hyperpod_constructs.sizing')",
        "API reference: docs/api/old.md documents hyperpod_constructs.old, "
        "which is not a public package",
    ]


def _mkdocs_config() -> dict[str, object]:
    import yaml

    class _Loader(yaml.SafeLoader):
        pass

    _Loader.add_multi_constructor("tag:yaml.org,2002:python/", lambda *_: None)
    config: dict[str, object] = yaml.load((ROOT / "mkdocs.yml").read_text(), Loader=_Loader)
    return config


def test_the_lists_of_public_sub_packages_are_the_one_list() -> None:
    """The package folders, the docstring, the navigation and docs/versioning.md list the
    public sub-packages as ``_SUBPACKAGES`` does, in its order."""
    import hyperpod_constructs

    listed = [f"hyperpod_constructs{name}" for name in hyperpod_constructs._SUBPACKAGES]
    assert hooks.subpackages() == listed
    assert hooks.subpackage_problems(ROOT, _mkdocs_config()["nav"]) == []
    assert hooks.public_packages() == {"hyperpod_constructs", *listed}


def test_a_list_of_sub_packages_that_disagrees_fails(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    for folder in ("hyperpod_constructs/gate", "hyperpod_constructs/tools/plan", "docs"):
        (root / folder).mkdir(parents=True)
        (root / folder / "__init__.py").write_text("")
    (root / "hyperpod_constructs" / "__init__.py").write_text(
        '"""Top.\n\n- ``hyperpod_constructs.gate``: the gate;\n"""\n'
        "_SUBPACKAGES = ('.gate', '.sizing')\n"
    )
    (root / "docs" / "versioning.md").write_text(
        "every name of its public sub-packages (`hyperpod_constructs.sizing`, `.gate`), ...\n"
    )
    nav = [{"API reference": [{"hyperpod_constructs": "api/index.md"}]}]
    nav[0]["API reference"] += [{"hyperpod_constructs.gate": "api/gate.md"}]
    nav[0]["API reference"] += [{"hyperpod_constructs.sizing": "api/sizing.md"}]
    listed = "['hyperpod_constructs.gate', 'hyperpod_constructs.sizing']"
    where = "(_SUBPACKAGES of hyperpod_constructs/__init__.py)"
    assert hooks.subpackage_problems(root, nav) == [
        "package hyperpod_constructs.tools.plan is missing from _SUBPACKAGES of "
        "hyperpod_constructs/__init__.py",
        "the docstring of hyperpod_constructs/__init__.py lists the public sub-packages "
        f"['hyperpod_constructs.gate'], not {listed} {where}",
        "docs/versioning.md lists the public sub-packages "
        f"['hyperpod_constructs.sizing', 'hyperpod_constructs.gate'], not {listed} {where}",
    ]
    # A navigation that leaves a sub-package out (or lists it out of order) fails too.
    nav[0]["API reference"].reverse()
    assert (
        "the API reference in mkdocs.yml's nav lists the public sub-packages "
        f"['hyperpod_constructs.sizing', 'hyperpod_constructs.gate'], not {listed} {where}"
    ) in hooks.subpackage_problems(root, nav)


# -- the built site -------------------------------------------------------------------------
# The checks above read the Markdown; these read the HTML that `mkdocs build --strict` writes,
# which is what a user sees: the API reference of every public name.

VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "wbr"}
RAW_REFERENCE = re.compile(
    r"\]\[(?:[A-Za-z_][\w.]*)?\]|:(?:mod|func|data|class|meth|attr|exc|obj):`"
)
"""A cross-reference Markdown or a Sphinx role left as text: ``[`Foo`][path]``, ``[Foo][]``."""


@dataclasses.dataclass
class Element:
    tag: str
    attrs: dict[str, str]
    parent: Element | None = None
    children: list[Element | str] = dataclasses.field(default_factory=list)

    @property
    def classes(self) -> set[str]:
        return set(self.attrs.get("class", "").split())

    def walk(self) -> Iterator[Element]:
        yield self
        for child in self.children:
            if isinstance(child, Element):
                yield from child.walk()

    def text(self) -> str:
        return "".join(c if isinstance(c, str) else c.text() for c in self.children)

    def inside(self, tag: str) -> bool:
        node = self.parent
        while node is not None:
            if node.tag == tag:
                return True
            node = node.parent
        return False


class _TreeBuilder(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.root = Element("document", {})
        self.current = self.root

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        element = Element(tag, {k: v or "" for k, v in attrs}, self.current)
        self.current.children.append(element)
        if tag not in VOID:
            self.current = element

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.current.children.append(Element(tag, {k: v or "" for k, v in attrs}, self.current))

    def handle_endtag(self, tag: str) -> None:
        node: Element | None = self.current
        while node is not None and node.tag != tag:
            node = node.parent
        if node is not None and node.parent is not None:
            self.current = node.parent

    def handle_data(self, data: str) -> None:
        self.current.children.append(data)


def parse_html(path: Path) -> Element:
    builder = _TreeBuilder()
    builder.feed(path.read_text())
    return builder.root


@pytest.fixture(scope="session")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The docs site as ``make docs`` builds it (strict: any warning fails), in a fresh folder."""
    out = tmp_path_factory.mktemp("site")
    build = [sys.executable, "-m", "mkdocs", "build", "--strict", "--quiet", "-d", str(out)]
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    result = subprocess.run(build, cwd=ROOT, capture_output=True, text=True, env=env)
    assert result.returncode == 0, result.stdout + result.stderr
    assert (result.stdout, result.stderr) == ("", ""), "make docs must be quiet"
    return out


def public_names() -> list[tuple[str, str]]:
    """(namespace, name) for every name in ``__all__`` of every public namespace."""
    return [
        (namespace, name)
        for namespace in sorted(hooks.public_packages())
        for name in getattr(importlib.import_module(namespace), "__all__", [])
    ]


def _contents(heading: Element) -> Element:
    """The ``doc-contents`` of the object whose heading this is."""
    obj = heading.parent
    assert obj is not None
    (contents,) = [
        c for c in obj.children if isinstance(c, Element) and "doc-contents" in c.classes
    ]
    return contents


def _own(element: Element) -> Iterator[Element]:
    """The elements of an object's contents, without those of its members' entries."""
    for child in element.children:
        if isinstance(child, Element):
            if "doc-object" in child.classes or "doc-children" in child.classes:
                continue
            yield child
            yield from _own(child)


def documented_parameters(contents: Element) -> set[str]:
    """The names in the first column of the object's own "Parameters" tables."""
    return set(_parameter_rows(contents))


def signature_parameters(value: object) -> list[str]:
    """What a user passes: the parameters of a function or of a class's constructor."""
    if isinstance(value, type):
        if issubclass(value, enum.Enum) or getattr(value, "_is_protocol", False):
            return []  # enum members are looked up; protocols and interfaces implemented
        init = value.__init__
        if not inspect.isfunction(init) or not init.__module__.startswith(hooks.PACKAGE):
            return []  # inherited from elsewhere (object, Exception, aws_cdk.Resource)
        value = value.__init__  # the class's own: jsii's metaclass hides it behind *args
    if not callable(value):
        return []
    parameters = inspect.signature(value).parameters
    return [name for name in parameters if name not in {"self", "cls"}]


@pytest.fixture(scope="session")
def api_pages(site: Path) -> dict[str, Element]:
    """Namespace, or top-level class name, -> its parsed API page."""
    pages = {**hooks.documented_packages(), **hooks.documented_classes()}
    return {
        name: parse_html(site / "api" / page.replace(".md", ".html"))
        for name, page in pages.items()
    }


def entry(page: Element, path: str) -> Element:
    """The contents of the API entry with this id, which must exist and say something."""
    headings = [e for e in page.walk() if e.attrs.get("id") == path]
    assert headings and "doc-heading" in headings[0].classes, f"{path}: no entry in the API page"
    contents = _contents(headings[0])
    assert contents.text().strip(), f"{path}: the entry is empty"
    return contents


def undocumented(contents: Element, path: str, value: object) -> list[str]:
    """The parameters of ``value``'s signature that its entry does not describe, neither in
    its "Parameters" table nor as a member entry (a dataclass field's docstring)."""
    documented = documented_parameters(contents)
    members = {e.attrs.get("id") for e in contents.walk() if "doc-heading" in e.classes}
    return [
        parameter
        for parameter in signature_parameters(value)
        if parameter not in documented and f"{path}.{parameter}" not in members
    ]


def public_methods(value: object) -> list[str]:
    """The public methods a class defines itself (factories such as ``InstanceGroup.compute``,
    ``grant_*``, ``metric_*``)."""
    if not isinstance(value, type) or issubclass(value, enum.Enum):
        return []
    return [
        name
        for name, member in vars(value).items()
        if not name.startswith("_") and inspect.isfunction(getattr(member, "__func__", member))
    ]


def is_construct_or_value_type(value: object) -> bool:
    """A class an app builds or calls (not an enum, an error, or an interface it implements)."""
    return (
        isinstance(value, type)
        and not issubclass(value, enum.Enum | BaseException)
        and not getattr(value, "_is_protocol", False)  # IHyperPodCluster
    )


PUBLIC_NAMES = public_names()


@pytest.mark.parametrize(
    ("namespace", "name"), PUBLIC_NAMES, ids=[f"{n}.{m}" for n, m in PUBLIC_NAMES]
)
def test_every_public_name_has_an_entry_describing_each_parameter(
    api_pages: dict[str, Element], namespace: str, name: str
) -> None:
    """Of every public name: its constructor's or function's parameters; of the top level's
    classes (what an app writes), each public method's too."""
    path, page = f"{namespace}.{name}", api_pages[namespace]
    if namespace == hooks.PACKAGE and name in api_pages:
        page = api_pages[name]  # a class of the top level: its own page
    value = getattr(importlib.import_module(namespace), name)
    contents = entry(page, path)
    if namespace == hooks.PACKAGE and is_construct_or_value_type(value):
        examples = [e for e in _own(contents) if e.tag == "pre"]
        assert examples, f"{path}: no example in its entry"
    missing = {path: undocumented(contents, path, value)}
    if namespace == hooks.PACKAGE:
        for method in public_methods(value):
            member = f"{path}.{method}"
            missing[member] = undocumented(entry(page, member), member, getattr(value, method))
    assert {where: names for where, names in missing.items() if names} == {}


def test_no_cross_reference_renders_as_text(site: Path) -> None:
    """A reference that resolved nowhere stays Markdown (``[`Foo`][path]``) or a Sphinx role
    (``:class:`Foo```) in the HTML; outside code blocks neither may appear."""
    raw: list[str] = []
    for page in sorted(site.rglob("*.html")):
        if PUBLISHED in page.relative_to(site).parts:
            continue  # repository files published as they are
        root = parse_html(page)
        for element in root.walk():
            if element.tag in {"pre", "script", "style"} or element.inside("pre"):
                continue
            text = "".join(
                c if isinstance(c, str) else f"`{c.text()}`" if c.tag == "code" else ""
                for c in element.children
            )
            raw += [
                f"{page.relative_to(site)}: ...{text[max(0, m.start() - 60) : m.end() + 10]}..."
                for m in RAW_REFERENCE.finditer(text)
            ]
    assert raw == [], "\n".join(raw)


# -- the API reference shaped like aws-cdk-lib's ------------------------------------------------


def _parameter_rows(contents: Element) -> dict[str, tuple[str, str]]:
    """Parameter name -> (description, default) of an entry's own "Parameters" tables (either
    empty where the table has no such column)."""
    rows: dict[str, tuple[str, str]] = {}
    sections = list(_own(contents))
    for index, element in enumerate(sections):
        if "doc-section-title" in element.classes and element.text().startswith("Parameters"):
            table = next(e for e in sections[index:] if e.tag == "table")
            header = [e.text().strip() for e in table.walk() if e.tag == "th"]
            for row in table.walk():
                cells = [c for c in row.children if isinstance(c, Element) and c.tag == "td"]
                if row.tag == "tr" and cells:
                    text = dict(
                        zip(header, (" ".join(c.text().split()) for c in cells), strict=True)
                    )
                    name = " ".join(cells[0].text().split())
                    rows[name] = (text.get("Description", ""), text.get("Default", ""))
    return rows


def test_each_default_is_the_one_the_docstring_states(api_pages: dict[str, Element]) -> None:
    """Not ``None`` where the text says "derived from the construct path" or "a new role"."""
    path = "hyperpod_constructs.HyperPodSlurmCluster"
    rows = _parameter_rows(entry(api_pages["HyperPodSlurmCluster"], path))
    for name, starts in {
        "cluster_name": "derived from the construct path",
        "execution_role": "a new role",
        "vpc_subnets": "the VPC's private subnets",
        "security_groups": "a new group",
        "readiness_gate": "on, with the defaults of MinCountGateOptions",
    }.items():
        assert rows[name][1].startswith(starts), (name, rows[name])
    # Everywhere: a description that states a default is what the Default column shows.
    griffe_defaults = _docs_module("griffe_defaults")
    wrong = [
        f"{page_name}: {name}: {default!r}, the text says {stated!r}"
        for page_name, page in api_pages.items()
        for heading in page.walk()
        if "doc-heading" in heading.classes and heading.attrs.get("id")
        for name, (description, default) in _parameter_rows(_contents(heading)).items()
        if (stated := griffe_defaults.stated_default(description)) is not None and default != stated
    ]
    assert wrong == []


def _docs_module(name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, ROOT / "docs" / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_cluster_base_class_page_lists_its_constructor_parameters(
    api_pages: dict[str, Element],
) -> None:
    path = "hyperpod_constructs.HyperPodClusterBase"
    rows = _parameter_rows(entry(api_pages["HyperPodClusterBase"], path))
    assert {"scope", "id", "account", "region"} <= set(rows)


def test_a_constructs_page_names_the_cloudformation_resource_it_makes(
    api_pages: dict[str, Element],
) -> None:
    """The L1 types come from a synthesized cluster, not typed in."""
    from aws_cdk import Stack

    from hyperpod_constructs import HyperPodInstanceType, HyperPodSlurmCluster, InstanceGroup
    from tests.conftest import new_app

    cpu = HyperPodInstanceType.ML_C5_4XLARGE
    cluster = HyperPodSlurmCluster(
        Stack(new_app(), "S"),
        "Cluster",
        instance_groups=[
            InstanceGroup.controller("controller", instance_type=cpu),
            InstanceGroup.compute(
                "a", instance_type=cpu, instance_count=2, min_instance_count=2, partition="a"
            ),
        ],
    )
    assert cluster.min_count_gate is not None
    made = {
        "HyperPodSlurmCluster": cluster.node.default_child.cfn_resource_type,  # type: ignore[union-attr]
        "MinCountGate": cluster.min_count_gate.wait_condition.cfn_resource_type,
    }
    for name, resource_type in made.items():
        assert f"CloudFormation: {resource_type}" in " ".join(api_pages[name].text().split())


def test_the_top_level_page_links_every_class_page(site: Path) -> None:
    index = parse_html(site / "api" / "index.html")
    links = {e.attrs.get("href") for e in index.walk() if e.tag == "a"}
    assert {f"{name}.html" for name in hooks.top_level_classes()} <= links


def test_parameter_tables_fit_the_page(site: Path) -> None:
    """mkdocstrings never breaks code in a table cell (``word-break: normal !important``), so
    one long name in the Type, Description or Default column made a table wider than the
    content column and Material hid the Default column behind a scroll bar at 1,400 px. The
    site's stylesheet, loaded by every page, lets the columns after the type wrap (names and
    rule ids stay whole). Measured with headless Chromium at 1,400 px: no table of the site
    scrolls (this test reads the CSS; tests/test_docs_browser.py measures the pages)."""
    css = (site / "stylesheets" / "extra.css").read_text()
    rule = re.search(r"\.doc-contents td:nth-child\(n \+ 3\) code \{(?P<body>[^}]*)\}", css)
    assert rule is not None, css
    assert "overflow-wrap: anywhere" in rule["body"]
    assert "word-break: normal !important" in rule["body"]  # overrides mkdocstrings' own
    for page in sorted(site.rglob("*.html")):
        if PUBLISHED in page.relative_to(site).parts or page.name == "404.html":
            continue
        sheets = [e.attrs.get("href", "") for e in parse_html(page).walk() if e.tag == "link"]
        assert any(href.endswith("stylesheets/extra.css") for href in sheets), page


# -- every rule id is a URL --------------------------------------------------------------------


def test_every_rule_has_an_anchor_under_its_own_heading(site: Path) -> None:
    from hyperpod_constructs.validation.registry import RULES, rule_anchor

    page = parse_html(site / "validation.html")
    elements = list(page.walk())
    headings = [e for e in elements if e.tag in {"h2", "h3"}]
    anchors = {e.attrs["id"]: e for e in elements if "id" in e.attrs}
    for rule_id in RULES:
        anchor = anchors.get(rule_anchor(rule_id))
        assert anchor is not None, f"{rule_id}: no anchor #{rule_anchor(rule_id)}"
        assert "rule-id" in anchor.classes and anchor.text() == rule_id
        assert anchor.attrs.get("href") == f"#{rule_anchor(rule_id)}"
        before = [h for h in headings if elements.index(h) < elements.index(anchor)]
        assert before[-1].text().strip().rstrip("¶") == "Every rule", rule_id
    css = (site / "stylesheets" / "extra.css").read_text()
    assert re.search(r"\.rule-id[^{]*\{\s*white-space: nowrap;", css)


def test_each_rules_source_reads_as_written(site: Path) -> None:
    """The Source column shows a rule's words as the registry has them: a pattern such as
    ``[a-zA-Z0-9](-*[a-zA-Z0-9])*`` was a link to ``-*[a-zA-Z0-9]`` and emphasis, and
    ``\\.`` lost its backslash. No link of the table leaves for anything but a page of AWS's
    or a rule of the table."""
    from hyperpod_constructs.validation.registry import RULES, rule_anchor

    page = parse_html(site / "validation.html")
    anchors = {e.attrs["id"]: e for e in page.walk() if "id" in e.attrs}
    wrong = []
    for rule_id, rule in RULES.items():
        row = anchors[rule_anchor(rule_id)]
        while row.tag != "tr" and row.parent is not None:
            row = row.parent
        cells = [c for c in row.children if isinstance(c, Element) and c.tag == "td"]
        shown = " ".join(cells[-1].text().split())
        if rule.source is not None and not shown.endswith(" ".join(rule.source.says.split())):
            wrong.append(f"{rule_id}: {shown!r}")
        links = [e.attrs.get("href", "") for e in row.walk() if e.tag == "a"]
        wrong += [
            f"{rule_id}: link to {href!r}"
            for href in links
            if not href.startswith(("https://", "#"))
        ]
    assert wrong == []


def test_site_search_finds_a_rule_by_its_id(site: Path) -> None:
    """The search splits the query and the pages with the site's separator: a rule id must
    stay one word (it was four: HP, MIN, ABOVE, COUNT), found on the rules page."""
    import json

    from hyperpod_constructs.validation.registry import RULES

    index = json.loads((site / "search" / "search_index.json").read_text())
    separator = re.compile(index["config"]["separator"])
    words = {
        word.lower()
        for doc in index["docs"]
        if doc["location"].startswith("validation.html")
        for word in separator.split(re.sub(r"<[^>]+>", " ", doc["text"]))
    }
    for rule_id in RULES:
        assert separator.split(rule_id) == [rule_id]
        assert rule_id.lower() in words, rule_id


# -- a home page that starts -------------------------------------------------------------------


def test_the_home_page_says_how_to_start(site: Path) -> None:
    """What it is, the install command, a short example with a gated group and a dependant,
    three things to read next."""
    page = parse_html(site / "index.html")
    blocks = [e.text() for e in page.walk() if e.tag == "pre"]
    assert any("pip install" in block for block in blocks)
    (example,) = [block for block in blocks if "HyperPodSlurmCluster(" in block]
    assert "min_instance_count=" in example and ".node.add_dependency(cluster.ready)" in example
    assert len(example.strip().splitlines()) <= 35
    (read_next,) = [e for e in page.walk() if e.tag == "h2" and "Read next" in e.text()]
    siblings = read_next.parent.children if read_next.parent else []
    after = siblings[siblings.index(read_next) :]
    (steps,) = [e for e in after if isinstance(e, Element) and e.tag == "ol"][:1]
    assert len([e for e in steps.children if isinstance(e, Element) and e.tag == "li"]) == 3


CONTRIBUTOR_PAGES = {"layout.md", "performance.md", "integ.md", "gate-runtime.md"}


def test_user_guides_and_contributor_pages_are_apart_in_the_navigation() -> None:
    nav = _mkdocs_config()["nav"]
    assert isinstance(nav, list)
    sections = {next(iter(item)): item[next(iter(item))] for item in nav}
    guides = {next(iter(entry.values())) for entry in sections["Guides"]}
    contributing = {next(iter(entry.values())) for entry in sections["Contributing"]}
    assert not guides & CONTRIBUTOR_PAGES
    assert contributing == CONTRIBUTOR_PAGES


def test_the_guide_starts_with_a_cluster_and_no_page_says_make_docs(site: Path) -> None:
    guide = parse_html(site / "guide.html")
    (first,) = [e for e in guide.walk() if e.tag == "h2"][:1]
    assert first.text().strip().rstrip("¶") == "A cluster"
    for page in sorted(site.rglob("*.html")):
        if PUBLISHED in page.relative_to(site).parts or page.name == "changelog.html":
            continue
        assert "make docs" not in parse_html(page).text(), page


# -- every public attribute on its class page --------------------------------------------------


def assigned_attributes(cls: type) -> set[str]:
    """The public names assigned on ``self`` in any method of ``cls`` (read from its source
    with Python's own parser, not griffe's)."""
    try:
        source = textwrap.dedent(inspect.getsource(cls))
    except (OSError, TypeError):
        return set()
    return {
        node.attr
        for node in ast.walk(ast.parse(source))
        if isinstance(node, ast.Attribute)
        and isinstance(node.ctx, ast.Store)
        and isinstance(node.value, ast.Name)
        and node.value.id == "self"
        and not node.attr.startswith("_")
    }


def public_attributes(cls: type) -> set[str]:
    """What a user reads on a class or its instances: the public names the class and its bases
    in this package define (methods, properties, constants, enum members, fields) and those
    their methods assign on ``self``."""
    names: set[str] = set()
    for base in cls.__mro__:
        if not base.__module__.startswith(hooks.PACKAGE):
            continue
        names |= set(vars(base)) | set(getattr(base, "__annotations__", {}))
        names |= assigned_attributes(base)
    return {name for name in names if not name.startswith("_")}


def documented_attributes(contents: Element, path: str) -> set[str]:
    """The names the entry documents: its member entries (``path.name``) and the first cell
    of each row of its own tables (the parameters a field is set from, an enum's members)."""
    members = {
        e.attrs["id"].removeprefix(f"{path}.")
        for e in contents.walk()
        if "doc-heading" in e.classes and e.attrs.get("id", "").startswith(f"{path}.")
    }
    cells = {
        " ".join(cells[0].text().split()).strip("`")
        for row in _own(contents)
        if row.tag == "tr"
        and (cells := [c for c in row.children if isinstance(c, Element) and c.tag == "td"])
    }
    return members | cells


PUBLIC_CLASSES = [
    (namespace, name)
    for namespace, name in PUBLIC_NAMES
    if isinstance(getattr(importlib.import_module(namespace), name), type)
]


@pytest.mark.parametrize(
    ("namespace", "name"), PUBLIC_CLASSES, ids=[f"{n}.{m}" for n, m in PUBLIC_CLASSES]
)
def test_every_public_attribute_is_on_its_class_page(
    api_pages: dict[str, Element], namespace: str, name: str
) -> None:
    """Including those a method sets (``MinCountGate.topic``, set where the gate creates its
    topic), a member that overrides a documented one, and an enum's members. A name that
    aliases a class of another name (``policy.PolicySeverity = Severity``): on that class's
    entry."""
    cls = getattr(importlib.import_module(namespace), name)
    if cls.__name__ != name:
        namespace, name = next(
            (ns, n)
            for ns, n in PUBLIC_CLASSES
            if n == cls.__name__ and getattr(importlib.import_module(ns), n) is cls
        )
    path, page = f"{namespace}.{name}", api_pages[namespace]
    if namespace == hooks.PACKAGE and name in api_pages:
        page = api_pages[name]
    missing = public_attributes(cls) - documented_attributes(entry(page, path), path)
    assert sorted(missing) == []


def test_the_attributes_read_from_the_source_are_those_a_real_gate_has() -> None:
    """The source-derived list is complete: a gate with its opt-ins (a topic it creates, a
    dashboard) and its cluster have no public instance attribute the list misses."""
    from aws_cdk import Stack

    from hyperpod_constructs import (
        HyperPodInstanceType,
        HyperPodSlurmCluster,
        InstanceGroup,
        MinCountGate,
        MinCountGateOptions,
    )
    from tests.conftest import new_app

    cpu = HyperPodInstanceType.ML_C5_4XLARGE
    cluster = HyperPodSlurmCluster(
        Stack(new_app(), "S"),
        "Cluster",
        readiness_gate=MinCountGateOptions(create_notification_topic=True, dashboard=True),
        instance_groups=[
            InstanceGroup.controller("controller", instance_type=cpu),
            InstanceGroup.compute(
                "a", instance_type=cpu, instance_count=2, min_instance_count=2, partition="a"
            ),
        ],
    )
    gate = cluster.min_count_gate
    assert isinstance(gate, MinCountGate) and gate.topic is not None
    for value in (gate, cluster):
        instance = {name for name in vars(value) if not name.startswith("_")}
        assert "topic" in instance or value is cluster
        assert instance - public_attributes(type(value)) == set()
