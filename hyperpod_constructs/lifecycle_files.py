"""Which files of a local lifecycle-scripts folder are uploaded (a pure function of the folder).

Everything uploaded lands in an S3 bucket that every node of the cluster reads, so the
selection is conservative: dotfiles and dot-folders (``.env``, ``.git/``, ``.aws/``), other
version-control folders and key material are left out by default, an explicit ``include``
list turns the selection into an allow-list, and a symbolic link whose target lies outside
the folder is refused instead of followed.

Excludes match case-insensitively (``SERVER.PEM`` is key material as much as ``server.pem``);
``include`` patterns match case-sensitively. Only regular files are uploaded: FIFOs, sockets
and devices are left out (and listed so). A file name that cannot be staged exactly (not
UTF-8, or a link whose target does not exist) raises :class:`LifecycleFileError` naming it.

Patterns follow ``.gitignore`` conventions, simplified: a pattern without ``/`` matches a
file or folder name at any depth; a pattern with ``/`` matches the path from the folder's
root (a leading ``/`` is optional); ``*`` and ``?`` never match ``/``, ``**`` matches any
number of folders; a trailing ``/`` matches folders only. A matching folder is left out
whole.
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from dataclasses import dataclass

from ._cdk.tokens import is_unresolved
from ._core.sanitize import printable


@dataclass(frozen=True)
class ExcludeKind:
    """One kind of entry every upload leaves out unless ``use_default_excludes=False``: a row
    of the table in docs/security.md (generated from :data:`DEFAULT_EXCLUDE_KINDS`)."""

    kind: str
    """What the entries are, e.g. ``key material``."""
    patterns: tuple[str, ...]
    """The exclude patterns of the kind (``.gitignore`` style, case-insensitive)."""
    examples: tuple[str, ...]
    """Names of the kind, as the docs show them (the tests stage each)."""


DEFAULT_EXCLUDE_KINDS: tuple[ExcludeKind, ...] = (
    ExcludeKind(
        "dotfiles and dot-folders, and the Windows spellings curl, git and ftp read",
        (".*", "_netrc", "_pgpass"),
        (".env", ".git/", ".hg/", ".svn/", ".ssh/", ".aws/", ".npmrc", "_netrc"),
    ),
    ExcludeKind("other version-control folders", ("CVS/", "_darcs/"), ("CVS/", "_darcs/")),
    ExcludeKind(
        "key material and key stores (public keys `*.pub` stay in)",
        (
            "*.pem",
            "*.key",
            "*.p12",
            "*.pfx",
            "*.p8",
            "*.jks",
            "*.jceks",
            "*.keystore",
            "*.keytab",
            "*.ppk",
            "*.kdbx",
            "*.crt",
            "*.cer",
            "*.der",
            "*.csr",
            "*.gpg",
            "*.pgp",
            "*.asc",
            "id_rsa*",
            "id_dsa*",
            "id_ecdsa*",
            "id_ed25519*",
            "ssh_host_*_key",
        ),
        (
            "munge.key",
            "AuthKey_ABC123.p8",
            "truststore.jceks",
            "slurm.keytab",
            "id_rsa_old",
            "ssh_host_ed25519_key",
        ),
    ),
    ExcludeKind(
        "credentials: AWS's downloaded access keys, cloud service accounts, kubeconfigs",
        (
            "credentials",
            "credentials.*",
            "*accessKeys*.csv",
            "rootkey.csv",
            "*service-account*.json",
            "*service_account*.json",
            "kubeconfig",
            "kubeconfig.*",
            "*.kubeconfig",
        ),
        (
            "credentials.csv",
            "accessKeys.csv",
            "admin_accessKeys.csv",
            "rootkey.csv",
            "service-account.json",
            "kubeconfig.yaml",
        ),
    ),
    ExcludeKind(
        "secrets and infrastructure state",
        (
            "*.env",
            "*.tfstate",
            "*.tfstate.*",
            "*.tfvars",
            "*.tfvars.json",
            "*.secret",
            "*.secrets",
            "secret.*",
            "secrets.*",
        ),
        ("prod.env", "terraform.tfstate.backup", "terraform.tfvars.json", "secrets.yaml"),
    ),
    ExcludeKind(
        "build residue (it also makes the asset hash unstable)",
        ("__pycache__/", "*.pyc"),
        ("__pycache__/", "util.pyc"),
    ),
)
"""What every upload leaves out by default, kind by kind: the one table that
:data:`DEFAULT_EXCLUDES` and docs/security.md come from."""

DEFAULT_EXCLUDES: tuple[str, ...] = tuple(
    pattern for kind in DEFAULT_EXCLUDE_KINDS for pattern in kind.patterns
)
"""Left out of every upload unless ``use_default_excludes=False`` (the patterns of
:data:`DEFAULT_EXCLUDE_KINDS`). The ``id_*`` key names (``id_rsa``, ``id_rsa.bak``,
``id_rsa_old``) leave public keys (``*.pub``) in. Every exclude (these and ``exclude=``) also
matches a name that differs from it only by a backup suffix, a number, trailing dots or
trailing white space or control characters (:data:`_DISGUISE`)."""


def exclude_table() -> list[str]:
    """The rows of docs/security.md's table of what is left out by default (Markdown)."""

    def code(items: Sequence[str]) -> str:
        return ", ".join(f"`{item}`" for item in items)

    return [
        f"| {kind.kind} | {code(kind.patterns)} (e.g. {code(kind.examples)}) |"
        for kind in DEFAULT_EXCLUDE_KINDS
    ]


