"""What a lifecycle-scripts folder uploads: only the scripts.

Each test builds a real folder in tmp_path, synthesizes a real cluster with
``LifecycleScripts.from_directory`` and inspects the asset aws-cdk-lib staged into the cloud
assembly (what `cdk deploy` would zip and upload), not only the library's own selection.
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
from aws_cdk import Stack
from aws_cdk import aws_iam as iam

from hyperpod_constructs import (
    HyperPodInstanceType,
    HyperPodSlurmCluster,
    HyperPodValidationError,
    InstanceGroup,
    LifecycleScripts,
)
from hyperpod_constructs.lifecycle_files import LifecycleFileError, select_files
from tests.conftest import new_app, synth_template
from tests.template_utils import only, resources

SCRIPT = "#!/bin/bash\necho ok\n"


def write(root: Path, files: dict[str, str]) -> Path:
    for relative, text in files.items():
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return root


def staged_files(tmp_path: Path, scripts: LifecycleScripts) -> set[str]:
    """Synthesize a cluster using ``scripts``; the relative paths of the staged asset's files."""
    outdir = tmp_path / "cdk.out"
    app = new_app(outdir=str(outdir))
    stack = Stack(app, "Upload")
    HyperPodSlurmCluster(
        stack,
        "Cluster",
        lifecycle_scripts=scripts,
        instance_groups=[
            InstanceGroup.controller("controller", instance_type=HyperPodInstanceType.ML_M5_XLARGE)
        ],
    )
    app.synth()
    manifest: dict[str, Any] = json.loads((outdir / "Upload.assets.json").read_text())
    directories = [
        outdir / entry["source"]["path"]
        for entry in manifest["files"].values()
        if entry["source"].get("packaging") == "zip"
    ]
    # The lifecycle upload is the one zipped asset whose folder holds the entry script.
    (staged,) = [d for d in directories if (d / scripts.on_create).exists()]
    found = set()
    for dirpath, _, filenames in os.walk(staged):
        for name in filenames:
            found.add(str(Path(dirpath, name).relative_to(staged)).replace(os.sep, "/"))
    return found


def a_folder(tmp_path: Path) -> Path:
    """A lifecycle folder as it looks in a real checkout: scripts next to secrets and VCS."""
    return write(
        tmp_path / "lifecycle",
        {
            "on_create.sh": SCRIPT,
            "lifecycle_script.py": "print('setup')\n",
            "provisioning_parameters.json": "{}\n",
            "utils/install_docker.sh": SCRIPT,
            "utils/.cache/state": "x\n",
            ".env": "AWS_SECRET_ACCESS_KEY=abc\n",
            ".git/config": "[core]\n",
            ".git/objects/ab/cdef": "blob\n",
            ".ssh/config": "Host *\n",
            "deploy.pem": "-----BEGIN RSA PRIVATE KEY-----\n",
            "certs/server.key": "-----BEGIN PRIVATE KEY-----\n",
            "keys/id_rsa": "-----BEGIN OPENSSH PRIVATE KEY-----\n",
            "keys/id_rsa.pub": "ssh-rsa AAAA\n",
            "CVS/Entries": "/x/\n",
            "__pycache__/lifecycle_script.cpython-311.pyc": "\0",
        },
    )


SCRIPTS_ONLY = {
    "on_create.sh",
    "lifecycle_script.py",
    "provisioning_parameters.json",
    "utils/install_docker.sh",
    "keys/id_rsa.pub",
}


def test_default_upload_leaves_out_dotfiles_vcs_and_keys(tmp_path: Path) -> None:
    scripts = LifecycleScripts.from_directory(str(a_folder(tmp_path)))
    assert staged_files(tmp_path, scripts) == SCRIPTS_ONLY


