"""Compact public-safe text and the credential / local-path scan.

Every credential below is FAKE: built from vendor prefixes plus filler, or the
vendors' own documentation examples. Several are assembled by concatenation so
that the source file itself does not look like it leaks anything.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from reward_memory.errors import RecordValidationError, UnsafeTextError
from reward_memory.grammars import check_corpus_id, check_surface_id, check_token
from reward_memory.text import (
    _CREDENTIAL_SHAPES,
    _LOCAL_PATH_SHAPES,
    _TRIGGER,
    _UNSAFE_CHARACTER,
    _full_scan,
    compact_text,
    find_unsafe,
    has_unsafe_character,
    prefilter_stops,
    require_safe,
)

if TYPE_CHECKING:
    import random

HEX32 = "0123456789abcdef" * 2
HEX64 = HEX32 * 2
ALNUM36 = "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"
B64 = "wJalrXUtnFEMI0K7MDENG1bPxRfiCYEXAMPLEKEY"

CREDENTIALS: list[tuple[str, str]] = [
    # Cloud providers.
    ("aws_access_key_id", "AKIA" + "IOSFODNN7EXAMPLE"),
    ("aws_temporary_key_id", "ASIA" + "Y34FZKBOKMUTVV7A"),
    ("aws_key_in_prose", "rotate AKIA" + "IOSFODNN7EXAMPLE today"),
    ("aws_secret_assignment", "aws_secret_access_key = " + B64),
    ("google_api_key", "AIza" + "SyD-9tSrke72PouQMnMX-a7eZSW0jkFMBWY"),
    ("google_oauth_client_secret", "GOCSPX-" + "1a2B3c4D5e6F7g8H9i0J1k2L3m4N"),
    ("google_oauth_access_token", "ya29." + "a0AfH6SMBx1234567890abcdefghij"),
    ("azure_storage_account_key", "AccountName=example;AccountKey=" + B64 + "==;"),
    ("azure_sas", "SharedAccessSignature=sv=2020-08-04&sig=abc"),
    ("digitalocean", "dop_v1_" + HEX64),
    ("databricks", "dapi" + HEX32),
    # Source hosts and registries.
    ("github_classic_pat", "ghp_" + ALNUM36),
    ("github_oauth", "gho_" + ALNUM36),
    ("github_server_to_server", "ghs_" + ALNUM36),
    ("github_fine_grained_pat", "github_pat_11ABCDEFG0123456789_" + "abcdefghij" * 5),
    ("gitlab_pat", "glpat-" + "xY9zW8vU7tS6rQ5pO4nM"),
    ("npm", "npm_" + ALNUM36),
    ("pypi", "pypi-AgEIcHlwaS5vcmc" + "CJDk4ZjE2ZmQ3LTk5OGItNGFiMi1hYjkxLWQ1ZDQ2ZTE0YTA5NwAC"),
    ("huggingface", "hf_" + "aBcDeFgHiJkLmNoPqRsTuVwXyZ01234567"),
    ("docker_pat", "dckr_pat_" + "Ab1Cd2Ef3Gh4Ij5Kl6Mn7Op8"),
    ("rubygems", "rubygems_" + HEX32 + HEX32[:16]),
    # Chat, payments, mail, SaaS.
    ("slack_bot", "xoxb-" + "1234567890-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx"),
    ("slack_user", "xoxp-" + "1234567890-1234567890123-1234567890123-abcdef0123456789"),
    ("slack_app", "xapp-1-" + "A0123456789-0123456789012-abcdef"),
    ("slack_webhook", "https://hooks.slack.com/services/T0000/B0000/XXXXXXXXXXXXXXXX"),
    ("stripe_live", "sk_live_" + "4eC39HqLyjWDarjtT1zdp7dc"),
    ("stripe_restricted", "rk_test_" + "4eC39HqLyjWDarjtT1zdp7dc"),
    ("openai", "sk-" + "abcdefghijklmnopqrstuvwxyz0123456789ABCD"),
    ("openai_project", "sk-proj-" + "Ab12Cd34Ef56Gh78Ij90Kl12Mn34"),
    ("anthropic", "sk-ant-api03-" + "Ab12Cd34Ef56Gh78Ij90Kl12Mn34-xyz"),
    ("sendgrid", "SG." + "ngeVfQFYQlKU0ufo8x5d1A." + "TwL2iGABf9DHoTf-09kqeF8tAmbihYzrnopKc-1s5"),
    ("twilio", "SK" + HEX32),
    ("mailgun", "key-" + HEX32),
    ("shopify", "shpat_" + HEX32),
    ("square", "sq0atp-" + "Ab1Cd2Ef3Gh4Ij5Kl6Mn7Op"),
    ("discord_bot", "MTk4NjIyNDgzNDcxOTI1MjQ4" + ".Cl2FMQ." + "ZnCjm1XVW7vRze4b7Cq4se7kKWs"),
    ("telegram_bot", "123456789:AA" + "Fa1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6"),
    ("atlassian", "ATATT3" + "xFfGF0Ab1Cd2Ef3Gh4Ij5Kl6Mn7"),
    ("grafana", "glsa_" + "Ab1Cd2Ef3Gh4Ij5Kl6Mn7Op8Qr9St0Uv" + "_0a1b2c3d"),
    ("vault", "hvs." + "CAESIAb1Cd2Ef3Gh4Ij5Kl6Mn7Op8"),
    ("linear", "lin_api_" + "Ab1Cd2Ef3Gh4Ij5Kl6Mn7Op8Qr9St0Uv1Wx2Yz34"),
    ("notion", "secret_" + "Ab1Cd2Ef3Gh4Ij5Kl6Mn7Op8Qr9St0Uv1Wx2Yz3"),
    ("postman", "PMAK-" + HEX32[:24] + "-" + HEX32 + "ab"),
    ("terraform", "Ab1Cd2Ef3Gh4Ij" + ".atlasv1." + "Xy" * 35),
    ("sentry", "sntrys_" + "eyJpYXQiOjE2ODAwMDAwMDAuMCwidXJsIjoiaHR0cHM6Ly9"),
    ("age", "AGE-SECRET-KEY-1" + "QQPJ7QV2QY7W8X9ZPQWERTYUIOPASDFGHJKLZXCVBNMQWERTYUIOPA"),
    # Generic shapes.
    ("jwt", "eyJhbGciOiJIUzI1NiJ9" + ".eyJzdWIiOiIxMjM0NTY3ODkwIn0" + ".dozjgNryP4J3jVmNHl0w5N"),
    ("pem_rsa", "-----BEGIN RSA PRIVATE KEY-----"),
    ("pem_openssh", "-----BEGIN OPENSSH PRIVATE KEY-----"),
    ("pem_pkcs8", "-----BEGIN PRIVATE KEY-----"),
    ("pem_encrypted", "-----BEGIN ENCRYPTED PRIVATE KEY-----"),
    ("pem_pgp", "-----BEGIN PGP PRIVATE KEY BLOCK-----"),
    ("authorization_bearer", "Authorization: Bearer " + "abcdef0123456789abcdef"),
    ("bearer_in_prose", "send bearer " + "9f8e7d6c5b4a39281706f5e4 with it"),
    ("authorization_basic", "Authorization: Basic dXNlcjpwYXNzd29yZA=="),
    ("basic_credentials", "basic dXNlcjpwYXNz"),
    ("authorization_token", "authorization=token " + "abc123def456"),
    # After the scheme in an authorization header, the token is a credential even
    # without a digit.
    ("authorization_bearer_letters", "Authorization: Bearer " + "abcdefghijklmnop"),
    ("auth_setting_bearer", "auth=Bearer " + "abcdefghij"),
    ("proxy_authorization_basic", "Proxy-Authorization: Basic " + "abcdefghijk"),
    ("x_api_key_header", "x-api-key: " + "0123456789abcdef"),
    ("password_equals", "password=hunter22"),
    ("password_colon", "password: correct-horse-battery"),
    ("password_upper_spaced", "PASSWORD   =   s3cr3tvalue"),
    ("passwd", "passwd:letmein99"),
    ("pwd", "pwd = Tr0ub4dor"),
    ("passphrase", "passphrase: 'open sesame'"),
    ("api_key_colon", "api_key: abcd1234efgh"),
    ("apikey_equals", "apikey=abcdef123456"),
    ("client_secret", "client_secret=Zx9yW8vU7tS6"),
    ("secret_colon", "secret: hunter2x"),
    ("credentials_colon", "credentials: admin:hunter2"),
    ("private_key_id", "private_key_id: " + HEX32),
    ("token_equals", "token=ab12cd34ef56gh78"),
    ("access_token_colon", "access_token: ya1234567890abcdef"),
    ("sk_assignment", "sk: abcdef123"),
    ("ak_prefixed", "ak-" + "0123456789abcdef"),
    ("session_cookie", "sessionid=" + "abcdef0123456789abcd"),
    # Assignments whose value starts with a symbol (AWS secret keys start with + or /).
    ("aws_secret_plus", "aws_secret_access_key=+" + B64[1:]),
    ("aws_secret_slash_json", '{"AWS_SECRET_ACCESS_KEY": "/' + B64[1:] + '"}'),
    ("token_plus", "token=+aB3/xYz9QwErTy"),
    ("api_key_camel_underscore", "apiKey: _Zx9yW8vU7tS6"),
    ("auth_token_bang", "AUTH_TOKEN=!abc123def"),
    ("db_password_walrus", "db_password := -pa55w0rd"),
    ("php_arrow", "'client_secret' => '#Zx9yW8vU7'"),
    ("connection_string", "connection_string=Server=db;User=sa;Password=x1"),
    ("conn_str_quoted", "conn_str: 'Server=db;Uid=sa'"),
    ("escaped_json", '{\\"password\\":\\"hunter2\\"}'),
    ("private_key_spaced", "private key: ~Qx7abc"),
    ("plain_word_password", "password=hunter"),
    ("xml_element", "<password>hunter2</password>"),
    ("cli_option", "--password hunter2"),
    ("markdown_name", "**Password**: hunter2"),
    # URLs carrying credentials.
    ("url_userinfo", "https://user:p4ssw0rd@example.com/repo.git"),
    ("db_url_userinfo", "postgres://admin:hunter2@db.internal:5432/app"),
    ("query_api_key", "https://api.example.com/v1/items?api_key=abcdef0123456789"),
    ("query_token", "see https://example.com/cb?token=abcdef0123456789&x=1"),
    ("query_signature", "https://bucket.example.com/o?X=1&sig=0123456789abcdefABCDEF%3D"),
    ("url_password_no_user", "redis://:s3cr3tPassw0rd@cache.internal:6379/0"),
    (
        "aws_presigned",
        "https://b.s3.amazonaws.com/o?X-Amz-Algorithm=AWS4&X-Amz-Signature=" + "ab12" * 16,
    ),
    ("discord_webhook", "https://discord.com/api/webhooks/123456789/" + "aB3_" * 8),
    ("curl_user", "curl -u admin:hunter2pass https://api.example.com"),
    ("curl_user_long", "curl --user deploy:Tr0ub4dor3 https://api.example.com"),
    ("curl_user_quoted", "curl -u 'bob:s3cretpass' https://api.example.com"),
    ("curl_user_equals", "curl --user=bob:s3cretpass https://api.example.com"),
    ("sshpass", "sshpass -p hunter2 ssh host"),
    ("mailchimp", "0123456789abcdef0123456789abcdef-us12"),
]

LOCAL_PATHS: list[tuple[str, str]] = [
    ("home", "/home/alice/project"),
    ("users_macos", "/Users/bob/Desktop/notes.txt"),
    ("tmp", "/tmp/build-123/output.log"),
    ("etc_passwd", "/etc/passwd"),
    ("var_log", "/var/log/syslog"),
    ("opt", "/opt/app/config.yaml"),
    ("root", "/root/.bashrc"),
    ("mnt", "/mnt/data/x"),
    ("volumes", "/Volumes/External/x"),
    ("private_var", "/private/var/folders/x"),
    ("workspace", "/workspace/repo/src"),
    ("usr_local", "/usr/local/bin/tool"),
    ("proc", "/proc/self/environ"),
    ("dev_shm", "/dev/shm/x"),
    ("bare_root_end", "files land in /tmp"),
    ("bare_root_paren", "(see /etc)"),
    ("quoted", 'open("/home/u/x")'),
    ("after_equals", "--config=/etc/app.yaml"),
    ("windows_users", "C:\\Users\\alice\\secrets.txt"),
    ("windows_program_files", "C:\\Program Files\\App\\app.exe"),
    ("windows_forward", "D:/projects/x"),
    ("unc_share", "\\\\server\\share\\folder"),
    ("file_uri", "file:///etc/hosts"),
    ("file_uri_short", "file:/home/x"),
    ("tilde", "~/.aws/credentials"),
    ("tilde_file", "~/notes.txt"),
    ("tilde_user", "~alice/projects"),
    ("parent", "../secrets/x"),
    ("parent_windows", "..\\windows\\x"),
    ("home_var", "$HOME/.config/x"),
    ("home_var_braced", "${HOME}/x"),
    ("userprofile", "%USERPROFILE%\\Documents"),
    ("appdata", "%APPDATA%\\x"),
    ("ssh_dir", ".ssh/id_rsa"),
    ("aws_dir", ".aws/credentials"),
    ("kube_dir", ".kube/config"),
    ("token_with_path", "x:/home/u/y"),
    # After a dot that follows a word (or an ellipsis) a root is absolute: only a
    # word-initial ``./`` is relative.
    ("token_dot_path", "loopx./home/alice/.ssh/id_rsa"),
    ("token_dot_root", "outcome./etc/shadow"),
    ("ellipsis_path", "see .../tmp/x"),
    ("empty_authority", "sqlite:///home/alice/memory.db"),
    ("empty_authority_any_root", "authority-map:///srv/maps/authority.json"),
]

BENIGN: list[str] = [
    "docker run -u 1000:1000 image",
    "docker exec -u root:root container ls",
    "ps -u app:www",
    "viking://resources/tmp/x",
    "viking://user/home/x",
    "viking://resources/reward-memory/openviking-issue-fix/"
    "reward-memory-10d922c433db-3a1d61cfc56c978eeab5.json",
    "memory://resources/reward-memory/fixture-project",
    "a/tmp/b",
    "./tmp/build",
    "run ./home/setup.sh",
    "reward_memory.text",
    "issue_fix.patch_planning",
    "os.path",
    "github:example/repository#42",
    "github:example/repository#42:comment:1",
    "github:user:maintainer",
    "https://github.com/volcengine/OpenViking/pull/3237",
    "https://example.com/users/42",
    "http://localhost:8080/tmp/x",
    "sha256:" + HEX64,
    "candidate:0e073f348a2a6c3ffc3c",
    "activation:9bfb70de98931c3f6bae",
    "provider-6873c7a42595f37efe3d",
    "rma_" + HEX64,
    "muo_" + HEX64,
    "project-" + HEX32[:16],
    "revision:abc123",
    "issue_fix:scope_selection",
    "review:fixture:accept-before-retire",
    "reward_memory_candidate_v0",
    "2026-11-01T12:00:00+00:00",
    "$.scope.surface_ids[0]",
    "token budget",
    "tokenizer",
    "the access key rotation policy",
    "the api key is rotated monthly",
    "bearer authentication_required",
    "bearer token expired",
    "basic authentication is required",
    "Authorization header missing",
    "the auth: bearer tokens flow",
    "Bearer authentication required",
    "password reset flow",
    "set the password in the UI",
    "secret sharing policy",
    "the key: rotate often",
    "token: see docs",
    "passphrase prompts are disabled",
    "Option C: retry",
    "Note: the summary is compact; Reason: scope mismatch",
    "Decision: accept. Step 2: rerun the tests.",
    "12:30",
    "10:00-12:00",
    "ratio 3:1",
    "drive C: is full",
    "v1.2.3",
    "user@example.com",
    "src/reward_memory/text.py",
    "tests/test_text.py",
    "and/or",
    "input/output",
    "TCP/IP",
    "~5/10 tests pass",
    "50% of runs",
    "e.g. a retry; i.e. once",
    "x86_64",
    "UTF-8",
    "C++",
    "sk-learn",
    "ask-me-anything",
    "desk_top",
    "risk_level: high",
    "request_id: 42",
    "session_id: abc",
    "ghp_ prefix",
    "eyJ alone",
    "AKIA alone",
    "SSH keys live in the agent",
    "the .ssh directory",
    "-----BEGIN CERTIFICATE-----",
    "<redacted>",
    "password=<redacted>",
    "api_key: ${API_KEY}",
    "secret: ***",
    "password: reset it via the flow",
    "password: required",
    "password: $DB_PASSWORD",
    "token_budget=500",
    "max_tokens: 500",
    "sort_key=created_at",
    'key="doc-1"',
    "password_hint: the usual one",
    "read_authority: verified",
    "auth: required",
    "client_secret: see vault",
    "--token is deprecated",
    "<password>${PASSWORD}</password>",
    "**Password:** reset it via the flow",
    "password: updated 2024-01-01",
    'password=os.getenv("DB_PASSWORD")',
    "Keep focused fixes within the affected module unless broader evidence is present.",
]

POSITIVES = [value for _, value in CREDENTIALS + LOCAL_PATHS]


def test_there_are_enough_examples() -> None:
    assert len(CREDENTIALS) + len(LOCAL_PATHS) >= 50
    assert len(set(POSITIVES)) == len(POSITIVES)


@pytest.mark.parametrize(("value"), [v for _, v in CREDENTIALS], ids=[k for k, _ in CREDENTIALS])
def test_credential_shapes_are_found(value: str) -> None:
    assert find_unsafe(value) == "credential"


@pytest.mark.parametrize(("value"), [v for _, v in LOCAL_PATHS], ids=[k for k, _ in LOCAL_PATHS])
def test_local_path_shapes_are_found(value: str) -> None:
    assert find_unsafe(value) == "local_path"


@pytest.mark.parametrize("value", BENIGN)
def test_benign_look_alikes_pass(value: str) -> None:
    assert find_unsafe(value) is None
    assert _full_scan(value) is None  # not merely skipped by the prefilter


@pytest.mark.parametrize("shape", _CREDENTIAL_SHAPES + _LOCAL_PATH_SHAPES)
def test_every_shape_has_a_positive_example(shape: str) -> None:
    single = re.compile(shape, re.IGNORECASE)
    assert any(single.search(value) for value in POSITIVES)


@pytest.mark.parametrize("value", POSITIVES)
def test_prefilter_never_skips_a_shape(value: str) -> None:
    assert _TRIGGER.search(value) is not None
    # ... and still fires when the shape sits inside prose, or is upper-cased.
    assert _TRIGGER.search(f"Summary: see {value} for details.") is not None
    if _full_scan(value.upper()):
        assert _TRIGGER.search(value.upper()) is not None
    if _full_scan(value.lower()):
        assert _TRIGGER.search(value.lower()) is not None


def _words(text: str) -> list[str]:
    return text.split()


# A generator of near-miss and hit shapes: names, separators, vendor prefixes,
# path roots and bodies in random combinations, cases and surroundings. Many
# draws are unsafe, many are near misses; the property is only that the
# prefilter lets every unsafe one through.
_NAMES = st.sampled_from(
    _words(
        """key token secret password passwd pwd passphrase credential credentials apikey api_key
    access_key secret_key client_secret auth_token session_token private_key_id
    aws_secret_access_key access_token refresh_token id_token ak sk authorization x-api-key
    x-auth-token accountkey sharedaccesssignature sessionid connect.sid master_keyid
    encryptionsecret note id bank phase db_password PGPASSWORD passcode passwords secrets
    connection_string conn_str connstr apiKey clientSecret auth pass dsn sort_key monkey
    token_budget password_hint bypass authority"""
    )
)
_PREFIXES = st.sampled_from(
    [
        *_words(
            """ghp_ ghr_ github_pat_ xoxb- xapp-1- sk_live_ pk_test_ sk- sk-proj- sk-ant- npm_
        pypi-ag glpat- gldt- gloas- sg. hf_ dop_v1_ shpat_ dapi SK key- sq0atp- age-secret-key-1
        glsa_ hvs. lin_api_ secret_ pmak- dckr_pat_ rubygems_ sntrys_ eyj AKIA ABIA AIza GOCSPX-
        ya29. ATATT3 ak- ak_ sk= ak: hooks.slack.com/services/ 123456789:aa"""
        ),
        "M" + "a" * 23 + ".",
        "bearer ",
        "basic ",
        "authorization: basic ",
        "Authorization: token ",
    ]
)
_PATH_HEADS = st.sampled_from(
    _words(
        r"""/ x:/ =/ "/ C:\ d:/ \\ file: file:// file:/// ~/ ~ ../ ..\ $HOME/ ${home}/ %userprofile%
    %TEMP% .ssh/ .aws/ .config/gcloud/ a/"""
    )
)
_ROOTS = st.sampled_from(["home", "Users", "tmp", "etc", "var", "workspaces", "proc", "x", ""])
_BODY = st.text(alphabet="abcdefABCDEF0123456789_-.=+/", max_size=70)
_HEX = st.text(alphabet="0123456789abcdef", max_size=70)
_SPACE = st.sampled_from(["", "", " ", "  ", "\t", "\n "])
_QUOTES = st.sampled_from(["", "", "'", '"', '\\"', "`"])
_SEPARATORS = st.sampled_from([":", "=", ":=", "=>", "=="])
_LEADS = st.sampled_from(["", "", "+", "/", "-", "_", "!", "$", "<", "(", ";", "&", "*", "\\"])
_SHAPES = st.one_of(
    st.tuples(_NAMES, _SPACE, st.sampled_from(":="), _SPACE, st.sampled_from(["", "'"]), _BODY),
    st.tuples(_QUOTES, _NAMES, _QUOTES, _SPACE, _SEPARATORS, _SPACE, _QUOTES, _LEADS, _BODY),
    st.tuples(st.just("<"), _NAMES, st.just(">"), _SPACE, _LEADS, _BODY),
    st.tuples(st.just("--"), _NAMES, _SPACE, _LEADS, _BODY),
    st.tuples(_PREFIXES, st.one_of(_BODY, _HEX)),
    st.tuples(_PATH_HEADS, _ROOTS, st.sampled_from(["/", "", " ", "\\"]), _BODY),
).map("".join)
_EDGES = st.sampled_from(["", " ", "see ", "(", "_", "-", ".", "/", ":", "\u00e9", "1", "&a=1"])


@given(_EDGES, _SHAPES, _EDGES, st.randoms(use_true_random=False))
def test_prefilter_is_sound_on_generated_shapes(
    before: str, shape: str, after: str, rnd: random.Random
) -> None:
    """Whatever the full scan finds, the prefilter must have let through."""
    for value in (shape, before + shape + after, _flip_case(shape, rnd)):
        if _full_scan(value) is not None:
            assert _TRIGGER.search(value) is not None


def _flip_case(value: str, rnd: random.Random) -> str:
    return "".join(c.swapcase() if rnd.random() < 0.3 else c for c in value)


@given(
    st.sampled_from(POSITIVES),
    st.text(alphabet=st.sampled_from("ab .,:;()\n"), max_size=12),
    st.text(alphabet=st.sampled_from("ab .,:;()\n"), max_size=12),
    st.randoms(use_true_random=False),
)
def test_prefilter_is_sound_on_mutated_positives(
    value: str, before: str, after: str, rnd: random.Random
) -> None:
    flipped = _flip_case(value, rnd)
    cut = flipped[: rnd.randint(1, len(flipped))]
    for candidate in (before + flipped + after, before + cut + after):
        if _full_scan(candidate) is not None:
            assert _TRIGGER.search(candidate) is not None


@pytest.mark.parametrize("value", POSITIVES)
def test_messages_never_echo_the_value(value: str) -> None:
    with pytest.raises(UnsafeTextError) as caught:
        require_safe(value, path="$.content_summary", label="content_summary")
    message = str(caught.value)
    assert value not in message
    assert caught.value.path == "$.content_summary"
    assert caught.value.code == "unsafe_text"
    assert message.startswith("content_summary must be public-safe: it contains a ")
    with pytest.raises(UnsafeTextError) as caught_text:
        compact_text(f"context {value} context", limit=500, label="summary")
    assert value not in str(caught_text.value)


@pytest.mark.parametrize(
    "value",
    [
        "AKIA" + "IOSFODNN7EXAMPLE",
        "ghp_" + ALNUM36,
        "x:/home/u/y",
        "repo:" + "glpat-" + "xY9zW8vU7tS6rQ5pO4nM",
        "sk-" + "abcdefghijklmnopqrstuvwxyz0123456789ABCD",
    ],
)
def test_identifiers_are_scanned_too(value: str) -> None:
    with pytest.raises(UnsafeTextError) as caught:
        check_token(value, "$.source.actor_ref")
    assert value not in str(caught.value)
    assert caught.value.path == "$.source.actor_ref"


def test_surface_and_corpus_ids_are_scanned() -> None:
    with pytest.raises(UnsafeTextError):
        check_corpus_id("sk-" + "abcdefghij0123456789abcdef")
    assert check_surface_id("issue_fix.patch_planning") == "issue_fix.patch_planning"


# compact_text ---------------------------------------------------------------


def test_compact_text_collapses_whitespace() -> None:
    value = "  Keep\tfocused\n\nfixes   small. "
    assert compact_text(value, limit=100) == "Keep focused fixes small."


def test_compact_text_rejects_over_long_text_without_truncating() -> None:
    text = "word " * 40  # 199 characters once stripped
    assert compact_text(text, limit=199) == text.strip()
    with pytest.raises(UnsafeTextError) as caught:
        compact_text(text, limit=198, path="$.reasoning.summary", label="summary")
    assert caught.value.code == "text_too_long"
    assert caught.value.path == "$.reasoning.summary"
    assert "rejected, not truncated" in str(caught.value)
    assert "word" not in str(caught.value)


def test_compact_text_limit_applies_after_collapsing() -> None:
    # 10 visible characters spread over 30: the original measures after collapsing.
    assert compact_text("a  b  c  d  e" + " " * 17, limit=9) == "a b c d e"


def test_two_long_texts_never_collapse_into_one() -> None:
    first, second = "x" * 600 + "1", "x" * 600 + "2"
    for value in (first, second):
        with pytest.raises(UnsafeTextError):
            compact_text(value, limit=500)


@pytest.mark.parametrize("value", ["", "   ", "\n\t "])
def test_compact_text_rejects_empty(value: str) -> None:
    with pytest.raises(UnsafeTextError) as caught:
        compact_text(value, limit=10)
    assert caught.value.code == "empty_text"


@pytest.mark.parametrize("value", [None, 12, b"bytes", ["a"], True])
def test_compact_text_rejects_non_strings(value: object) -> None:
    with pytest.raises(UnsafeTextError) as caught:
        compact_text(value, limit=10)
    assert caught.value.code == "wrong_type"
    assert isinstance(caught.value, RecordValidationError)
    assert isinstance(caught.value, ValueError)


def test_compact_text_scans_the_normalised_text() -> None:
    with pytest.raises(UnsafeTextError):
        compact_text("password\n=\nhunter22", limit=100)


_TEXT = st.text(
    alphabet=st.characters(codec="utf-8", exclude_categories=("Cs",)),
    max_size=120,
)


@given(_TEXT, st.integers(min_value=1, max_value=130))
@example("a \u2028b\u00a0 c", 5)
def test_compact_text_never_truncates_and_is_idempotent(value: str, limit: int) -> None:
    collapsed = " ".join(value.split())
    if _UNSAFE_CHARACTER.search(value):
        expected = "unsafe_character"
    elif not collapsed:
        expected = "empty_text"
    elif len(collapsed) > limit:
        expected = "text_too_long"
    elif find_unsafe(collapsed) is not None:
        expected = "unsafe_text"
    else:
        out = compact_text(value, limit=limit)
        assert len(out) <= limit
        # Every non-whitespace character of the input survives, in order.
        assert re.sub(r"\s", "", out) == re.sub(r"\s", "", value)
        assert out == out.strip()
        assert "  " not in out
        assert compact_text(out, limit=limit) == out
        return
    with pytest.raises(UnsafeTextError) as caught:
        compact_text(value, limit=limit)
    assert caught.value.code == expected


@given(st.text(min_size=1, max_size=50), st.integers(min_value=1, max_value=40))
def test_compact_text_rejects_exactly_when_over_limit(value: str, limit: int) -> None:
    collapsed = " ".join(value.split())
    if not collapsed or find_unsafe(value) is not None or find_unsafe(collapsed) is not None:
        return
    if len(collapsed) > limit:
        with pytest.raises(UnsafeTextError):
            compact_text(value, limit=limit)
    else:
        assert compact_text(value, limit=limit) == collapsed


# -- The fast prefilter and character check give the reference verdicts ----------------------
#
# ``prefilter_stops`` asks an ASCII string anchor by anchor, on its lowered text, and
# ``has_unsafe_character`` translates ASCII bytes; both must give exactly what the one
# compiled alternation and ``_UNSAFE_CHARACTER`` give, on every string (letters that
# fold to ASCII under IGNORECASE -- long s, Kelvin sign, dotted I -- take the
# reference path, being non-ASCII).
_ANCHOR_TEXT = st.lists(
    st.sampled_from(
        [
            *"=/\\~$%:>.-_bBjJpPAS aA0xkKeEyYnNdDtTsSrRwWoOiI\t\n\"'`*@#",
            "\u017f",
            "\u212a",
            "\u0130",
            "\u0131",
            "\u00e9",
            "eyJ",
            "dapi",
            "bearer ",
            "Basic ",
            "key",
            "token",
            "password",
            "rization",
            "file:/",
            "c:/",
            "home",
            "ghp_",
            "sk-",
            "AKIA",
            "SK",
            "ssh/",
            "slack.com/",
            "sg.",
        ]
    ),
    max_size=16,
).map("".join)


@given(st.one_of(_ANCHOR_TEXT, _SHAPES, st.sampled_from(POSITIVES + BENIGN)))
@example("authorization: x")
@example("ey\u0130j0123456789")
def test_fast_prefilter_gives_the_alternations_verdict(value: str) -> None:
    # A long string is asked anchor by anchor, a short one by the alternation: both
    # are held to it, the value as it is and inside long neutral text around it.
    pad = "x" * 200
    for shape in (value, value.upper(), value.lower(), f"see {value}\nnext"):
        for candidate in (shape, f"{pad} {shape} {pad}", f"{shape}\n{pad}", pad + shape):
            assert prefilter_stops(candidate) is (_TRIGGER.search(candidate) is not None)


@given(st.text(max_size=40))
@example("\x00\t\n\r\x7f\x9f\ud800")
def test_fast_character_check_gives_the_patterns_verdict(value: str) -> None:
    assert has_unsafe_character(value) is (_UNSAFE_CHARACTER.search(value) is not None)
    value = value + "x" * 40  # long enough for the byte translation
    for code in (*range(0xA1), 0xD7FF, 0xD800, 0xDFFF, 0xE000):
        char = chr(code)
        assert has_unsafe_character(value + char) is (
            _UNSAFE_CHARACTER.search(value + char) is not None
        )


@pytest.mark.parametrize("ref", ["memory:aa0f3c", "record:aab1c2d3e4f5a6b7c8d9", "x:AA12"])
def test_a_hex_ref_starting_aa_does_not_stop_the_prefilter(ref: str) -> None:
    """A Telegram bot token has eight digits or more before `:AA`: a bare `:aa` (one hex ref
    in 256) used to send the text to the full scan, compiling it in a one-shot CLI verb."""
    assert not prefilter_stops(ref)
    assert not prefilter_stops("x" * 200 + " " + ref)
    assert prefilter_stops("12345678:" + ref.partition(":")[2] + "a" * 33)


@pytest.mark.parametrize(
    "value",
    [
        "sk-abcdefghijklmnop",
        "sk_live_abcdefghij",
        "ak-abcdefghijkl",
        "token: abcdefghijklmn",
        "token=abcdefghijklmnop",
        "ak = foo",
        "sk = 123",
    ],
)
def test_the_original_ct_credential_rules_are_refused(value: str) -> None:
    """Reference 1.2: `ak`/`sk` assigned any value or glued to 10+ key characters, and
    `token` assigned 12+ characters, are credentials with or without a digit."""
    assert find_unsafe(value) == "credential"
    assert find_unsafe(f"The note says {value} today.") == "credential"


@pytest.mark.parametrize("value", ["Token = ${VAULT_VALUE}", "token: see docs", "sk-learn"])
def test_placeholders_and_prose_near_those_rules_stay_public_safe(value: str) -> None:
    assert find_unsafe(value) is None


# Invisible characters inside a shape: the scan reads what a reader sees.
_KEY = "ghp_" + ALNUM36


@pytest.mark.parametrize(
    ("value", "kind"),
    [
        ("ghp_\u200b" + ALNUM36, "credential"),  # zero-width space
        ("gh\u00adp_" + ALNUM36, "credential"),  # soft hyphen
        ("ghp_" + ALNUM36[:10] + "\u2060" + ALNUM36[10:], "credential"),  # word joiner
        ("ghp_" + ALNUM36[:10] + "\ufe0f" + ALNUM36[10:], "credential"),  # variation selector
        ("g\u0301hp_" + ALNUM36, "credential"),  # a combining accent
        ("ghp_" + ALNUM36[:6] + "\u05b0" + ALNUM36[6:], "credential"),  # a Hebrew point
        ("ghp_" + ALNUM36[:6] + "\U00016fe4" + ALNUM36[6:], "credential"),  # Khitan filler
        ("ghp_" + ALNUM36[:6] + "\u2065" + ALNUM36[6:], "credential"),  # default-ignorable
        ("ghp_" + ALNUM36[:6] + "\ufff0" + ALNUM36[6:], "credential"),
        ("ghp_" + ALNUM36[:6] + "\U000e0002" + ALNUM36[6:], "credential"),  # a tag range
        ("ghp_" + ALNUM36[:6] + "\u2800" + ALNUM36[6:], "credential"),  # braille blank
        ("\u202eghp_" + ALNUM36, "credential"),  # a bidi override
        ("token \u202e" + _KEY[::-1] + "\u202c", "credential"),  # reversed after an override
        ("see \u202e" + "/home/alice/.ssh/id_rsa"[::-1] + "\u202c", "local_path"),
        ("AKIA\u200dIOSFODNN7EXAMPLE", "credential"),
        ("/ho\u200bme/alice/.ssh/id_rsa", "local_path"),
    ],
)
def test_invisible_characters_do_not_hide_a_shape(value: str, kind: str) -> None:
    assert find_unsafe(value) == kind
    with pytest.raises(UnsafeTextError):
        compact_text(value, limit=500)


@pytest.mark.parametrize(
    "value",
    [
        "日本語のテキストは安全です",
        "café au lait, naïve façade",
        "a family emoji 👨\u200d👩\u200d👧 and a flag 🏳\ufe0f\u200d🌈",
        "한국어 문장입니다",
        "मानक हिन्दी",
        "\u0645\u0631\u062d\u0628\u064b\u0627 \u200f",  # Arabic with a harakat and an RLM
        "\u0645\u06cc\u200c\u062e\u0648\u0627\u0647\u0645",  # Persian with a ZWNJ
        # CJK prose after a credential word and a fullwidth colon (no compatibility folding)
        "Password\uff1a\u5df2\u91cd\u7f6e",
        "API key\uff1a\u8bf7\u5728\u8bbe\u7f6e\u4e2d\u67e5\u770b",
        "\u914d\u7f6e\u8bf4\u660e\uff1a\u8d85\u65f6\uff1d30\u79d2",
    ],
)
def test_ordinary_non_ascii_text_stays_public_safe(value: str) -> None:
    assert find_unsafe(value) is None
    assert compact_text(value, limit=500) == value


def test_every_format_mark_and_unassigned_character_is_hidden_from_the_scan() -> None:
    import unicodedata

    from reward_memory.text import shown

    kept = [
        hex(code)
        for code in range(0x80, 0x110000)
        if unicodedata.category(chr(code)) in ("Cf", "Mn", "Me", "Cn")
        and not 0xD800 <= code <= 0xDFFF
        and shown(chr(code)) != ""
    ]
    assert kept == []


@pytest.mark.parametrize("value", ["\u00a8", "\u00b4", "\u02dc tilde"])
def test_a_spacing_accent_is_text_a_reader_sees(value: str) -> None:
    assert compact_text(value, limit=50) == value