_PRIVATE_KEY_NAMES = frozenset({"id_rsa*", "id_dsa*", "id_ecdsa*", "id_ed25519*"})
_DISGUISE = re.compile(
    r"(?:[\s\x00-\x1f\x7f]|~|\.(?:bak|backup|old|orig|save|swp|tmp|\d+)?)+\Z", re.I
)
"""What an exclude looks past at the end of a name: trailing white space and control
characters (``key.pem\r``, ``key.pem ``), backup suffixes (``tls.key.bak``, ``key.pem~``,
``id_rsa.old``), numbered copies (``key.pem.1``, ``munge.key.2``, as logrotate and backup
tools write them) and trailing dots (``key.pem.``, which Windows drops), in any number and
order."""
_UNEXPRESSIBLE = re.compile(r"[\x00-\x1f\x7f]")
"""Characters a ``.gitignore`` line cannot hold (aws-cdk-lib splits patterns at line breaks
and trims trailing whitespace): written as ``?`` in :func:`ignore_lines`."""


class LifecycleFileError(ValueError):
    """A folder that cannot be uploaded as it is: ``field``, ``value`` and ``allowed`` say why."""

    def __init__(self, field: str, value: str, allowed: str, fix: str) -> None:
        self.field = field
        self.value = value
        self.allowed = allowed
        self.fix = fix
        super().__init__(f"{field} = {value!r} is not allowed; allowed: {allowed}. Fix: {fix}")


@dataclass(frozen=True)
class Selection:
    """The outcome for one folder: what is uploaded and what is left out.

    Paths are relative to the folder and use ``/``. ``left_out`` lists the topmost left-out
    entries only (a left-out folder stands for everything in it); folders are given with a
    trailing ``/``.
    """

    files: tuple[str, ...]
    left_out: tuple[str, ...]


@dataclass(frozen=True)
class _Pattern:
    source: str
    regex: re.Pattern[str]
    directories_only: bool
    anchored: bool
    keeps_public_keys: bool = False


