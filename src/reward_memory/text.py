"""Compact public-safe text and the secret / local-path scan.

Every free-text field and every identifier that can reach a provider or a
public packet goes through :func:`find_unsafe`. Free text additionally goes
through :func:`compact_text`, which collapses whitespace and **rejects** (never
truncates) over-long input: two different long summaries must never collapse
into one identity (the original truncated silently; see CHANGELOG).

Text hygiene comes first: a control character (other than tab, newline and
carriage return in free text) or a lone surrogate is refused everywhere with
the code ``unsafe_character`` (``_UNSAFE_CHARACTER``; the JSON Schemas' ``text``
def refuses the same set).

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
that for every positive example, for every shape, and for generated variants;
``tests/test_secret_corpus.py`` holds the scan to a generated corpus of
credentials and look-alikes.
"""

from __future__ import annotations

import functools
import re
import unicodedata
from typing import Final, Literal, NoReturn

# The shapes themselves (named secret assignments, vendor tokens, URL credentials,
# machine-local paths) are a table of their own, read apart from the scan.
from reward_memory._text_shapes import _CREDENTIAL_SHAPES, _LOCAL_PATH_SHAPES, _POSIX_ROOTS
from reward_memory.errors import UnsafeTextError

__all__ = [
    "UnsafeKind",
    "compact_text",
    "find_unsafe",
    "has_unsafe_character",
    "prefilter_stops",
    "require_safe",
    "require_safe_characters",
    "shown",
]

UnsafeKind = Literal["credential", "local_path", "unsafe_character"]

# Characters no text field or identifier may hold: C0 controls other than tab,
# newline and carriage return (free text compacts those to a space), DEL, C1
# controls, and lone surrogates (``json.loads`` yields them from ``"\\ud800"``:
# they cannot be encoded, so printing or hashing them would crash later). Written
# as the refused ranges themselves, the exact complement of the allowed set
# ``[\t\n\r -~\xa0-\ud7ff\ue000-\U0010ffff]``: one range scan, about 0.5 µs for 200
# characters, and ~0.4 ms to compile where the negated wide ranges took ~3 ms
# at every start-up. The JSON Schemas publish the same set
# (``tests/test_text_hygiene.py``).
_UNSAFE_CHARACTER: Final = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\ud800-\udfff]")


# Case-insensitive matching is done by lower-casing the value and compiling the
# big alternation *without* re.IGNORECASE: that halves its compile time (every
# CLI process pays it at start-up, ~13 ms -> ~6 ms). The few shapes that are
# case-sensitive in part (vendor prefixes in upper case, a case change inside a
# base64 run) form a second, small pattern applied to the value as given.
#
# Both are compiled on first use (``_unsafe()``, ``_unsafe_cased()``), not at
# import: only text the prefilter lets through needs them, and a process that
# never meets such text never pays their ~10 ms.
_CASED_SHAPES: Final = tuple(shape for shape in _CREDENTIAL_SHAPES if "(?-i:" in shape)


@functools.cache
def _unsafe() -> re.Pattern[str]:
    return re.compile(
        "(?P<credential>"
        + "|".join(shape for shape in _CREDENTIAL_SHAPES if "(?-i:" not in shape)
        + ")|(?P<local_path>"
        + "|".join(_LOCAL_PATH_SHAPES)
        + ")"
    )


@functools.cache
def _unsafe_cased() -> re.Pattern[str]:
    return re.compile("|".join(_CASED_SHAPES), re.IGNORECASE)