def test_control_without_default_excludes_everything_is_uploaded(tmp_path: Path) -> None:
    """Control: the staged asset does show what the defaults leave out."""
    folder = a_folder(tmp_path)
    scripts = LifecycleScripts.from_directory(str(folder), use_default_excludes=False)
    staged = staged_files(tmp_path, scripts)
    assert {".env", ".git/config", "deploy.pem", "keys/id_rsa"} <= staged


def test_exclude_adds_to_the_defaults(tmp_path: Path) -> None:
    folder = a_folder(tmp_path)
    scripts = LifecycleScripts.from_directory(
        str(folder), exclude=["provisioning_parameters.json", "utils/"]
    )
    assert staged_files(tmp_path, scripts) == SCRIPTS_ONLY - {
        "provisioning_parameters.json",
        "utils/install_docker.sh",
    }


def test_include_is_an_allow_list_and_excludes_still_apply(tmp_path: Path) -> None:
    folder = a_folder(tmp_path)
    scripts = LifecycleScripts.from_directory(str(folder), include=["*.sh", "*.pem"])
    assert staged_files(tmp_path, scripts) == {"on_create.sh", "utils/install_docker.sh"}


def test_anchored_patterns_match_from_the_root_only(tmp_path: Path) -> None:
    folder = write(
        tmp_path / "lc",
        {"on_create.sh": SCRIPT, "setup.sh": SCRIPT, "sub/setup.sh": SCRIPT, "sub/x/y.sh": SCRIPT},
    )
    scripts = LifecycleScripts.from_directory(str(folder), exclude=["/setup.sh", "sub/**/y.sh"])
    assert staged_files(tmp_path, scripts) == {"on_create.sh", "sub/setup.sh"}


def test_names_with_glob_characters_are_left_out_exactly(tmp_path: Path) -> None:
    """A left-out name containing ``*``/``[`` must not leave out its neighbours."""
    folder = write(
        tmp_path / "lc",
        {"on_create.sh": SCRIPT, "a[1].sh": SCRIPT, "a1.sh": SCRIPT, "b*.sh": SCRIPT, "bb.sh": ""},
    )
    scripts = LifecycleScripts.from_directory(str(folder), include=["on_create.sh", "a1.sh"])
    assert staged_files(tmp_path, scripts) == {"on_create.sh", "a1.sh"}
    scripts = LifecycleScripts.from_directory(str(folder), exclude=["a[[]1].sh", "b[*].sh"])
    assert staged_files(tmp_path / "second", scripts) == {"on_create.sh", "a1.sh", "bb.sh"}


def test_links_inside_the_folder_are_uploaded_as_files(tmp_path: Path) -> None:
    folder = write(tmp_path / "lc", {"on_create.sh": SCRIPT, "lib/common.sh": SCRIPT})
    (folder / "common.sh").symlink_to(folder / "lib" / "common.sh")
    (folder / "shared").symlink_to(folder / "lib", target_is_directory=True)
    scripts = LifecycleScripts.from_directory(str(folder))
    assert staged_files(tmp_path, scripts) == {
        "on_create.sh",
        "lib/common.sh",
        "common.sh",
        "shared/common.sh",
    }


def cluster_error(scripts: LifecycleScripts) -> HyperPodValidationError:
    """The cluster's findings (reported at synth, which then writes no template), as the
    error the library raises for them."""
    app = new_app()
    stack = Stack(app, "Refused")
    cluster = HyperPodSlurmCluster(
        stack,
        "Cluster",
        lifecycle_scripts=scripts,
        instance_groups=[
            InstanceGroup.controller("controller", instance_type=HyperPodInstanceType.ML_M5_XLARGE)
        ],
    )
    with pytest.raises(RuntimeError, match="Validation failed"):
        app.synth()
    assert cluster.findings(), "the synth failed without a HyperPod finding"
    return HyperPodValidationError(cluster.node.path, cluster.findings())


