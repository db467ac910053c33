"""The shapes the secret and local-path scan refuses (private to :mod:`reward_memory.text`).

Each shape is a regular expression over lower-cased text (a few carry ``(?-i:...)``
parts that are matched on the text as given); :mod:`reward_memory.text` compiles
them into its scan and keeps the prefilter's anchors beside them, and
``tests/test_text.py`` holds every shape to a positive example the prefilter stops at.
"""

from __future__ import annotations

from typing import Final

__all__ = ["_CREDENTIAL_SHAPES", "_LOCAL_PATH_SHAPES", "_POSIX_ROOTS"]


# -- Named secret assignments ---------------------------------------------------------
#
# ``name SEP value`` where ``name`` is credential-like, ``SEP`` is ``=``, ``:``,
# ``:=``, ``=>`` or ``==`` (whitespace allowed around it), and the name and value
# may be quoted (``"password": "x"``, ``'api_key' => 'x'``, JSON-escaped ``\\"``).
# The text is lower-cased first, so ``apiKey``, ``API_KEY`` and ``api-key`` read
# alike. A name counts when it *ends* in a credential word, so ``db_password``,
# ``PGPASSWORD`` and ``aws_secret_access_key`` count while ``password_hint``,
# ``token_budget`` and ``max_tokens`` do not (``token_budget=500`` is benign).
#
# Strong names (password, passwd, pwd, passphrase, passcode, secret, credential(s),
# connection string / conn_str, and key or token after a credential prefix such as
# api, access, secret, private, client, auth, session, refresh, id, bearer):
# any value is a credential, whatever character it starts with (AWS secret keys
# start with ``+`` or ``/``), except
#   * an empty value, or one of fewer than 3 characters unquoted;
#   * ``name://...``: a URL (``secret://vault/db`` is a reference, not a value);
#   * a placeholder: ``<...>``, ``${...}``, ``{{...}}``, ``$NAME`` or ``%NAME%``
#     without digits, ``***``, ``xxx``, ``...``, ``-``, ``[redacted]``, or a
#     status word (redacted, none, null, required, expired, reset, ...);
#   * a reference in code, unquoted: ``os.getenv("X")``, ``settings.db_password``;
#   * prose, after a colon only: an unquoted plain word followed by more words
#     (``password: reset it via the flow``, ``client_secret: see vault``). A
#     quoted value is never prose (``passphrase: 'open sesame'`` is a credential),
#     nor is anything after ``=`` (``password=hunter`` is one).
# Weak names (a bare or ``_``-joined key, token, auth, authorization, pass, dsn):
# the value must look generated: 8 or more characters, at least one a digit
# (``key: value`` and ``sort_key=created_at`` are benign, ``token=+aB3/...`` is not).


def _words(text: str) -> tuple[str, ...]:
    return tuple(text.split())


_KEY_PREFIXES: Final = _words(
    "api access secret private client auth session signing sign encryption encrypt master"
    " ssh account storage app consumer deploy service license subscription shared webhook"
    " admin root user jwt hmac sas gpg pgp crypto cipher aes rsa pass aws gcp azure google"
    " stripe openai anthropic sendgrid mailgun twilio"
)
_TOKEN_PREFIXES: Final = _words(
    "access refresh auth id session bearer api csrf xsrf oauth oauth2 bot secret security"
    " github gh gitlab npm pypi slack hf huggingface jwt client app service deploy registry"
    " vault cf discord telegram webhook admin master user sas login private"
)


def _after(prefixes: tuple[str, ...], word: str) -> str:
    """``word`` preceded by one of ``prefixes`` (glued or with one of ``_. -``).

    Written as look-behinds *after* the word, so the scan only tests the
    prefixes where the word itself occurs (a leading alternation of fifty
    prefixes would be tried at every position).
    """
    behind = "|".join(f"(?<={p}{word})|(?<={p}[_. -]{word})" for p in prefixes)
    return f"{word}(?:{behind})"


