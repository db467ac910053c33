"""Compact public-safe text and the secret / local-path scan.

Every free-text field and every identifier that can reach a provider or a
public packet goes through :func:`find_unsafe`. Free text additionally goes
through :func:`compact_text`, which collapses whitespace and **rejects** (never
truncates) over-long input: two different long summaries must never collapse
into one identity (the original truncated silently; see CHANGELOG).

The scan is one compiled alternation, so checking a field costs one regex pass.
It errs on the side of rejecting: a false positive is an error the caller can
rephrase, a false negative is a leaked credential or home directory.
"""

from __future__ import annotations

import re
from typing import Final, Literal

from reward_memory.errors import UnsafeTextError

__all__ = ["UnsafeKind", "compact_text", "find_unsafe", "require_safe"]

UnsafeKind = Literal["credential", "local_path"]

# A value that "looks generated": contains a digit. Real keys almost always do,
# prose almost never does; this keeps `bearer authentication_required` benign.
_HAS_DIGIT = r"(?=[^\s\"'`]*[0-9])"

_CREDENTIAL_SHAPES: Final = (
    # HTTP authorization headers and bearer tokens.
    rf"\bbearer\s+{_HAS_DIGIT}[a-z0-9._~+/=-]{{16,}}",
    r"\bauthorization\s*[:=]\s*(?:basic|digest|token|negotiate)\s+[a-z0-9._~+/=-]{8,}",
    r"\bx-(?:api-key|auth-token|access-token)\s*[:=]\s*[a-z0-9][^\s\"',;]{7,}",
    # Named secret assignments: key=value / key: value (value must start with an
    # alphanumeric, so placeholders such as <redacted>, ${API_KEY} or *** pass).
    r"\b(?:aws_)?(?:access|secret|api|private|client|auth|session|signing|encryption|master)"
    r"[_-]?(?:access[_-]?)?(?:key|secret|token)(?:[_-]?id)?\s*[:=]\s*[\"']?[a-z0-9][^\s\"',;]{3,}",
    r"\b(?:apikey|password|passwd|passphrase|pwd|secret|credentials?)\s*[:=]\s*[\"']?"
    r"[a-z0-9][^\s\"',;]{3,}",
    rf"\b(?:access_|refresh_|id_|auth_)?token\s*[:=]\s*[\"']?{_HAS_DIGIT}[^\s\"',;]{{12,}}",
    r"\b(?:ak|sk)\s*[:=]\s*[\"']?[a-z0-9][^\s\"',;]{5,}",
    rf"(?<![a-z0-9_])(?:ak|sk)[-_=:]{_HAS_DIGIT}[a-z0-9_=-]{{10,}}",
    # Query-string secrets in URLs.
    r"[?&](?:password|pwd|pass|token|access_token|api_key|apikey|key|secret|sig|signature)="
    r"[^&\s]{8,}",
    # Credentials embedded in a URL's userinfo.
    r"\b[a-z][a-z0-9+.-]*://[^/\s:@]+:[^/\s@]+@",
    # Vendor token formats.
    r"\bgh[pousr]_[a-z0-9]{20,}\b",
    r"\bgithub_pat_[a-z0-9_]{20,}",
    r"\beyj[a-z0-9_-]{10,}\.[a-z0-9_-]{10,}\.[a-z0-9_-]{10,}",
    r"(?-i:\b(?:AKIA|ASIA|AGPA|AIDA|AROA|ANPA|ANVA|AIPA|ABIA|ACCA)[A-Z0-9]{16}\b)",
    r"(?-i:\bAIza[0-9A-Za-z_-]{35})",
    r"(?-i:\bGOCSPX-[A-Za-z0-9_-]{20,})",
    r"(?-i:\bya29\.[0-9A-Za-z_-]{20,})",
    r"\bxox[abposr]-[a-z0-9-]{10,}",
    r"hooks\.slack\.com/services/[a-z0-9_]+/[a-z0-9_]+/[a-z0-9_]+",
    r"\b(?:sk|pk|rk)_(?:live|test)_[a-z0-9]{16,}",
    r"\bsk-(?:proj-|ant-|svcacct-|admin-)?[a-z0-9_-]{20,}",
    r"-----begin (?:[a-z0-9]+ )*private key(?: block)?-----",
    r"\bnpm_[a-z0-9]{36}\b",
    r"\bpypi-ag[a-z0-9_-]{50,}",
    r"\bgl(?:pat|ptt|dt|rt|cbt|oas)-[a-z0-9_-]{20,}",
    r"\bsg\.[a-z0-9_-]{16,}\.[a-z0-9_-]{16,}",
    r"\bhf_[a-z0-9]{30,}",
    r"\baccountkey\s*=\s*[a-z0-9+/=]{20,}",
    r"\bsharedaccesssignature\s*=",
    r"\bdo[opr]_v1_[a-f0-9]{64}",
    r"\bshp(?:at|ca|pa|ss)_[a-f0-9]{32}",
    r"\bdapi[a-f0-9]{32}",
    r"(?-i:\bSK[0-9a-f]{32}\b)",
    r"\bkey-[a-f0-9]{32}\b",
    r"\bsq0(?:atp|csp)-[a-z0-9_-]{22,}",
    r"\bage-secret-key-1[a-z0-9]{50,}",
    r"(?-i:\b[MNO][A-Za-z0-9]{23,25}\.[\w-]{6}\.[\w-]{27,})",
    r"\b[0-9]{8,10}:aa[a-z0-9_-]{33}\b",
    r"(?-i:\bATATT3[A-Za-z0-9_=-]{20,})",
    r"\bglsa_[a-z0-9]{32}_[a-f0-9]{8}",
    r"\bhvs\.[a-z0-9_-]{24,}",
    r"\blin_api_[a-z0-9]{40}",
    r"\bsecret_[a-z0-9]{32,}",
    r"\bpmak-[a-f0-9]{24}-[a-f0-9]{34}",
    r"\b[a-z0-9]{14}\.atlasv1\.[a-z0-9_=-]{60,}",
    r"\b(?:sessionid|csrftoken|connect\.sid)\s*=\s*[a-z0-9%._-]{16,}",
)