def _compile(pattern: str, *, ignore_case: bool = False) -> _Pattern:
    text = pattern.strip()
    if not text or text.startswith("#") or text.startswith("!"):
        raise LifecycleFileError(
            "lifecycle_scripts pattern",
            pattern,
            "a non-empty .gitignore-style pattern without '!' (use include= to allow files)",
            "remove the pattern, or express it as an include",
        )
    directories_only = text.endswith("/")
    text = text.rstrip("/")
    anchored = "/" in text
    text = text.lstrip("/")
    parts: list[str] = []
    index = 0
    while index < len(text):
        if text.startswith("**/", index):
            parts.append("(?:.*/)?")
            index += 3
        elif text.startswith("**", index):
            parts.append(".*")
            index += 2
        elif text[index] == "*":
            parts.append("[^/]*")
            index += 1
        elif text[index] == "?":
            parts.append("[^/]")
            index += 1
        elif text[index] == "[" and "]" in text[index + 1 :]:
            end = text.index("]", index + 1)
            body = text[index + 1 : end]
            negated = body.startswith("!")
            escaped = re.sub(r"([\\\[\]^])", r"\\\1", body[1:] if negated else body)
            parts.append(f"[^{escaped}]" if negated else f"[{escaped}]")
            index = end + 1
        else:
            parts.append(re.escape(text[index]))
            index += 1
    flags = re.IGNORECASE | re.DOTALL if ignore_case else re.DOTALL
    return _Pattern(
        pattern,
        re.compile("".join(parts) + r"\Z", flags),
        directories_only,
        anchored,
        keeps_public_keys=ignore_case and pattern in _PRIVATE_KEY_NAMES,
    )


def _matches(pattern: _Pattern, relative: str, *, is_dir: bool) -> bool:
    if pattern.directories_only and not is_dir:
        return False
    subject = relative if pattern.anchored else relative.rsplit("/", 1)[-1]
    if pattern.keeps_public_keys and subject.lower().endswith(".pub"):
        return False
    if pattern.regex.match(subject) is not None:
        return True
    # An exclude (case-insensitive) also sees past a disguise at the end of the name.
    undisguised = _DISGUISE.sub("", subject) if pattern.regex.flags & re.IGNORECASE else subject
    return undisguised != subject and pattern.regex.match(undisguised) is not None


def _stageable(relative: str) -> None:
    """Refuse a name aws-cdk-lib cannot stage (jsii hands it to Node.js as UTF-8)."""
    try:
        relative.encode("utf-8")
    except UnicodeEncodeError:
        raise LifecycleFileError(
            "lifecycle_scripts file name",
            printable(relative),
            "UTF-8 file names (this one holds bytes that are not UTF-8, shown escaped)",
            "rename the file, or move it out of the folder",
        ) from None


def _inside(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip(os.sep) + os.sep)