_STRONG_NAME = (
    r"(?:passw(?:or)?ds?|passphrase|passcode|pwd|secrets?|credentials?"
    rf"|{_after(_KEY_PREFIXES, 'key')}(?:[_. -]?id)?"
    rf"|{_after(_TOKEN_PREFIXES, 'token')}"
    r"|conn(?:ection)?[_. -]?str(?:ing)?)"
)
_WEAK_NAME = r"(?<![a-z0-9])(?:key|token|auth|authorization|pass|dsn)"
# After the name: its closing quote or Markdown emphasis (`**password**: x`), then
# the separator (not `://`, a URL).
_NAME_QUOTE = r"(?:\\?[\"'`]|\*\*?)?\s*"
_SEPARATOR = rf"{_NAME_QUOTE}(?::=|=>|==|=|:(?!//))\s*"
_QUOTE = r"\\?[\"'`]"
_PLACEHOLDER = (
    r"(?:<[^<>]*>|\$\{[^{}]*\}|\{\{[^{}]*\}\}|\$[a-z_]+|%[a-z_]+%|\[[a-z _-]*\]"
    r"|\([a-z _-]*\)|[*x•-]+|\.\.+|…"
    r"|redacted|hidden|masked|removed|omitted|withheld|none|null|nil|empty|unset|undefined"
    r"|required|optional|missing|expired|invalid|revoked|rotated|true|false|yes|no|n/a"
    r"|tbd|todo|placeholder|example|reset|changed|set)"
)
# Where a placeholder must end for the whole value to be one.
_END = r"(?:[\s\"'`\\,;&)\]}<]|[.!?](?:\s|$)|$)"
# A reference in code is not a value: a dotted call or subscript (``os.getenv(``,
# ``os.environ[``, also bare ``getenv(`` / ``env(``), or a dotted name without
# digits (``settings.db_password``, ``process.env.API_KEY``).
_CODE_CALL = r"(?:(?:[a-z_][a-z0-9_]*\.)+[a-z_][a-z0-9_]*|(?:get)?env(?:iron)?)[(\[]"
_CODE_NAME = r"[a-z_]+(?:\.[a-z_]+)+"
# An unquoted value: the first character may be anything but a quote or whitespace
# (`+`, `/`, `-`, `_`, `;` ... all start real secrets); the rest stops at a delimiter.
_BARE = (
    rf"(?!(?:{_PLACEHOLDER}|{_CODE_NAME}){_END}|{_CODE_CALL})"
    r"[^\s\"'`][^\s\"'`,;&<]{2,}"
)
_QUOTED = rf"{_QUOTE}(?!{_PLACEHOLDER}{_END}|{_QUOTE})[^\s\"'`]"
# A colon also introduces prose ("Password: reset it via the flow"), `=` does not.
_STRONG_VALUE = (
    rf"(?:(?::=|=>|==|=)\s*(?:{_QUOTED}|{_BARE})"
    rf"|:(?!//)\s*(?:{_QUOTED}|(?![a-z]+[,.;:!?]?\s+[a-z0-9(\[]){_BARE}))"
)
# A value that "looks generated": contains a digit. Real keys almost always do,
# prose almost never does; this keeps `bearer authentication_required` benign.
_HAS_DIGIT = r"(?=[^\s\"'`]*[0-9])"
# The digit is looked for in the first 100 characters only: an unbounded look-ahead
# would rescan a long run such as `key=key=key=...` from every name (quadratic).
_WEAK_VALUE = (
    rf"(?:{_QUOTE})?(?!{_PLACEHOLDER}{_END})(?=.[^\s\"'`,;&]{{0,99}}?[0-9])"
    r"[^\s\"'`][^\s\"'`,;&]{7,}"
)

