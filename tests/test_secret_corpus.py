"""A generated corpus for the secret scan: credentials must all be found, look-alikes pass.

Contract (DESIGN.md §5): "Every string that can reach a provider or a public
packet is checked for secrets and local paths." Issue item 8: secret scanning
is complete for assignments (``name=value``, ``name: value``, ``"name": "value"``
and the like, for every credential-like name, whatever character the value
starts with), the known provider formats are kept, and benign look-alikes (ids,
digests, UUIDs, ``viking://`` URIs, dotted module names, prose about passwords)
pass with at most 1 % false positives.

Everything here is FAKE and generated from fixed seeds (``random.Random``), so
the corpus is the same on every run and every machine.
"""

from __future__ import annotations

import random
import string
import uuid
from collections.abc import Callable

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from reward_memory.errors import UnsafeTextError
from reward_memory.text import _TRIGGER, compact_text, find_unsafe

ALNUM = string.ascii_letters + string.digits
B64 = ALNUM + "+/"
HEX = "0123456789abcdef"
# Every printable ASCII symbol a secret may start with (quotes start a quoted value).
SYMBOLS = "!#$%&()*+,-./:;<=>?@[\\]^_{|}~"


def _run(rng: random.Random, alphabet: str, size: int) -> str:
    return "".join(rng.choice(alphabet) for _ in range(size))


def _secret(rng: random.Random) -> str:
    """A generated secret: random length and alphabet, often led by a symbol, with a digit."""
    body = _run(rng, rng.choice([ALNUM, B64, ALNUM + "-_", ALNUM + "!@#%^*"]), rng.randint(6, 40))
    body = body[:-1] + rng.choice(string.digits)
    lead = rng.choice(["", "", rng.choice(SYMBOLS), rng.choice("+/-_")])
    return lead + body


# Credential-like names in the spellings real configs use.
NAMES = [
    "password",
    "passwd",
    "pwd",
    "passphrase",
    "secret",
    "client_secret",
    "clientSecret",
    "api_key",
    "apiKey",
    "api-key",
    "API_KEY",
    "aws_secret_access_key",
    "AWS_SECRET_ACCESS_KEY",
    "private_key",
    "privateKey",
    "auth_token",
    "AUTH_TOKEN",
    "access_token",
    "refresh_token",
    "db_password",
    "DB_PASSWORD",
    "PGPASSWORD",
    "connection_string",
    "connectionString",
    "conn_str",
    "credentials",
    "secret_key",
    "SECRET_KEY",
    "x-api-key",
    "session_token",
    "signing_key",
    "client secret",
    "private key",
    "api key",
]


def _assignment(template: str) -> Callable[[random.Random], str]:
    def make(rng: random.Random) -> str:
        name = rng.choice(NAMES)
        if template.startswith(("--", "<", "export")):
            name = name.replace(" ", "_")
        value = _secret(rng)
        if template.startswith("<"):
            value = value.lstrip("<&")  # XML escapes those
        return template.format(name=name, NAME=name.upper(), value=value)

    return make


def _vendor(prefix: str, alphabet: str, size: int) -> Callable[[random.Random], str]:
    return lambda rng: prefix + _run(rng, alphabet, size)


def _jwt(rng: random.Random) -> str:
    parts = (_run(rng, ALNUM + "-_", rng.randint(12, 40)) for _ in range(2))
    return "eyJ" + ".".join(parts) + "." + _run(rng, ALNUM + "-_", 30)


def _pem(rng: random.Random) -> str:
    kind = rng.choice(["RSA ", "EC ", "OPENSSH ", "DSA ", "ENCRYPTED ", ""])
    return f"-----BEGIN {kind}PRIVATE KEY-----"


def _userinfo(rng: random.Random) -> str:
    scheme = rng.choice(["https", "postgres", "mysql", "redis", "amqp", "mongodb+srv"])
    user = _run(rng, string.ascii_lowercase, rng.randint(3, 8))
    # RFC 3986 userinfo: unreserved and sub-delims (`/`, `@`, `:` must be escaped).
    password = _run(rng, ALNUM + "-._~!$&'()*+,;=", rng.randint(6, 30))
    return f"{scheme}://{user}:{password}@db.example.com:5432/app"


def _bearer(rng: random.Random) -> str:
    return "Authorization: Bearer " + _run(rng, ALNUM, 24) + rng.choice(string.digits)


def _basic(rng: random.Random) -> str:
    return "Authorization: Basic " + _run(rng, B64, 20) + "9=="


def _aws_pair(rng: random.Random) -> str:
    return "AKIA" + _run(rng, string.ascii_uppercase + string.digits, 16)