@pytest.mark.parametrize("as_directory", [False, True], ids=["file", "folder"])
def test_a_link_leaving_the_folder_fails_synth_naming_the_link(
    tmp_path: Path, as_directory: bool
) -> None:
    outside = write(tmp_path / "home", {"credentials": "[default]\naws_secret_access_key=x\n"})
    folder = write(tmp_path / "lc", {"on_create.sh": SCRIPT})
    target = outside if as_directory else outside / "credentials"
    (folder / "aws").symlink_to(target, target_is_directory=as_directory)
    error = cluster_error(LifecycleScripts.from_directory(str(folder)))
    message = str(error)
    assert error.path == "Refused/Cluster"
    assert "'aws'" in message and str(target) in message and "HP-LIFECYCLE-FILES" in message
    assert "Traceback" not in message


def test_a_link_to_its_own_folder_is_a_loop_and_fails(tmp_path: Path) -> None:
    folder = write(tmp_path / "lc", {"on_create.sh": SCRIPT})
    (folder / "sub").mkdir()
    (folder / "sub" / "up").symlink_to(folder, target_is_directory=True)
    message = str(cluster_error(LifecycleScripts.from_directory(str(folder))))
    assert "'sub/up'" in message and "loop" in message


def test_a_left_out_link_is_never_followed(tmp_path: Path) -> None:
    """A dotfile link to a secret outside is simply not uploaded (no error, no copy)."""
    outside = write(tmp_path / "home", {"token": "secret\n"})
    folder = write(tmp_path / "lc", {"on_create.sh": SCRIPT})
    (folder / ".token").symlink_to(outside / "token")
    scripts = LifecycleScripts.from_directory(str(folder))
    assert staged_files(tmp_path, scripts) == {"on_create.sh"}


@pytest.mark.parametrize(
    ("options", "expected"),
    [
        ({"exclude": ["on_create.sh"]}, "left out by the excludes"),
        ({"include": ["*.py"]}, "matched by include"),
    ],
)
def test_excluding_the_entry_script_fails_synth(
    tmp_path: Path, options: dict[str, Sequence[str]], expected: str
) -> None:
    folder = write(tmp_path / "lc", {"on_create.sh": SCRIPT, "x.py": ""})
    message = str(cluster_error(LifecycleScripts.from_directory(str(folder), **options)))  # type: ignore[arg-type]
    assert "on_create" in message and "'on_create.sh'" in message and expected in message


@pytest.mark.parametrize("pattern", ["", "!keep.sh", "# comment"])
def test_patterns_that_cannot_mean_an_exclusion_are_refused(tmp_path: Path, pattern: str) -> None:
    folder = write(tmp_path / "lc", {"on_create.sh": SCRIPT})
    message = str(cluster_error(LifecycleScripts.from_directory(str(folder), exclude=[pattern])))
    assert repr(pattern) in message and "HP-LIFECYCLE-FILES" in message


@pytest.mark.parametrize("option", ["exclude", "include"])
def test_a_single_string_is_refused_not_read_as_characters(tmp_path: Path, option: str) -> None:
    folder = write(tmp_path / "lc", {"on_create.sh": SCRIPT})
    scripts = LifecycleScripts.from_directory(str(folder), **{option: "*.pem"})  # type: ignore[arg-type]
    message = str(cluster_error(scripts))
    assert f"lifecycle_scripts {option} = '*.pem'" in message
    assert f"{option}=['*.pem']" in message


def test_selection_reports_topmost_left_out_entries(tmp_path: Path) -> None:
    selection = select_files(str(a_folder(tmp_path)))
    assert set(selection.files) == SCRIPTS_ONLY
    assert ".git/" in selection.left_out and ".git/config" not in selection.left_out
    assert "CVS/" in selection.left_out and "utils/.cache/" in selection.left_out


def test_selection_error_names_field_value_and_fix(tmp_path: Path) -> None:
    folder = write(tmp_path / "lc", {"on_create.sh": SCRIPT})
    (folder / "passwd").symlink_to("/etc/passwd")
    with pytest.raises(LifecycleFileError) as raised:
        select_files(str(folder))
    assert raised.value.value == "passwd" and "Fix:" in str(raised.value)