def select_files(
    directory: str,
    *,
    exclude: Sequence[str] = (),
    include: Sequence[str] | None = None,
    use_default_excludes: bool = True,
) -> Selection:
    """Walk ``directory`` and decide, for every entry, whether it is uploaded.

    An entry is left out when it matches an exclude pattern (the defaults, then
    ``exclude``); with ``include``, a file is uploaded only if it also matches one of
    those patterns (folders are walked either way; folders left empty are not uploaded).

    Symbolic links are followed only while they stay inside the folder: a link whose target
    resolves outside it, or to a folder that contains the link (a loop), raises
    :class:`LifecycleFileError` naming the link. Left-out links are never followed.
    """
    for name, given in (("exclude", exclude), ("include", include)):
        if isinstance(given, str):
            raise LifecycleFileError(
                f"lifecycle_scripts {name}",
                given,
                "a list of patterns",
                f"pass {name}=[{given!r}]",
            )
        if (given is not None or name == "exclude") and (
            not isinstance(given, list | tuple) or not all(isinstance(p, str) for p in given)
        ):
            raise LifecycleFileError(
                f"lifecycle_scripts {name}",
                printable(repr(given)),
                "a list of .gitignore-style patterns (strings)"
                + (", or None for every file" if name == "include" else ""),
                f"pass {name}=['*.md'] (patterns as strings)",
            )
        if isinstance(given, list | tuple) and any(is_unresolved(p) for p in given):
            raise LifecycleFileError(
                f"lifecycle_scripts {name}",
                "<token>",
                "patterns known when the app is synthesized (the upload is chosen then, "
                "before a CDK token has a value)",
                f"pass {name}= concrete patterns, not a CfnParameter or another token",
            )
    excludes = [
        _compile(p, ignore_case=True)
        for p in (*(DEFAULT_EXCLUDES if use_default_excludes else ()), *exclude)
    ]
    includes = None if include is None else [_compile(p) for p in include]
    root = os.path.realpath(directory)
    files: list[str] = []
    left_out: list[str] = []

    def check_link(path: str, relative: str) -> str:
        target = os.path.realpath(path)
        if not _inside(target, root):
            raise LifecycleFileError(
                "lifecycle_scripts symbolic link",
                relative,
                f"links whose target stays inside the folder (this one points to {target!r})",
                "copy the file into the folder, remove the link, or exclude it",
            )
        if os.path.isdir(target) and _inside(os.path.dirname(path), target):
            raise LifecycleFileError(
                "lifecycle_scripts symbolic link",
                relative,
                "links that do not point to a folder containing themselves (a loop)",
                "remove the link, or exclude it",
            )
        return target

    def walk(current: str, prefix: str) -> bool:
        """Returns whether anything below ``current`` is uploaded."""
        kept = False
        mark = len(left_out)
        with os.scandir(current) as entries:
            ordered = sorted(entries, key=lambda entry: entry.name)
        for entry in ordered:
            relative = f"{prefix}{entry.name}"
            _stageable(relative)
            is_dir = entry.is_dir(follow_symlinks=True)
            shown = f"{relative}/" if is_dir else relative
            if any(_matches(p, relative, is_dir=is_dir) for p in excludes):
                left_out.append(shown)
                continue
            if entry.is_symlink():
                check_link(entry.path, relative)
            if not is_dir and not entry.is_file(follow_symlinks=True):
                if entry.is_symlink() and not os.path.exists(entry.path):
                    raise LifecycleFileError(
                        "lifecycle_scripts symbolic link",
                        printable(relative),
                        "links whose target exists",
                        "remove the link, or exclude it",
                    )
                left_out.append(shown)  # a FIFO, socket or device: never staged
                continue
            if is_dir:
                if walk(entry.path, f"{relative}/"):
                    kept = True
                else:
                    left_out.append(shown)
            elif includes is not None and not any(
                _matches(p, relative, is_dir=False) for p in includes
            ):
                left_out.append(shown)
            else:
                files.append(relative)
                kept = True
        if not kept:
            del left_out[mark:]  # the caller leaves this whole folder out
        return kept

    walk(root, "")
    selection = Selection(tuple(files), tuple(left_out))
    _check_expressible(selection)
    return selection


def _ignore_line(path: str) -> str:
    escaped = re.sub(r"([\\*?\[\]])", r"\\\1", path)
    escaped = _UNEXPRESSIBLE.sub("?", escaped)
    return "/" + re.sub(r" (?= */?$)", r"\\ ", escaped)


def _check_expressible(selection: Selection) -> None:
    """A left-out name with a control character is excluded by a line with ``?`` in its place;
    refuse it when that line would also leave out an uploaded file (never say "uploaded" of a
    file that is not)."""
    for path in selection.left_out:
        if not _UNEXPRESSIBLE.search(path):
            continue
        name = path.rstrip("/")
        regex = "".join("[^/]" if _UNEXPRESSIBLE.match(c) else re.escape(c) for c in name)
        line = re.compile(regex + ("(?:/.*)?" if path.endswith("/") else "") + r"\Z", re.DOTALL)
        clash = [f for f in selection.files if line.match(f)]
        if clash:
            raise LifecycleFileError(
                "lifecycle_scripts file name",
                printable(path),
                "names whose control characters do not hide an uploaded file (the line "
                f"that leaves this one out would also leave out {printable(clash[0])!r})",
                "rename the file, or move it out of the folder",
            )


def ignore_lines(selection: Selection) -> list[str]:
    """``.gitignore`` lines (for aws-cdk-lib's ``IgnoreMode.GIT``) that leave out exactly
    ``selection.left_out``: each anchored at the root, ``\\ * ? [ ]`` and trailing spaces
    escaped, control characters (which no such line can hold) as ``?``."""
    return [_ignore_line(path) for path in selection.left_out]