# Shape name -> generator. Thirty and more distinct shapes.
SHAPES: dict[str, Callable[[random.Random], str]] = {
    "eq": _assignment("{name}={value}"),
    "eq_spaced": _assignment("{name} = {value}"),
    "colon": _assignment("{name}: {value}"),
    "colon_tight": _assignment("{name}:{value}"),
    "json": _assignment('{{"{name}": "{value}"}}'),
    "json_tight": _assignment('{{"{name}":"{value}"}}'),
    "python_dict": _assignment("{{'{name}': '{value}'}}"),
    "walrus": _assignment("{name} := {value}"),
    "php_arrow": _assignment("'{name}' => '{value}'"),
    "ruby_arrow": _assignment(":{name} => {value}"),
    "env_quoted": _assignment('{NAME}="{value}"'),
    "env_export": _assignment("export {NAME}={value}"),
    "single_quoted": _assignment("{name}='{value}'"),
    "backticked": _assignment("{name}=`{value}`"),
    "cli_equals": _assignment("--{name}={value}"),
    "xml": _assignment("<{name}>{value}</{name}>"),
    "escaped_json": _assignment('{{\\"{name}\\":\\"{value}\\"}}'),
    "yaml_quoted": _assignment('{name}: "{value}"'),
    "in_prose": _assignment("Set {name}={value} before the deploy."),
    "double_eq": _assignment("{name} == {value}"),
    "semicolon_list": _assignment("Server=db;{name}={value};Timeout=30"),
    "ini_spaced": _assignment("{name}   =   {value}"),
    "markdown_bold": _assignment("**{name}**: {value}"),
    "aws_access_key_id": _aws_pair,
    "github_pat": _vendor("ghp_", ALNUM, 36),
    "github_fine_grained": _vendor("github_pat_11", ALNUM + "_", 60),
    "gitlab_pat": _vendor("glpat-", ALNUM + "-_", 20),
    "slack_bot": _vendor("xoxb-1234567890-", ALNUM, 24),
    "stripe_live": _vendor("sk_live_", ALNUM, 24),
    "openai": _vendor("sk-proj-", ALNUM + "-_", 40),
    "anthropic": _vendor("sk-ant-api03-", ALNUM + "-_", 40),
    "google_api": _vendor("AIza", ALNUM + "-_", 35),
    "npm": _vendor("npm_", ALNUM, 36),
    "huggingface": _vendor("hf_", ALNUM, 34),
    "twilio": _vendor("SK", HEX, 32),
    "jwt": _jwt,
    "pem": _pem,
    "url_userinfo": _userinfo,
    "bearer_header": _bearer,
    "basic_header": _basic,
}
PER_SHAPE = 16


def _credentials() -> list[tuple[str, str]]:
    rng = random.Random(20261201)
    return [(shape, make(rng)) for shape, make in SHAPES.items() for _ in range(PER_SHAPE)]


CREDENTIALS = _credentials()


# -- benign look-alikes -------------------------------------------------------------

WORDS = [
    "policy",
    "review",
    "scope",
    "corpus",
    "memory",
    "surface",
    "recall",
    "fixture",
    "module",
    "patch",
    "planning",
]
CREDENTIAL_WORDS = [
    "password",
    "passphrase",
    "secret",
    "api key",
    "access key",
    "token",
    "credential",
    "private key",
    "client secret",
    "auth token",
    "connection string",
]
PROSE = [
    "the {w} reset flow",
    "rotate the {w} monthly",
    "the {w} reset flow is broken for SSO users",
    "{W}: reset it via the flow",
    "{W}: see the vault",
    "{W}: ask the repository owner",
    "{W}: required",
    "{W}: <redacted>",
    "where is the {w} stored?",
    "never paste a {w} into a summary",
    "the {w} field is required",
    "{w} rotation is due next week",
    "the {w} expired; request a new one",
    "a {w} must not appear in receipts",
    "{W} = ${{VAULT_VALUE}}",
    "{W}=<redacted>",
    "{w}: ***",
]
FIELDS = [
    "read_authority",
    "write_authority",
    "token_budget=500",
    "token_budget: 500",
    "max_tokens: 500",
    "max_tokens=4096",
    "tokens: 128",
    "password_hint: the usual one",
    "secret_name: db-creds",
    "key_id: abc",
    "key: value",
    "sort_key=created_at",
    'key="doc-1"',
    "token: see docs",
    "auth: required",
    "authority: verified_owner",
    "risk_level: high",
    "request_id: 42",
    "session_id: abc",
    "--token is deprecated",
    "--password prompt",
    "password = null",
    "password == ''",
    "Passphrase: 12 words",
    "passcode: 4 digits",
    "pass: 3/10 tests",
    "the password is required",
    "secrets: rotated weekly",
    "passwords: see the vault",
    "the key: rotate often",
    'password=os.getenv("DB_PASSWORD")',
    "api_key = process.env.OPENAI_API_KEY",
    "secret_key=settings.SECRET_KEY",
    "password: os.environ['PGPASSWORD']",
    "password: ********",
    "password: [REDACTED]",
    "token: {{ vault_token }}",
    "password=%DB_PASSWORD%",
    "secret://vault/prod/db",
    "password_file=secrets/db.txt",
    "**Password:** reset it via the flow",
    "password: updated 2024-01-01",
]


