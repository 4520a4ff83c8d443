"""A CreateCluster request (the JSON ``aws sagemaker create-cluster --cli-input-json`` takes)
as a typed Python CDK app using this library. Pure: a request in, source text out.

Every field of the request is either translated or reported as a :class:`ConversionError`
naming it: nothing is dropped. Existing roles, subnets and security groups are imported by
ARN / ID (never recreated).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Mapping

from ..._core.layout import LEGACY_LAYOUT_FILE
from .._aws.shapes import ShapeError, check
from .groups import _group, _Layout, _layouts, _lifecycle, _network
from .reading import UNSUPPORTED, ConversionError, Options, _expect, _Fields, _Imports
from .source import Call, Code, DictOf, ListOf, Raw, literal
from .writer import _module

__all__ = ["UNSUPPORTED", "ConversionError", "Options", "convert_request"]


def convert_request(
    request: object,
    provisioning_parameters: object | None = None,
    options: Options | None = None,
) -> tuple[str, list[str]]:
    """The app's source text, and notes for the user (what changed with ``--continuous``).

    :param request: a ``CreateCluster`` request, as parsed JSON (the AWS CLI's
        ``--cli-input-json`` shape).
    :param provisioning_parameters: the cluster's ``provisioning_parameters.json``, parsed, for
        a Standard-mode cluster whose Slurm layout lives there. Default: none.
    :param options: how to convert. Default: ``Options()``.
    :raises ConversionError: a field the library cannot express, naming it.
    """
    options = _checked(Options() if options is None else options)
    try:
        check(request, "CreateCluster")
    except ShapeError as error:
        raise ConversionError(error.field, error.problem) from None
    top = _Fields.of(request, "")
    imports = _Imports()
    notes: list[str] = []
    name = _expect(top.require("ClusterName"), str, "ClusterName")
    groups = _expect(top.require("InstanceGroups"), list, "InstanceGroups")
    if not groups:
        raise ConversionError("InstanceGroups", "at least one instance group is required")
    mode = top.take("NodeProvisioningMode")
    if mode not in (None, "Continuous"):
        raise ConversionError("NodeProvisioningMode", f"expected 'Continuous', got {mode!r}")
    continuous = mode == "Continuous" or options.continuous
    orchestrator = top.take("Orchestrator")
    orchestrator_kwargs: list[tuple[str, Code]] = []
    if orchestrator is not None:
        converting = options.continuous and mode != "Continuous"
        orchestrator_kwargs = _orchestrator(
            orchestrator, continuous, imports, notes, converting=converting
        )

    from_file = all("SlurmConfig" not in g for g in groups if isinstance(g, Mapping))
    adds_slurm_config = mode == "Continuous" and from_file
    if adds_slurm_config and provisioning_parameters is None:
        raise ConversionError(
            "InstanceGroups[].SlurmConfig",
            "NodeProvisioningMode 'Continuous' takes the Slurm layout from each group's "
            "SlurmConfig (continuous provisioning is not compatible with the lifecycle scripts' "
            f"{LEGACY_LAYOUT_FILE}) and no group has one: add a SlurmConfig to every group, or "
            f"pass the {LEGACY_LAYOUT_FILE} with --provisioning-parameters to convert its layout "
            "into SlurmConfig",
        )
    layouts = _layouts(
        groups, provisioning_parameters, notes, infer=not (options.continuous or continuous)
    )
    legacy = not continuous and from_file
    if adds_slurm_config:
        notes.append(_added_layout_note(groups, layouts))
    if (options.continuous and mode != "Continuous") or adds_slurm_config:
        notes += _legacy_file_notes(groups, provisioning_parameters, from_file=from_file)

    kwargs: list[tuple[str, Code]] = [("cluster_name", literal(name))]
    mode_enum = imports.library("NodeProvisioningMode")
    kwargs.append(
        (
            "node_provisioning_mode",
            Raw(f"{mode_enum.text}.{'CONTINUOUS' if continuous else 'STANDARD'}"),
        )
    )
    if legacy:
        kwargs.append(
            ("slurm_layout", Raw(f"{imports.library('SlurmLayout').text}.LIFECYCLE_SCRIPTS"))
        )
    recovery = top.take("NodeRecovery")
    if recovery is None:
        kwargs.append(("node_recovery", Raw("None")))
    elif recovery in ("Automatic", "None"):
        member = "AUTOMATIC" if recovery == "Automatic" else "NONE"
        kwargs.append(("node_recovery", Raw(f"{imports.library('NodeRecovery').text}.{member}")))
    else:
        raise ConversionError("NodeRecovery", f"expected 'Automatic' or 'None', got {recovery!r}")

    roles = Counter(
        _expect(g.get("ExecutionRole"), str, f"InstanceGroups[{i}].ExecutionRole")
        for i, g in enumerate(groups)
        if isinstance(g, Mapping)
    )
    cluster_role = roles.most_common(1)[0][0] if roles else None
    if cluster_role is not None:
        kwargs.append(("execution_role", imports.existing("role", cluster_role)))
    lifecycles = [g.get("LifeCycleConfig") if isinstance(g, Mapping) else None for g in groups]
    shared_lifecycle = lifecycles[0] if all(lc == lifecycles[0] for lc in lifecycles) else None
    if shared_lifecycle is not None:
        kwargs.append(
            (
                "lifecycle_scripts",
                _lifecycle(shared_lifecycle, "InstanceGroups[0].LifeCycleConfig", imports),
            )
        )

    vpc = top.take("VpcConfig")
    if vpc is not None:
        subnets, security_groups = _network(vpc, "VpcConfig", imports)
        kwargs.append(("vpc_subnets", Call("ec2.SubnetSelection", (), (("subnets", subnets),))))
        kwargs.append(("security_groups", security_groups))

    kwargs += orchestrator_kwargs
    tags = top.take("Tags")
    if tags is not None:
        kwargs.append(("tags", _tags(tags)))

    group_code = [
        _group(
            group,
            f"InstanceGroups[{index}]",
            layouts[index],
            imports,
            cluster_role=cluster_role,
            shared_lifecycle=shared_lifecycle is not None,
            continuous=continuous,
            convert_to_continuous=options.continuous and mode != "Continuous",
            adds_slurm_config=adds_slurm_config,
            notes=notes,
        )
        for index, group in enumerate(groups)
    ]
    kwargs.insert(1, ("instance_groups", ListOf(tuple(group_code))))
    top.done()
    cluster = Call(
        imports.library("HyperPodSlurmCluster").text,
        (Raw("stack"), literal("Cluster")),
        tuple(kwargs),
    )
    return _module(name, cluster, imports, options), notes


STACK_NAME = re.compile(r"[A-Za-z][A-Za-z0-9-]{0,127}")
"""A CloudFormation stack name: a letter, then letters, digits and hyphens, at most 128."""


def _checked(options: object) -> Options:
    """``options`` when every field has its documented type; else the error naming it."""
    if not isinstance(options, Options):
        raise ConversionError("options", f"expected Options(...), got {type(options).__name__}")
    if not isinstance(options.continuous, bool):
        raise ConversionError(
            "options.continuous (--continuous)",
            f"expected True or False, got {options.continuous!r}",
        )
    name = options.stack_name
    if name is not None and (not isinstance(name, str) or not STACK_NAME.fullmatch(name)):
        raise ConversionError(
            "options.stack_name (--stack-name)",
            f"{name!r} is not a CloudFormation stack name: a letter, then letters, digits and "
            "hyphens, at most 128 characters",
        )
    if not isinstance(options.source_name, str):
        raise ConversionError(
            "options.source_name", f"expected the request's file name, got {options.source_name!r}"
        )
    return options


def _added_layout_note(groups: list[object], layouts: list[_Layout]) -> str:
    """What a Continuous-mode request without SlurmConfig gets in the app, and why."""
    described = []
    for index, (group, layout) in enumerate(zip(groups, layouts, strict=True)):
        name = group.get("InstanceGroupName") if isinstance(group, Mapping) else None
        text = f"{name or f'InstanceGroups[{index}]'!r} {layout.node_type}"
        if layout.partition is not None:
            text += f" in partition {layout.partition!r}"
        described.append(text)
    return (
        "NodeProvisioningMode 'Continuous' and no group has a SlurmConfig: continuous "
        "provisioning takes the Slurm layout from each group's SlurmConfig, not from "
        f"{LEGACY_LAYOUT_FILE}, so the app adds one to every group, with the layout of the "
        f"{LEGACY_LAYOUT_FILE} given: " + ", ".join(described) + "; the template differs from "
        "the request by these SlurmConfig"
    )


def _legacy_file_notes(
    groups: list[object], parameters: object | None, *, from_file: bool
) -> list[str]:
    """What to do with the legacy layout file in each lifecycle folder of a request converted
    to continuous provisioning, which is not compatible with it (the continuous provisioning
    guide; the migration guide removes it from every ``SourceS3Uri``)."""
    name = LEGACY_LAYOUT_FILE
    if isinstance(parameters, Mapping) and "slurm_configurations" in parameters:
        raise ConversionError(
            f"{name}.slurm_configurations",
            "a multi-head cluster cannot move to continuous provisioning (multi-head node "
            "configuration is not supported with it): convert without --continuous",
        )
    folders: dict[str, list[str]] = {}
    for index, group in enumerate(groups):
        config = group.get("LifeCycleConfig") if isinstance(group, Mapping) else None
        uri = config.get("SourceS3Uri") if isinstance(config, Mapping) else None
        if isinstance(uri, str):
            label = group.get("InstanceGroupName") if isinstance(group, Mapping) else None
            folders.setdefault(uri, []).append(str(label or f"InstanceGroups[{index}]"))
    notes = []
    for uri, names in folders.items():
        where = f"lifecycle folder {uri!r} (group{'s' if len(names) > 1 else ''} "
        where += ", ".join(map(repr, names)) + ")"
        if from_file:
            held = f"holds the {name} this layout came from"
        else:
            held = f"may still hold a {name}"
        notes.append(
            f"{where} {held}: back it up, then delete it from that folder before deploying: "
            "clusters that rely on it are not compatible with continuous provisioning (the "
            "layout is now each group's SlurmConfig, and HyperPod refuses a SLURM Orchestrator "
            f"config together with a {name})"
        )
    return notes


def _orchestrator(
    value: object, continuous: bool, imports: _Imports, notes: list[str], *, converting: bool
) -> list[tuple[str, Code]]:
    config = _Fields.of(value, "Orchestrator")
    slurm_value = config.take("Slurm")
    config.done()
    if slurm_value is None:
        raise ConversionError("Orchestrator", 'expected {"Slurm": {...}}')
    slurm = _Fields.of(slurm_value, "Orchestrator.Slurm")
    found: list[tuple[str, Code]] = []
    strategy = slurm.take("SlurmConfigStrategy")
    if strategy is not None:
        if strategy not in ("Overwrite", "Managed", "Merge"):
            raise ConversionError(
                "Orchestrator.Slurm.SlurmConfigStrategy", f"unknown value {strategy!r}"
            )
        if continuous and not converting:
            raise ConversionError(
                "Orchestrator.Slurm.SlurmConfigStrategy",
                "HyperPod rejects it with NodeProvisioningMode 'Continuous' (the layout comes "
                "from each group's SlurmConfig)",
            )
        if continuous:
            notes.append(
                "Orchestrator.Slurm.SlurmConfigStrategy left out: Continuous mode rejects it "
                "(the layout comes from each group's SlurmConfig)"
            )
        else:
            cls = imports.library("SlurmConfigStrategy").text
            found.append(("slurm_config_strategy", Raw(f"{cls}.{strategy.upper()}")))
    database = slurm.take("AccountingDatabase")
    if database is not None:
        found.append(("accounting_database", _accounting(database, imports)))
    slurm.done()
    if not found:
        found.append(("declare_slurm_orchestrator", Raw("True")))
    return found


def _accounting(value: object, imports: _Imports) -> Code:
    path = "Orchestrator.Slurm.AccountingDatabase"
    config = _Fields.of(value, path)
    kwargs: list[tuple[str, Code]] = [
        ("endpoint", literal(_expect(config.require("Endpoint"), str, f"{path}.Endpoint")))
    ]
    secret = _expect(config.require("SecretArn"), str, f"{path}.SecretArn")
    kwargs.append(("secret", imports.existing("secret", secret)))
    name, port = config.take("Name"), config.take("Port")
    if name is not None:
        kwargs.append(("database_name", literal(_expect(name, str, f"{path}.Name"))))
    if port is not None:
        kwargs.append(("port", literal(_expect(port, int, f"{path}.Port"))))
    config.done()
    return Call(imports.library("AccountingDatabase").text, (), tuple(kwargs))


def _tags(value: object) -> Code:
    entries: list[tuple[str, Code]] = []
    seen: dict[str, int] = {}
    for index, tag in enumerate(_expect(value, list, "Tags")):
        config = _Fields.of(tag, f"Tags[{index}]")
        key = _expect(config.require("Key"), str, f"Tags[{index}].Key")
        if key in seen:
            raise ConversionError(
                f"Tags[{index}].Key", f"{key!r} is also the key of Tags[{seen[key]}]"
            )
        seen[key] = index
        text = config.take("Value")
        config.done()
        entries.append(
            (key, literal(_expect(text if text is not None else "", str, f"Tags[{index}].Value")))
        )
    return DictOf(tuple(entries))