def test_only_the_clusters_roles_and_the_upload_read_the_scripts(tmp_path: Path) -> None:
    """HyperPod's managed policy lets every node of the account read every sagemaker-*
    bucket; the bucket policy denies object reads to anyone but this cluster's execution
    roles (the default one and a group's own) and the upload handler."""
    folder = write(tmp_path / "lc", {"on_create.sh": SCRIPT})

    def define(stack: Stack) -> None:
        own = iam.Role(stack, "GpuRole", assumed_by=iam.ServicePrincipal("sagemaker.amazonaws.com"))
        HyperPodSlurmCluster(
            stack,
            "Cluster",
            lifecycle_scripts=LifecycleScripts.from_directory(str(folder)),
            instance_groups=[
                InstanceGroup.controller(
                    "controller", instance_type=HyperPodInstanceType.ML_M5_XLARGE
                ),
                InstanceGroup.compute(
                    "gpu",
                    instance_type=HyperPodInstanceType.ML_C5_4XLARGE,
                    instance_count=2,
                    partition="gpu",
                    execution_role=own,
                ),
            ],
        )

    template = synth_template(define).to_json()
    bucket_id, _ = only(template, "AWS::S3::Bucket")
    _, bucket_policy = only(template, "AWS::S3::BucketPolicy")
    (deny,) = [
        s
        for s in bucket_policy["Properties"]["PolicyDocument"]["Statement"]
        if s.get("Sid") == "OnlyTheClusterReadsTheScripts"
    ]
    assert deny["Effect"] == "Deny" and deny["Principal"] == {"AWS": "*"}
    assert sorted(deny["Action"]) == ["s3:GetObject", "s3:GetObjectVersion"]
    assert deny["Resource"] == {"Fn::Join": ["", [{"Fn::GetAtt": [bucket_id, "Arn"]}, "/*"]]}
    readers = deny["Condition"]["ArnNotEquals"]["aws:PrincipalArn"]
    _, cluster = only(template, "AWS::SageMaker::Cluster")
    execution_roles = {
        group["ExecutionRole"]["Fn::GetAtt"][0] for group in cluster["Properties"]["InstanceGroups"]
    }
    (handler,) = [
        logical_id
        for logical_id, role in resources(template, "AWS::IAM::Role").items()
        if "CDKBucketDeployment" in logical_id
    ]
    assert len(execution_roles) == 2
    assert sorted(r["Fn::GetAtt"][0] for r in readers) == sorted({*execution_roles, handler})
    assert all(r["Fn::GetAtt"][1] == "Arn" for r in readers)


# -- hostile folders: select() says exactly what the staged asset holds ----------------------


def assert_selection_is_the_upload(tmp_path: Path, scripts: LifecycleScripts) -> set[str]:
    selected = set(scripts.select().files)
    assert staged_files(tmp_path, scripts) == selected
    return selected


def test_excludes_match_any_case_and_cover_the_usual_secrets(tmp_path: Path) -> None:
    secrets = [
        "SERVER.PEM",
        "certs/Key.Pem",
        "TLS.KEY",
        "credentials",
        "aws/Credentials",
        "prod.env",
        "config/staging.ENV",
        "kubeconfig",
        "cluster.kubeconfig",
        "terraform.tfstate",
        "infra/terraform.tfstate.backup",
        "prod.tfvars",
        "keys/id_rsa.bak",
        "keys/ID_ED25519_old",
        "db.secret",
    ]
    folder = write(
        tmp_path / "lc",
        {"on_create.sh": SCRIPT, "keys/id_rsa.pub": "ssh-rsa AAAA\n"}
        | {name: "secret\n" for name in secrets},
    )
    scripts = LifecycleScripts.from_directory(str(folder))
    assert assert_selection_is_the_upload(tmp_path, scripts) == {"on_create.sh", "keys/id_rsa.pub"}