def _slug(rng: random.Random) -> str:
    return "-".join(rng.choice(WORDS) for _ in range(rng.randint(1, 3)))


def _benign() -> list[str]:
    rng = random.Random(1201)
    hexes = lambda n: _run(rng, HEX, n)  # noqa: E731 - a local shorthand
    values: list[str] = []
    values += [str(uuid.UUID(int=rng.getrandbits(128), version=4)) for _ in range(50)]
    values += ["sha256:" + hexes(64) for _ in range(40)]
    values += [hexes(16) for _ in range(30)]
    values += [f"candidate:{hexes(20)}" for _ in range(30)]
    values += [f"activation:{hexes(20)}" for _ in range(20)]
    values += [f"provider-{hexes(20)}" for _ in range(20)]
    values += [f"viking://resources/{_slug(rng)}/{_slug(rng)}-{hexes(12)}.json" for _ in range(40)]
    values += [
        ".".join(
            rng.choice(["reward_memory", "issue_fix", "records", "corpus", "text"])
            for _ in range(rng.randint(2, 4))
        )
        for _ in range(30)
    ]
    values += [f"github:example/{_slug(rng)}#{rng.randint(1, 9999)}" for _ in range(20)]
    values += [f"review:{_slug(rng)}:{hexes(8)}" for _ in range(20)]
    values += [
        f"2026-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}T{rng.randint(0, 23):02d}:00:00Z"
        for _ in range(15)
    ]
    values += [f"v{rng.randint(0, 9)}.{rng.randint(0, 30)}.{rng.randint(0, 99)}" for _ in range(10)]
    for template in PROSE:
        for word in CREDENTIAL_WORDS:
            values.append(template.format(w=word, W=word.capitalize()))
    values += FIELDS
    return values


BENIGN = _benign()


def test_the_corpus_is_large_and_varied() -> None:
    assert len(SHAPES) >= 30
    assert len(CREDENTIALS) >= 500
    assert len(BENIGN) >= 500
    # Values lead with a symbol often enough to matter (issue item 8).
    leads = {value.split("=", 1)[-1][:1] for shape, value in CREDENTIALS if shape == "eq"}
    assert leads & set(SYMBOLS)


def test_every_credential_is_found() -> None:
    """100 % detection, through the prefilter (the path every record takes)."""
    missed = [(shape, value) for shape, value in CREDENTIALS if find_unsafe(value) != "credential"]
    assert missed == []


def test_credentials_are_found_inside_prose_and_rejected_as_text() -> None:
    for shape, value in CREDENTIALS:
        wrapped = f"Summary of the run: {value} was pasted by mistake."
        assert _TRIGGER.search(wrapped) is not None, shape
        with pytest.raises(UnsafeTextError) as caught:
            compact_text(wrapped, limit=500, path="$.content_summary")
        assert caught.value.code == "unsafe_text"
        assert value not in str(caught.value)


def test_benign_look_alikes_pass() -> None:
    """At most 1 % false positives (the corpus is built so that the aim, 0, holds)."""
    flagged = [value for value in BENIGN if find_unsafe(value) is not None]
    assert len(flagged) <= len(BENIGN) // 100
    assert flagged == []


_GENERATED = st.text(alphabet=ALNUM + "+/=-_", min_size=5, max_size=40).map(lambda v: v + "7")


@given(
    st.sampled_from(NAMES),
    st.sampled_from(["", '"', "'", '\\"']),
    st.sampled_from(["=", " = ", ": ", ":", " := ", " => ", "=="]),
    st.sampled_from(["", '"', "'", "`"]),
    st.sampled_from(["", *SYMBOLS]),
    _GENERATED,
    st.sampled_from(["", " ", ";", ",", '"', " and more text", "&x=1"]),
)
def test_any_generated_value_of_a_credential_name_is_found(
    name: str, name_quote: str, separator: str, quote: str, lead: str, body: str, after: str
) -> None:
    """Issue item 8: whatever character the value starts with (the case that let real
    AWS secret keys through), a credential-like name with a generated value is found."""
    value = f"{name_quote}{name}{name_quote}{separator}{quote}{lead}{body}{quote}{after}"
    assume("://" not in value)  # `secret://vault/db` is a URL (a reference), not a value
    assert find_unsafe(value) == "credential", value
    assert find_unsafe(f"Context: {value}") == "credential", value