# Roots that only ever name a machine-local absolute path.
_POSIX_ROOTS = (
    "users|home|volumes|private|tmp|var|etc|opt|srv|mnt|root|workspace|workspaces|usr|proc"
    "|sys|dev|run|media|library|nix|snap|scratch"
)

_LOCAL_PATH_SHAPES: Final = (
    # /home/x, /Users/x, /tmp/x ... not inside a URI (viking://resources/tmp/x), a
    # relative path (a/tmp/b) or a dotted name; `x:/home/y` still counts.
    rf"(?<![\w/.~-])/(?:{_POSIX_ROOTS})/[^\s`'\"<>]+",
    rf"(?<![\w/.~-])/(?:{_POSIX_ROOTS})\b(?=\s|$|[`'\"<>),;])",
    # ~/x and ~user/x
    r"(?<![\w/~])~[a-z0-9_.-]*/[^\s`'\"<>]*",
    # C:\x, D:/x (not scheme:// URIs)
    r"(?<![a-z0-9_])[a-z]:[\\/](?![/\\])[^\s`'\"<>]*",
    # \\server\share
    r"(?<![\w\\])\\\\[a-z0-9._$-]+\\[^\s]*",
    r"\bfile:/{1,3}[^\s]+",
    r"\$\{?home\}?/",
    r"%(?:userprofile|appdata|localappdata|homepath|homedrive|temp|tmp)%",
    # ../x, ..\x
    r"(?<![\w.])\.\.[\\/][^\s]*",
    # dot-directories that hold credentials
    r"(?<![\w/.-])\.(?:ssh|aws|gnupg|kube|docker|azure|gcloud|config/gcloud)/[^\s]*",
)

_UNSAFE: Final = re.compile(
    "(?P<credential>"
    + "|".join(_CREDENTIAL_SHAPES)
    + ")|(?P<local_path>"
    + "|".join(_LOCAL_PATH_SHAPES)
    + ")",
    re.IGNORECASE,
)
# Fast pre-check: every shape above needs one of these characters or words; a
# short identifier without any of them skips the big alternation.
_TRIGGER: Final = re.compile(
    r"[/\\~%$=:@.-]|bearer|AIza|SK[0-9a-f]|dapi|ATATT|[a-z]_[a-z0-9]"
    r"|A(?:KIA|SIA|GPA|IDA|ROA|NPA|NVA|IPA|BIA|CCA)",
    re.IGNORECASE,
)
_WHITESPACE: Final = re.compile(r"\s+")


def find_unsafe(value: str) -> UnsafeKind | None:
    """Return ``"credential"`` or ``"local_path"`` when ``value`` has such a shape."""
    if _TRIGGER.search(value) is None:
        return None
    match = _UNSAFE.search(value)
    if match is None:
        return None
    return "credential" if match.lastgroup == "credential" else "local_path"


def require_safe(value: str, *, path: str = "$", label: str = "value") -> str:
    """Return ``value`` unchanged, or raise :class:`UnsafeTextError` naming ``path``."""
    kind = find_unsafe(value)
    if kind is not None:
        what = "a credential" if kind == "credential" else "a local path"
        raise UnsafeTextError(f"{label} must be public-safe: it contains {what}", path=path)
    return value


def compact_text(value: object, *, limit: int, path: str = "$", label: str = "text") -> str:
    """Normalise free text: strip, collapse whitespace runs to one space, check it.

    Raises :class:`UnsafeTextError` when the text is empty, longer than ``limit``
    characters as given (it is rejected, never truncated), or contains a
    credential or local-path shape. The message never repeats the value.
    """
    if not isinstance(value, str):
        raise UnsafeTextError(f"{label} must be a string", path=path, code="wrong_type")
    if len(value) > limit:
        raise UnsafeTextError(
            f"{label} is {len(value)} characters, over the limit of {limit}; "
            "it is rejected, not truncated",
            path=path,
            code="text_too_long",
        )
    text = _WHITESPACE.sub(" ", value).strip()
    if not text:
        raise UnsafeTextError(f"{label} must not be empty", path=path, code="empty_text")
    return require_safe(text, path=path, label=label)