def test_names_with_tabs_and_newlines_are_left_out_as_reported(tmp_path: Path) -> None:
    folder = write(
        tmp_path / "lc",
        {
            "on_create.sh": SCRIPT,
            ".env\t": "SECRET=1\n",
            ".env\n": "SECRET=2\n",
            "deploy\r.pem": "key\n",
            "notes\tand\nmore.txt": "uploaded\n",
        },
    )
    scripts = LifecycleScripts.from_directory(str(folder))
    selection = scripts.select()
    assert {".env\t", ".env\n", "deploy\r.pem"} <= set(selection.left_out)
    assert assert_selection_is_the_upload(tmp_path, scripts) == {
        "on_create.sh",
        "notes\tand\nmore.txt",
    }


def test_a_control_character_that_would_hide_an_uploaded_file_is_refused(
    tmp_path: Path,
) -> None:
    folder = write(tmp_path / "lc", {"on_create.sh": SCRIPT, "skip\tme": "x", "skipXme": "y"})
    with pytest.raises(LifecycleFileError) as raised:
        select_files(str(folder), exclude=["skip\tme"])
    assert raised.value.field == "lifecycle_scripts file name"
    assert raised.value.value == "skip\\tme" and "'skipXme'" in raised.value.allowed


def test_fifos_and_sockets_are_neither_staged_nor_listed_as_uploaded(tmp_path: Path) -> None:
    import socket

    folder = write(tmp_path / "lc", {"on_create.sh": SCRIPT})
    os.mkfifo(folder / "pipe")
    listener = socket.socket(socket.AF_UNIX)
    try:
        listener.bind(str(folder / "sock"))
        scripts = LifecycleScripts.from_directory(str(folder))
        assert {"pipe", "sock"} <= set(scripts.select().left_out)
        assert assert_selection_is_the_upload(tmp_path, scripts) == {"on_create.sh"}
    finally:
        listener.close()


def test_a_file_name_that_is_not_utf8_is_a_finding_naming_it(tmp_path: Path) -> None:
    folder = write(tmp_path / "lc", {"on_create.sh": SCRIPT})
    (folder / "utils").mkdir()
    with open(os.fsencode(folder / "utils") + b"/caf\xe9.sh", "w") as file:
        file.write(SCRIPT)
    scripts = LifecycleScripts.from_directory(str(folder))
    with pytest.raises(LifecycleFileError) as raised:
        scripts.select()
    assert raised.value.value == "utils/caf\\udce9.sh"
    message = str(cluster_error(scripts))
    assert "lifecycle_scripts file name = 'utils/caf\\\\udce9.sh'" in message
    assert "HP-LIFECYCLE-FILES" in message and "Traceback" not in message


def test_a_dangling_link_is_a_finding_naming_it(tmp_path: Path) -> None:
    folder = write(tmp_path / "lc", {"on_create.sh": SCRIPT})
    (folder / "gone.sh").symlink_to(folder / "missing.sh")
    with pytest.raises(LifecycleFileError) as raised:
        select_files(str(folder))
    assert raised.value.value == "gone.sh" and "exists" in raised.value.allowed


@pytest.mark.parametrize(
    "name",
    [
        "_netrc",
        "cert.crt",
        "key.gpg",
        "priv.asc",
        "secrets.yaml",
        "Secret.json",
        "tls.key.bak",
        "deploy.pem~",
        "id_ed25519.old",
        "key.pem\r",
        "key.pem ",
        "key.pem\t \x7f",
        "prod.env.orig",
        "TLS.KEY.BAK ",
    ],
)
def test_secret_names_in_disguise_are_left_out(tmp_path: Path, name: str) -> None:
    """Windows spellings, certificates and signed keys, secrets files, and a secret's name
    followed by a backup suffix or trailing white space or control characters."""
    folder = write(
        tmp_path / "lc", {"on_create.sh": SCRIPT, "notes.pem.txt": "kept\n", name: "k\n"}
    )
    scripts = LifecycleScripts.from_directory(str(folder))
    assert name in scripts.select().left_out
    assert assert_selection_is_the_upload(tmp_path, scripts) == {"on_create.sh", "notes.pem.txt"}