_CREDENTIAL_SHAPES: Final = (
    # HTTP authorization headers and bearer / basic credentials.
    rf"\bbearer\s+{_HAS_DIGIT}[a-z0-9._~+/=-]{{16,}}",
    # base64 after `basic`: needs a digit, '=' or a lower->upper hump, so that
    # prose such as `basic authentication required` passes.
    r"\bbasic\s+(?=(?-i:[A-Za-z0-9+/]*(?:[0-9=]|[a-z][A-Z])))[a-z0-9+/]{12,}",
    # In an authorization header (or an `auth=` setting) whatever follows the
    # scheme is the credential, digits or not.
    r"\b(?:proxy-)?auth(?:orization)?\s*[:=]\s*[\"']?(?:bearer|basic|digest|token|negotiate)\s+"
    r"[a-z0-9._~+/=-]{8,}",
    r"\bx-(?:api-key|auth-token|access-token)\s*[:=]\s*[a-z0-9][^\s\"',;]{7,}",
    # Named secret assignments (see above): name = value, "name": "value", ...
    rf"{_STRONG_NAME}{_NAME_QUOTE}{_STRONG_VALUE}",
    rf"{_WEAK_NAME}{_SEPARATOR}{_WEAK_VALUE}",
    # ... as an XML element, and as a command-line option with a space.
    rf"<[a-z0-9_.:-]{{0,40}}?{_STRONG_NAME}>\s*(?!{_PLACEHOLDER}\s*<)[^<\s]{{3,}}",
    r"(?<![\w-])--[a-z0-9-]{0,30}?(?:passw(?:or)?d|passphrase|pwd|secret|token|api-?key|auth)"
    rf"\s+(?![a-z]+(?:\s|$))(?!{_PLACEHOLDER}{_END})[^\s\"'`-][^\s\"'`]{{2,}}",
    # The original's CT rules (reference 1.2): `ak`/`sk` assigned any value, `ak`/`sk`
    # glued to 10+ key characters, `token` assigned 12+ characters -- placeholders aside.
    rf"\b(?:ak|sk)\s*[:=]\s*(?!{_PLACEHOLDER}{_END})[\"']?[^\s\"']",
    r"(?<![a-z0-9_])(?:ak|sk)[-_=:][a-z0-9_=-]{10,}",
    rf"token\s*[:=]\s*(?!{_PLACEHOLDER}{_END})[^\s]{{12,}}",
    # Query-string secrets in URLs.
    r"[?&](?:password|pwd|pass|token|access_token|api_key|apikey|key|secret|sig|signature"
    r"|x-(?:amz|goog)-(?:signature|credential|security-token))="
    r"[^&\s]{8,}",
    # A webhook URL is its own credential.
    r"\bdiscord(?:app)?\.com/api/webhooks/[0-9]+/[a-z0-9_-]{20,}",
    # user:password given to curl (-u / --user, spaced, glued or with =, quoted or not)
    # or a password to sshpass (-p). Only curl's: `docker run -u 1000:1000` is a uid.
    r"\bcurl\b[^\n]{0,200}?(?<![\w-])(?:-u|--user)(?:\s+|=)?[\"']?[^\s:\"'`]+:[^\s\"'`]{3,}",
    r"\bsshpass\s+-p\s*[^\s\"'`-][^\s\"'`]{2,}",
    # Mailchimp API keys.
    r"\b[a-f0-9]{32}-us[0-9]{1,2}\b",
    # Credentials embedded in a URL's userinfo (the scheme is bounded: no
    # quadratic scan over long dotted text).
    r"\b[a-z][a-z0-9+.-]{0,30}://[^/\s:@]*:[^/\s@]+@",
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
    # /home/x, /Users/x, /tmp/x ... not inside a URI (viking://resources/tmp/x) or a
    # relative path (a/tmp/b, ./tmp/b); `x:/home/y`, `x./home/y` and `.../tmp/y` still
    # count (the dot of `./` is relative only at the start of a word).
    rf"(?<![\w/~-])(?<!(?<![\w.])\.)/(?:{_POSIX_ROOTS})/[^\s`'\"<>]+",
    rf"(?<![\w/~-])(?<!(?<![\w.])\.)/(?:{_POSIX_ROOTS})\b(?=\s|$|[`'\"<>),;])",
    # ~/x and ~user/x (not `~5/10`)
    r"(?<![\w/~])~(?:[a-z_][a-z0-9_.-]*)?/[^\s`'\"<>]*",
    # C:\x, D:/x (not scheme:// URIs)
    r"(?<![a-z0-9_])[a-z]:[\\/](?![/\\])[^\s`'\"<>]*",
    # \\server\share
    r"(?<![\w\\])\\\\[a-z0-9._$-]+\\[^\s]*",
    r"\bfile:/{1,3}[^\s]+",
    # scheme:///abs/path: an empty authority, so the rest is a path on this machine
    # (sqlite:///home/alice/m.db); the look-behind above lets /home pass after a slash.
    r"\b[a-z][a-z0-9+.-]{0,30}:///(?!/)[^\s`'\"<>]+",
    r"\$\{?home\}?/",
    r"%(?:userprofile|appdata|localappdata|homepath|homedrive|temp|tmp)%",
    # ../x, ..\x
    r"(?<![\w.])\.\.[\\/][^\s]*",
    # dot-directories that hold credentials
    r"(?<![\w/.-])\.(?:ssh|aws|gnupg|kube|docker|azure|gcloud|config/gcloud)/[^\s]*",
)