# The prefilter: anchor character -> what must follow it (or precede it, as a
# look-behind). Every shape above contains at least one of these anchors; the
# comments name the shapes each one stands for. Anchors are symbols or rare
# letters, because each occurrence of an anchor costs a trip into the regex
# engine; cheap forward checks come before look-behinds for the same reason.
# Continuations are case-insensitive, except in _CASED_ANCHORS.
#
# A `name: value` assignment is anchored on the colon. The name is checked by
# its last two to five letters, with zero or one whitespace before the colon;
# a colon after two or more whitespace characters, or after a quote or `*` (a
# quoted or emphasised name), always fires, so the `\s*` and the quotes of the
# shapes are covered.
_NAME_TAILS = (
    r"(?<=(?:[as]k|id){0}:)"  # ak, sk, *_id
    # the tails of key, token, secret(s), pwd, passwd, password(s), passphrase,
    # passcode, credential(s), auth, pass, dsn, conn_str and connection_string
    r"|(?<=(?:key|ken|ret|ets|pwd|swd|rds|ase|ode|ial|als|uth|ass|dsn|str){0}:)"
    # connection_string (not viking:), password (not record: -- every stored
    # record_ref is one -- nor keyword:)
    r"|(?<=(?:ring|word){0}:)"
    r"|(?<=rization{0}:)"  # authorization (not activation:, every activation_ref)
)
_NAME_GATE = "[kdyntelshrg]"  # the last letters of those tails
_ANCHORS: Final = {
    # Every `name=value` shape: assignments, query-string secrets, AccountKey=,
    # SharedAccessSignature=, sessionid=.
    "=": r"",
    # /home/, /Users/, ... (with the same look-behind as the shape) and
    # scheme://user:pass@ userinfo.
    "/": rf"(?<![\w/~-]/)(?<!(?<![\w.])\./)(?:{_POSIX_ROOTS})|/[^/\s:@]*:[^/\s@]*@",
    # C:\x, \\server\share, ..\x.
    "\\": r"",
    "~": r"",  # ~/x, ~user/x
    "$": r"",  # $HOME/, ${HOME}/
    "%": r"[a-z]",  # %USERPROFILE%
    # D:/x, x:/y, file:/, Telegram bot tokens (123456789:AA..., eight digits at least:
    # a bare `:aa` would stop at one hex ref in 256, e.g. `memory:aa...`), and
    # `name: value` assignments (gated on the name's last letter).
    # Every look-behind needs the character before the colon to be a gate
    # letter, a space or a quote: tested once first, so the colon of an
    # identifier such as `data:x` costs one test, not ten.
    ":": (
        r"///(?!/)|/(?!/)(?<![a-z0-9_][a-z]:/)(?<=[a-z]:/)|/(?<=file:/)|aa(?<=[0-9]{8}:aa)"
        rf"|(?<=[{_NAME_GATE[1:-1]}\s\"'`*]:)(?:(?<=\s\s:)"
        r"|(?<=[\"'`*]:)|(?<=[\"'`*]\s:)"
        rf"|(?<={_NAME_GATE}:)(?:"
        + _NAME_TAILS.format("")
        + rf")|(?<={_NAME_GATE}\s:)(?:"
        + _NAME_TAILS.format(r"\s")
        + "))"
    ),
    # <password>value</password>: the element name's tail, as for the colon.
    ">": r"(?<=id>)|(?<=(?:key|ken|ret|ets|pwd|swd|ord|rds|ase|ode|ial|als|str)>)|(?<=ring>)",
    # ../x, .ssh/, Discord (<24+ alnum>.xxxxxx.), SendGrid SG., Vault hvs.,
    # ya29., Slack webhooks, Terraform .atlasv1. Every one continues with a word
    # character, a slash or a dot, so sentence-ending dots stop at once.
    ".": (
        r"(?=[\w\\/.-])(?:\.[\\/]|(?:ssh|aws|gnupg|kube|docker|azure|gcloud|config)/"
        r"|[\w-]{6}\.(?<=[a-z0-9]{24}\.[\w-]{6}\.)"
        r"|(?=[a-z0-9_-]{16})(?:(?<=sg\.)|(?<=hvs\.)|(?<=ya29\.))"
        r"|slack\.com/|atlasv1\.|com/api/webhooks/)"
    ),
    # PEM private-key headers; vendor prefixes ending in `-`: sk-/ak-/pmak-,
    # key-<hex>, age-secret-key-, pypi-, xox?-, xapp-, GitLab gl*-, GOCSPX-,
    # Square sq0atp-/sq0csp-. Gated on the letter before `-`; each is followed
    # by 10+ token characters. And `--password value` options, `-u user:pass` and
    # `sshpass -p pass`.
    "-": (
        r"----|-[a-z]|u\s|us[0-9](?<=[a-f0-9]{32}-us[0-9])|p(?<=s\s-p)|p(?<=\s\s-p)"
        r"|(?<=[kyipabosrtx]-)(?=[a-z0-9_=-]{10})(?:(?<=k-)|(?<=key-)"
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


@functools.cache
def _trigger() -> re.Pattern[str]:
    """The prefilter, compiled on first use."""
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


# The fast way to the prefilter's verdict (``prefilter_stops(value)`` is exactly
# ``_trigger().search(value) is not None``; ``tests/test_text.py`` holds the two
# equal). The one alternation scans a character set, ~12 ns a character with its
# case-insensitive letters; a long ASCII string (``str.lower`` then keeps every
# position, and case-insensitive matching of these lower-case branches is
# matching them on the lowered text) is instead asked, anchor by anchor, whether
# the anchor occurs at all (a C substring search) and only then searched with
# that anchor's own branch, case-sensitively. A branch that can only match with a
# longer literal around its anchor is skipped unless that literal occurs (the
# JWT ``eyj``, Databricks ``dapi``). Any other string takes the alternation.
_NEEDS: Final = {"j": "eyj", "p": "dapi"}

# (the anchor, a longer literal a match needs or "", the branch or None: the anchor alone)
_Branch = tuple[str, str, re.Pattern[str] | None]


@functools.cache
def _branches() -> tuple[tuple[_Branch, ...], tuple[_Branch, ...]]:
    """The prefilter's branches, one per anchor: (on the lowered text, on the text as given)."""
    lowered: list[_Branch] = []
    for anchor, rest in _ANCHORS.items():
        char = anchor.lower()
        # A rest with an upper-case letter (``\S``, ``[A-Z]``) would change when
        # lowered: then it keeps its own case-insensitive flag.
        body = rest if rest == rest.lower() else f"(?i:{rest})"
        pattern = re.compile(re.escape(char) + f"(?:{body})") if rest else None
        lowered.append((char, _NEEDS.get(char, ""), pattern))
    cased: list[_Branch] = [
        (anchor, "", re.compile(re.escape(anchor) + f"(?:{rest})"))
        for anchor, rest in _CASED_ANCHORS.items()
    ]
    return tuple(lowered), tuple(cased)


# Below this length the one alternation is cheaper than asking anchor by anchor
# (a loop of ~16 steps): a field's own text; the joined strings of a record are longer.
_ANCHOR_BY_ANCHOR: Final = 192


def prefilter_stops(value: str) -> bool:
    """Whether the prefilter stops anywhere in ``value`` (then the full scan decides)."""
    if len(value) < _ANCHOR_BY_ANCHOR or not value.isascii():
        return _trigger().search(value) is not None
    lowered, cased = _branches()
    low = value.lower()
    for anchor, needs, pattern in lowered:
        if (
            anchor in low
            and needs in low  # "" is in every string
            and (pattern is None or pattern.search(low) is not None)
        ):
            return True
    for anchor, _, pattern in cased:
        if anchor in value and pattern is not None and pattern.search(value) is not None:
            return True
    return False


# The allowed ASCII characters (tab, newline, carriage return, space to ``~``): an
# ASCII string holds an unsafe character exactly when deleting these leaves any.
_ALLOWED_ASCII: Final = b"\t\n\r" + bytes(range(0x20, 0x7F))
_SHORT: Final = 32


def has_unsafe_character(value: str) -> bool:
    """Whether ``value`` holds a character of ``_UNSAFE_CHARACTER`` (same verdict, faster
    for ASCII: one byte translation instead of a range scan)."""
    if len(value) < _SHORT or not value.isascii():  # the range scan is cheaper when short
        return _UNSAFE_CHARACTER.search(value) is not None
    return bool(value.encode("ascii").translate(None, _ALLOWED_ASCII))


# The compiled patterns under their historical names (tests read them), built on
# first access rather than at import.
_LAZY: Final = {"_TRIGGER": _trigger, "_UNSAFE": _unsafe, "_UNSAFE_CASED": _unsafe_cased}


def __getattr__(name: str) -> re.Pattern[str]:
    builder = _LAZY.get(name)
    if builder is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return builder()


def find_unsafe(value: str) -> UnsafeKind | None:
    """Return the kind of unsafe content in ``value``, or ``None`` when it is public-safe.

    ``"unsafe_character"`` (a control character or a lone surrogate, see
    ``_UNSAFE_CHARACTER``), ``"credential"`` or ``"local_path"``.
    """
    # A field's short text takes the patterns directly (no call in between: this
    # runs for every field a validator checks).
    if (
        _UNSAFE_CHARACTER.search(value) is not None
        if len(value) < _SHORT
        else has_unsafe_character(value)
    ):
        return "unsafe_character"
    return _find_shape(value)


# Characters a reader does not see, which would split a shape so that the scan
# misses it (``ghp_\u200b...``, ``/ho\u00adme/``): every format character (Unicode
# category Cf: zero-width, soft hyphen, bidi controls, tags), every combining mark
# (Mn, Me: accents, variation selectors, fillers such as U+16FE4), every unassigned
# code point (Cn, where the default-ignorable ranges U+2065, U+FFF0-FFF8 and
# U+E0000-E0FFF lie) and the blank letters (the Hangul fillers, the braille blank).
# The scan reads a non-ASCII value without them (``shown``), so it sees the shape a
# reader sees; decided per code point from ``unicodedata`` the first time the code
# point is met, then by ``str.translate`` in C (the tables are bounded).
_BLANKS: Final = frozenset({0x115F, 0x1160, 0x2800, 0x3164, 0xFFA0})
_HIDDEN_CATEGORIES: Final = frozenset({"Cf", "Mn", "Me", "Cn"})
_TABLE_SIZE: Final = 65536


class _Hidden(dict[int, "int | None"]):
    """A ``str.translate`` table: hidden code points map to ``replacement``, others kept."""

    def __init__(self, replacement: int | None) -> None:
        super().__init__()
        self.replacement = replacement

    def __missing__(self, code: int) -> int | None:
        hidden = code in _BLANKS or unicodedata.category(chr(code)) in _HIDDEN_CATEGORIES
        kept = self.replacement if hidden else code
        if len(self) < _TABLE_SIZE:
            self[code] = kept
        return kept


_HIDDEN: Final = _Hidden(None)
_HIDDEN_AS_SPACE: Final = _Hidden(0x20)


def shown(value: str, *, breaks: bool = False) -> str:
    """``value`` as the scan reads it: the value itself when ASCII; otherwise without the
    hidden characters (``_Hidden``), or with each one read as a space (``breaks``: a
    zero-width space separates words in Khmer, Lao or Myanmar text)."""
    if value.isascii():
        return value
    return value.translate(_HIDDEN_AS_SPACE if breaks else _HIDDEN)


# Explicit bidi overrides: the text reads right to left from here, so a shape written
# reversed after one is what a reader sees in order.
_OVERRIDES: Final = ("\u202d", "\u202e")


def _find_shape(value: str) -> UnsafeKind | None:
    if not value.isascii():
        if any(mark in value for mark in _OVERRIDES):
            found = _find_shape(shown(value)[::-1])
            if found is not None:
                return found
        value = shown(value)
    if (
        _trigger().search(value) is None
        if len(value) < _ANCHOR_BY_ANCHOR
        else not prefilter_stops(value)
    ):
        return None
    return _scan(value)


def _full_scan(value: str) -> UnsafeKind | None:
    """The scan without the prefilter (tests hold the prefilter to it)."""
    if _UNSAFE_CHARACTER.search(value) is not None:
        return "unsafe_character"
    return _scan(value)


def _scan(value: str) -> UnsafeKind | None:
    match = _unsafe().search(value.lower())
    if match is not None:
        return "credential" if match.lastgroup == "credential" else "local_path"
    if _unsafe_cased().search(value) is not None:
        return "credential"
    return None


_FOUND: Final = {
    "credential": "a credential",
    "local_path": "a local path",
    "unsafe_character": "a control character or a lone surrogate",
}


def _raise_unsafe(kind: UnsafeKind, path: str, label: str) -> NoReturn:
    code = "unsafe_character" if kind == "unsafe_character" else None
    raise UnsafeTextError(
        f"{label} must be public-safe: it contains {_FOUND[kind]}", path=path, code=code
    )


def require_safe_characters(value: str, *, path: str = "$", label: str = "value") -> str:
    """Return ``value``, or raise ``unsafe_character`` for a control character or lone surrogate."""
    if (
        _UNSAFE_CHARACTER.search(value) is not None
        if len(value) < _SHORT
        else has_unsafe_character(value)
    ):
        _raise_unsafe("unsafe_character", path, label)
    return value


def require_safe(value: str, *, path: str = "$", label: str = "value") -> str:
    """Return ``value`` unchanged, or raise :class:`UnsafeTextError` naming ``path``.

    The message names the kind of content found, never the value itself; the
    code is ``unsafe_character`` for a control character or lone surrogate,
    ``unsafe_text`` for a credential or local-path shape.
    """
    kind = find_unsafe(value)
    if kind is not None:
        _raise_unsafe(kind, path, label)
    return value


def compact_text(value: object, *, limit: int, path: str = "$", label: str = "text") -> str:
    """Normalise free text: strip, collapse whitespace runs to one space, check it.

    The limit applies to the normalised text, as in the original's ``CT(n)``.
    Raises :class:`UnsafeTextError` when the value is not a string, holds a
    control character other than tab, newline or carriage return, or a lone
    surrogate (code ``unsafe_character``), is empty, is longer than ``limit``
    characters (it is rejected, never truncated), or contains a credential or
    local-path shape. The message never repeats the value.
    """
    if not isinstance(value, str):
        raise UnsafeTextError(f"{label} must be a string", path=path, code="wrong_type")
    # Before collapsing: str.split() counts some controls (\x1c-\x1f, \x85) as
    # whitespace and would silently turn them into spaces.
    require_safe_characters(value, path=path, label=label)
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
    kind = _find_shape(text)
    if kind is not None:
        _raise_unsafe(kind, path, label)
    return text