def test_a_disguise_is_seen_through_by_the_apps_own_excludes_too(tmp_path: Path) -> None:
    folder = write(
        tmp_path / "lc", {"on_create.sh": SCRIPT, "site.conf.bak": "x\n", "site.confx": "y\n"}
    )
    selection = select_files(str(folder), exclude=["site.conf"])
    assert selection.left_out == ("site.conf.bak",)
    assert set(selection.files) == {"on_create.sh", "site.confx"}


def test_bucket_options_reach_the_bucket_the_roles_and_the_upload(tmp_path: Path) -> None:
    """``LifecycleBucketOptions``: the key encrypts the bucket and every execution role may
    decrypt with it; versioning, the access log and the rules are the bucket's; the upload
    runs in the VPC."""
    from aws_cdk import Duration
    from aws_cdk import aws_ec2 as ec2
    from aws_cdk import aws_kms as kms
    from aws_cdk import aws_s3 as s3

    from hyperpod_constructs.lifecycle import LifecycleBucketOptions

    folder = write(tmp_path / "lc", {"on_create.sh": SCRIPT})

    def define(stack: Stack) -> None:
        vpc = ec2.Vpc(stack, "Vpc", max_azs=1)
        key = kms.Key(stack, "Key")
        HyperPodSlurmCluster(
            stack,
            "Cluster",
            vpc=vpc,
            lifecycle_scripts=LifecycleScripts.from_directory(
                str(folder),
                bucket_options=LifecycleBucketOptions(
                    encryption_key=key,
                    versioned=True,
                    server_access_logs_bucket=s3.Bucket(stack, "AccessLogs"),
                    server_access_logs_prefix="lc/",
                    lifecycle_rules=[
                        s3.LifecycleRule(noncurrent_version_expiration=Duration.days(30))
                    ],
                    upload_vpc=vpc,
                ),
            ),
            instance_groups=[
                InstanceGroup.controller(
                    "controller", instance_type=HyperPodInstanceType.ML_M5_XLARGE
                )
            ],
        )

    template = synth_template(define).to_json()
    key_id = only(template, "AWS::KMS::Key")[0]
    buckets = resources(template, "AWS::S3::Bucket")
    (bucket,) = [b for logical_id, b in buckets.items() if "LifecycleScripts" in logical_id]
    properties = bucket["Properties"]
    (rule,) = properties["BucketEncryption"]["ServerSideEncryptionConfiguration"]
    assert rule["ServerSideEncryptionByDefault"] == {
        "KMSMasterKeyID": {"Fn::GetAtt": [key_id, "Arn"]},
        "SSEAlgorithm": "aws:kms",
    }
    assert properties["VersioningConfiguration"] == {"Status": "Enabled"}
    assert properties["LoggingConfiguration"]["LogFilePrefix"] == "lc/"
    assert properties["LifecycleConfiguration"]["Rules"][0]["NoncurrentVersionExpiration"]
    decrypting = [
        policy
        for policy in resources(template, "AWS::IAM::Policy").values()
        if "ExecutionRole" in json.dumps(policy["Properties"]["Roles"])
        and "kms:Decrypt" in json.dumps(policy)
        and key_id in json.dumps(policy)
    ]
    assert decrypting, "the execution role decrypts the scripts"
    functions = resources(template, "AWS::Lambda::Function")
    (upload,) = [f for logical_id, f in functions.items() if "BucketDeployment" in logical_id]
    assert upload["Properties"]["VpcConfig"]["SubnetIds"]
