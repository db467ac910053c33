"""Compact public-safe text and the secret / local-path scan.

Every free-text field and every identifier that can reach a provider or a
public packet goes through :func:`find_unsafe`. Free text additionally goes
through :func:`compact_text`, which collapses whitespace and **rejects** (never
truncates) over-long input: two different long summaries must never collapse
into one identity (the original truncated silently; see CHANGELOG).

The scan is one compiled alternation (``_UNSAFE``), so checking a field costs
one regex pass. It errs on the side of rejecting: a false positive is an error
the caller can rephrase, a false negative is a leaked credential or home
directory.

Speed. ``_UNSAFE`` is written for readability and is case-insensitive, which
makes the regex engine try every branch at every position (~250 µs for 200
characters). So a cheap prefilter, ``_TRIGGER``, runs first: it looks only for
*anchors*, short strings that every shape in ``_UNSAFE`` must contain (``=``,
``/`` followed by a machine root, ``key:``, ``ghp_``, ...). Each of its branches
starts with one literal character, so the engine scans the text in C and stops
only at those characters: a 200-character summary costs about 1-2 µs, a short
identifier about 0.5 µs. The prefilter may fire on benign text (then
``_UNSAFE`` decides); it must never miss a shape. ``tests/test_text.py`` checks
that for every positive example, for every shape, and for generated variants.
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
# The value of a `name = value` / `name: value` assignment. It must start with
# an alphanumeric, so placeholders such as <redacted>, ${API_KEY} or *** pass.
_VALUE = r"\s*[:=]\s*[\"']?[a-z0-9][^\s\"',;]{3,}"

_CREDENTIAL_SHAPES: Final = (
    # HTTP authorization headers and bearer / basic credentials.
    rf"\bbearer\s+{_HAS_DIGIT}[a-z0-9._~+/=-]{{16,}}",
    # base64 after `basic`: needs a digit, '=' or a lower->upper hump, so that
    # prose such as `basic authentication required` passes.
    r"\bbasic\s+(?=(?-i:[A-Za-z0-9+/]*(?:[0-9=]|[a-z][A-Z])))[a-z0-9+/]{12,}",
    r"\bauthorization\s*[:=]\s*(?:basic|digest|token|negotiate)\s+[a-z0-9._~+/=-]{8,}",
    r"\bx-(?:api-key|auth-token|access-token)\s*[:=]\s*[a-z0-9][^\s\"',;]{7,}",
    # Named secret assignments: key=value / key: value.
    r"\b(?:aws_)?(?:access|secret|api|private|client|auth|session|signing|encryption|master)"
    rf"[_-]?(?:access[_-]?)?(?:key|secret|token)(?:[_-]?id)?{_VALUE}",
    rf"\b(?:apikey|password|passwd|passphrase|pwd|secret|credentials?){_VALUE}",
    rf"\b(?:access_|refresh_|id_|auth_)?token\s*[:=]\s*[\"']?{_HAS_DIGIT}[^\s\"',;]{{12,}}",
    r"\b(?:ak|sk)\s*[:=]\s*[\"']?[a-z0-9][^\s\"',;]{5,}",
    rf"(?<![a-z0-9_])(?:ak|sk)[-_=:]{_HAS_DIGIT}[a-z0-9_=-]{{10,}}",
    # Query-string secrets in URLs.
    r"[?&](?:password|pwd|pass|token|access_token|api_key|apikey|key|secret|sig|signature)="
    r"[^&\s]{8,}",
    # Credentials embedded in a URL's userinfo (the scheme is bounded: no
    # quadratic scan over long dotted text).
    r"\b[a-z][a-z0-9+.-]{0,30}://[^/\s:@]+:[^/\s@]+@",
    # Vendor token formats.
    r"\bgh[pousr]_[a-z0-9]{20,}\b",
    r"\bgithub_pat_[a-z0-9_]{20,}",
    r"\beyj[a-z0-9_-]{10,}\.[a-z0-9_-]{10,}\.[a-z0-9_-]{10,}",
    r"(?-i:\b(?:AKIA|ASIA|AGPA|AIDA|AROA|ANPA|ANVA|AIPA|ABIA|ACCA)[A-Z0-9]{16}\b)",
    r"(?-i:\bAIza[0-9A-Za-z_-]{35})",
    r"(?-i:\bGOCSPX-[A-Za-z0-9_-]{20,})",
    r"(?-i:\bya29\.[0-9A-Za-z_-]{20,})",
    r"\bxox[abposr]-[a-z0-9-]{10,}",
    r"\bxapp-[0-9]-[a-z0-9-]{10,}",
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
    r"\bdckr_pat_[a-z0-9_-]{20,}",
    r"\brubygems_[a-f0-9]{48}",
    r"\bsntry[su]_[a-z0-9_=+/-]{30,}",
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
    # ~/x and ~user/x (not `~5/10`)
    r"(?<![\w/~])~(?:[a-z_][a-z0-9_.-]*)?/[^\s`'\"<>]*",
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

# Case-insensitive matching is done by lower-casing the value and compiling the
# big alternation *without* re.IGNORECASE: that halves its compile time (every
# CLI process pays it at start-up, ~13 ms -> ~6 ms). The few shapes that are
# case-sensitive in part (vendor prefixes in upper case, a case change inside a
# base64 run) form a second, small pattern applied to the value as given.
_CASED_SHAPES: Final = tuple(shape for shape in _CREDENTIAL_SHAPES if "(?-i:" in shape)
_UNSAFE: Final = re.compile(
    "(?P<credential>"
    + "|".join(shape for shape in _CREDENTIAL_SHAPES if "(?-i:" not in shape)
    + ")|(?P<local_path>"
    + "|".join(_LOCAL_PATH_SHAPES)
    + ")"
)
_UNSAFE_CASED: Final = re.compile("|".join(_CASED_SHAPES), re.IGNORECASE)

# The prefilter: anchor character -> what must follow it (or precede it, as a
# look-behind). Every shape above contains at least one of these anchors; the
# comments name the shapes each one stands for. Anchors are symbols or rare
# letters, because each occurrence of an anchor costs a trip into the regex
# engine; cheap forward checks come before look-behinds for the same reason.
# Continuations are case-insensitive, except in _CASED_ANCHORS.
#
# A `name: value` assignment is anchored on the colon. The name is checked by
# its last two to five letters, with zero or one whitespace before the colon;
# a colon after two or more whitespace characters always fires, so the `\s*`
# of the shapes is covered.
_NAME_TAILS = (
    r"(?<=(?:[as]k|id){0}:)"  # ak, sk, *_id
    # the tails of key, token, secret, pwd, passwd, password, passphrase and credential(s)
    r"|(?<=(?:key|ken|ret|pwd|swd|ord|ase|ial|als){0}:)"
    r"|(?<=ation{0}:)"  # authorization
)
_ANCHORS: Final = {
    # Every `name=value` shape: assignments, query-string secrets, AccountKey=,
    # SharedAccessSignature=, sessionid=.
    "=": r"",
    # /home/, /Users/, ... (with the same look-behind as the shape) and
    # scheme://user:pass@ userinfo.
    "/": rf"(?<![\w/.~-]/)(?:{_POSIX_ROOTS})|/[^/\s:@]*:[^/\s@]*@",
    # C:\x, \\server\share, ..\x.
    "\\": r"",
    "~": r"",  # ~/x, ~user/x
    "$": r"",  # $HOME/, ${HOME}/
    "%": r"[a-z]",  # %USERPROFILE%
    # D:/x, x:/y, file:/, Telegram bot tokens (123456789:AA...), and
    # `name: value` assignments (gated on the name's last letter).
    ":": (
        r"/(?!/)(?<![a-z0-9_][a-z]:/)(?<=[a-z]:/)|/(?<=file:/)|aa|(?<=\s\s:)"
        r"|(?<=[kdyntels]:)(?:"
        + _NAME_TAILS.format("")
        + r")|(?<=[kdyntels]\s:)(?:"
        + _NAME_TAILS.format(r"\s")
        + ")"
    ),
    # ../x, .ssh/, Discord (<24+ alnum>.xxxxxx.), SendGrid SG., Vault hvs.,
    # ya29., Slack webhooks, Terraform .atlasv1. Every one continues with a word
    # character, a slash or a dot, so sentence-ending dots stop at once.
    ".": (
        r"(?=[\w\\/.-])(?:\.[\\/]|(?:ssh|aws|gnupg|kube|docker|azure|gcloud|config)/"
        r"|[\w-]{6}\.(?<=[a-z0-9]{24}\.[\w-]{6}\.)"
        r"|(?=[a-z0-9_-]{16})(?:(?<=sg\.)|(?<=hvs\.)|(?<=ya29\.))"
        r"|slack\.com/|atlasv1\.)"
    ),
    # PEM private-key headers; vendor prefixes ending in `-`: sk-/ak-/pmak-,
    # key-<hex>, age-secret-key-, pypi-, xox?-, xapp-, GitLab gl*-, GOCSPX-,
    # Square sq0atp-/sq0csp-. Gated on the letter before `-`; each is followed
    # by 10+ token characters.
    "-": (
        r"----|(?<=[kyipabosrtx]-)(?=[a-z0-9_=-]{10})(?:(?<=k-)|(?<=key-)"
        r"|(?<=pypi-|xapp-|xox[abposr]-|gl(?:dt|rt)-)|(?<=gl(?:pat|ptt|cbt|oas)-)"
        r"|(?<=gocspx-|sq0atp-|sq0csp-))"
    ),
    # Vendor prefixes ending in `_`: sk_/pk_/rk_/ak_, hf_, npm_, gh?_, do?_,
    # github_pat_/dckr_pat_, glsa_, shp??_, secret_, sntry?_, lin_api_, rubygems_.
    # Gated on the letter before `_`; each is followed by 10+ token characters.
    "_": (
        r"(?<=[kfmpousrtai]_)(?=[a-z0-9_=+/-]{10})(?:(?<=k_)|(?<=hf_)"
        r"|(?<=npm_|gh[pousr]_|do[opr]_)|(?<=_pat_|glsa_|dckr_)|(?<=shp[a-z]{2}_)"
        r"|(?<=secret_|sntry[su]_)|(?<=lin_api_)|(?<=rubygems_))"
    ),
    "b": r"earer\s|asic\s",  # bearer <token>, basic <base64>
    "j": r"[a-z0-9_-]{10}(?<=eyj[a-z0-9_-]{10})",  # eyJ... (JWT)
    "p": r"i(?<=dapi)[0-9a-f]{32}",  # Databricks dapi<hex>
}
# Anchors for the case-sensitive vendor shapes (uppercase-only prefixes).
_CASED_ANCHORS: Final = {
    "A": r"KIA|SIA|GPA|IDA|ROA|NPA|NVA|IPA|BIA|CCA|Iza|TATT3",  # AWS, Google, Atlassian
    "S": r"K[0-9a-f]{32}",  # Twilio
}


def _build_trigger() -> re.Pattern[str]:
    branches: dict[str, list[str]] = {}
    for anchor, rest in _ANCHORS.items():
        spellings = {anchor.lower(), anchor.upper()}
        for char in spellings:
            branches.setdefault(char, []).append(f"(?i:{rest})" if rest else "")
    for anchor, rest in _CASED_ANCHORS.items():
        branches.setdefault(anchor, []).append(f"(?:{rest})")
    # One branch per anchor character, each starting with that literal: the
    # engine then computes a character-set prefix and skips everything else in C.
    return re.compile(
        "|".join(
            re.escape(char) + ("(?:" + "|".join(rests) + ")" if all(rests) else "")
            for char, rests in sorted(branches.items())
        )
    )


_TRIGGER: Final = _build_trigger()


def find_unsafe(value: str) -> UnsafeKind | None:
    """Return ``"credential"`` or ``"local_path"`` when ``value`` has such a shape."""
    if _TRIGGER.search(value) is None:
        return None
    return _full_scan(value)


def _full_scan(value: str) -> UnsafeKind | None:
    """The scan without the prefilter (tests hold the prefilter to it)."""
    match = _UNSAFE.search(value.lower())
    if match is not None:
        return "credential" if match.lastgroup == "credential" else "local_path"
    if _UNSAFE_CASED.search(value) is not None:
        return "credential"
    return None


def require_safe(value: str, *, path: str = "$", label: str = "value") -> str:
    """Return ``value`` unchanged, or raise :class:`UnsafeTextError` naming ``path``.

    The message names the kind of shape found, never the value itself.
    """
    kind = find_unsafe(value)
    if kind is not None:
        what = "a credential" if kind == "credential" else "a local path"
        raise UnsafeTextError(f"{label} must be public-safe: it contains {what}", path=path)
    return value


def compact_text(value: object, *, limit: int, path: str = "$", label: str = "text") -> str:
    """Normalise free text: strip, collapse whitespace runs to one space, check it.

    The limit applies to the normalised text, as in the original's ``CT(n)``.
    Raises :class:`UnsafeTextError` when the value is not a string, is empty,
    is longer than ``limit`` characters (it is rejected, never truncated), or
    contains a credential or local-path shape. The message never repeats the
    value.
    """
    if not isinstance(value, str):
        raise UnsafeTextError(f"{label} must be a string", path=path, code="wrong_type")
    text = " ".join(value.split())
    if not text:
        raise UnsafeTextError(f"{label} must not be empty", path=path, code="empty_text")
    if len(text) > limit:
        raise UnsafeTextError(
            f"{label} is {len(text)} characters, over the limit of {limit}; "
            "it is rejected, not truncated",
            path=path,
            code="text_too_long",
        )
    return require_safe(text, path=path, label=label)
