"""``convert`` never changes a request silently: generated Slurm layouts (a SlurmConfig on
every group or none, Standard or Continuous mode, with or without a generated
``provisioning_parameters.json``, ``--continuous`` or not) are either refused with a
``ConversionError`` or converted into an app whose synthesized cluster equals the request,
except where a note names the group and the field that changed.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hyperpod_constructs.tools.convert import ConversionError, Options, convert_request
from tests.support.depth import examples
from tests.test_convert import comparable, converted_cluster, request_of

BASE = "adt-terraform-slurm"
CONTROLLER, LOGIN, COMPUTE = "controller-machine", "login-nodes", "compute-nodes"
PARTITIONS = ["dev", COMPUTE, "ml.g5.8xlarge", None]


@st.composite
def layouts(draw: st.DrawFn) -> tuple[dict[str, Any], dict[str, Any] | None, bool]:
    """(request, provisioning_parameters.json or None, --continuous)."""
    request = request_of(BASE)
    if draw(st.booleans()):
        request["NodeProvisioningMode"] = "Continuous"
    if draw(st.booleans()):
        partition = draw(st.sampled_from(["dev", "gpu", COMPUTE]))
        configs = {
            CONTROLLER: {"NodeType": "Controller"},
            LOGIN: {"NodeType": "Login"},
            COMPUTE: {"NodeType": "Compute", "PartitionNames": [partition]},
        }
        for group in request["InstanceGroups"]:
            group["SlurmConfig"] = configs[group["InstanceGroupName"]]
    parameters: dict[str, Any] | None = None
    if draw(st.booleans()):
        workers = [
            {"instance_group_name": COMPUTE, "partition_name": draw(st.sampled_from(PARTITIONS))}
        ]
        if draw(st.booleans()):  # the login group listed as a worker too (AWS's Terraform module)
            workers.append({"instance_group_name": LOGIN, "partition_name": "dev"})
        parameters = {
            "version": "1.0.0",
            "workload_manager": "slurm",
            "controller_group": CONTROLLER,
            "worker_groups": draw(st.permutations(workers)),
        }
        if draw(st.booleans()):
            parameters["login_group"] = LOGIN
    return request, parameters, draw(st.booleans())


def _differences(request: dict[str, Any], synthesized: dict[str, Any]) -> list[tuple[str, str]]:
    """(group name or "", field) for every field of the cluster that differs."""
    found = []
    given, made = comparable(request), comparable(synthesized)
    for key in sorted(set(given) | set(made)):
        if key != "InstanceGroups" and given.get(key) != made.get(key):
            found.append(("", key))
    made_groups = {g["InstanceGroupName"]: g for g in made["InstanceGroups"]}
    for group in given["InstanceGroups"]:
        name = group["InstanceGroupName"]
        other = made_groups.get(name, {})
        for key in sorted(set(group) | set(other)):
            if group.get(key) != other.get(key):
                found.append((name, key))
    return found


@pytest.mark.deep
@settings(
    max_examples=examples(40, 6),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
@given(case=layouts())
def test_a_converted_layout_equals_the_request_or_a_note_says_what_changed(
    case: tuple[dict[str, Any], dict[str, Any] | None, bool],
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    request, parameters, continuous = case
    try:
        source, notes = convert_request(request, parameters, Options(continuous=continuous))
    except ConversionError as error:
        assert str(error).split(":")[0], error  # refused, naming the field
        return
    cluster = converted_cluster(source, tmp_path_factory.mktemp("layout"))
    said = "\n".join(notes)
    names = [g["InstanceGroupName"] for g in request["InstanceGroups"]]
    for group, field in _differences(request, cluster["Properties"]):
        if continuous and (field in ("NodeProvisioningMode", "SlurmConfig")):
            continue  # what --continuous is asked to change (docs/guide.md)
        where = f"InstanceGroups[{names.index(group)}]" if group else ""
        assert group and (repr(group) in said or where in said), (
            f"{group or 'the cluster'}: {field} changed without a note; notes: {notes}"
        )
        assert field in said, f"{group}: {field} changed, no note names it; notes: {notes}"
