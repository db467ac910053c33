"""The cold recall path does each piece of work once, and gives what the slow way gives.

Contract: a readback is parsed by the same rules as any stored record (DESIGN §6,
reference §7.3: expired records are never recalled), and a guarded request packet
holds the request's normalised view with the digest of each query (reference §7.1).
These tests hold the shortcuts of the cold path to the reference computations.
"""

from __future__ import annotations

import copy
import pickle
from datetime import UTC, datetime, timedelta, timezone

import attrs
from hypothesis import given
from hypothesis import strategies as st

from _recall_support import active_record, content_of, corpus, request
from reward_memory._recall import readback
from reward_memory._recall.item_filter import filter_of, static_fit
from reward_memory._recall.readback import _moment
from reward_memory._recall.session import RecallItem
from reward_memory.digests import short_digest
from reward_memory.grammars import format_utc, parse_timestamp
from reward_memory.records.recall import NormalizedRecallRequest, RecallQuery, RecallRequest

_MOMENTS = st.datetimes(
    min_value=datetime(1, 1, 2),
    max_value=datetime(9999, 12, 30),
    timezones=st.sampled_from([UTC, timezone(timedelta(hours=5, minutes=30))]),
)


@given(_MOMENTS)
def test_a_stored_timestamp_is_read_as_parse_timestamp_reads_it(moment: datetime) -> None:
    """Expiry is compared as an instant: the direct read is parse_timestamp's, offset included."""
    stored = format_utc(moment)
    fast, reference = _moment(stored), parse_timestamp(stored)
    assert fast == reference
    assert fast.utcoffset() == reference.utcoffset() == timedelta(0)


_TEMPLATE = "2026-03-01T12:34:56.000001Z"


@st.composite
def _near_stored(draw: st.DrawFn) -> str:
    """A stored spelling with a few characters replaced (digits, separators, letters)."""
    text = list(draw(_MOMENTS.map(format_utc)) if draw(st.booleans()) else _TEMPLATE)
    for _ in range(draw(st.integers(0, 3))):
        at = draw(st.integers(0, len(text) - 1))
        text[at] = draw(st.sampled_from("0123456789-:.TtZz +W,\u0663\uff10"))
    if draw(st.booleans()):
        text = text[: draw(st.integers(0, len(text)))] + list(
            draw(st.text("0123456789Z:.", max_size=3))
        )
    return "".join(text)


@given(
    st.one_of(
        _near_stored(),
        st.sampled_from(
            [
                "2026-01-01T00:00:00+00:00",
                "2026-01-01T01:00:00+01:00",
                "2026-02-30T00:00:00Z",
                "2026-W01-1T00:00:00Z",
                "2026-01-01 00:00:00Z",
                "2026-01-01T24:00:00Z",
                "2026-01-01T00:00:60Z",
                "2026-01-01T00:00:00.000000Z",
                "2026-01-01T00:00:00,000001Z",
            ]
        ),
    )
)
def test_any_spelling_is_read_as_parse_timestamp_reads_it(spelling: str) -> None:
    """Whatever the text, the instant (or the error) is parse_timestamp's."""
    try:
        expected: object = parse_timestamp(spelling)
    except Exception as exc:  # noqa: BLE001 - compared below
        expected = (type(exc), str(exc))
    try:
        got: object = _moment(spelling)
    except Exception as exc:  # noqa: BLE001
        got = (type(exc), str(exc))
    assert got == expected
    if isinstance(got, datetime) and isinstance(expected, datetime):
        assert got.utcoffset() == expected.utcoffset()


def _reference_view(record: object, content: str) -> dict[str, object]:
    """What the item filter and the items read of a v1 readback, computed the slow way."""
    expires = record.expiry.expires_at  # type: ignore[attr-defined]
    return {
        "identity": readback.identity(
            record.corpus_id,  # type: ignore[attr-defined]
            record.class_id,  # type: ignore[attr-defined]
            record.scope,  # type: ignore[attr-defined]
        ),
        "surfaces": frozenset(record.scope.surface_ids),  # type: ignore[attr-defined]
        "expires_at": None if expires is None else parse_timestamp(expires),
        "record_key": record.record_ref,  # type: ignore[attr-defined]
        "content": content,
        "legacy": False,
    }


@given(
    expires=st.one_of(st.none(), _MOMENTS.map(format_utc)),
    summary=st.text(alphabet="abcdefgh0123456789", min_size=1, max_size=40),
)
def test_a_parsed_readback_holds_what_the_record_says(expires: str | None, summary: str) -> None:
    record = active_record(summary=f"Prefer {summary} here.", expires_at=expires)
    content = content_of(record)
    parsed = readback.parse.__wrapped__(content)  # the uncached parse: a first read
    assert parsed is not None
    assert parsed.record == record
    for name, value in _reference_view(record, content).items():
        assert getattr(parsed, name) == value, name
    item = RecallItem.of(parsed, "ref-1", "provider-" + "1" * 20)
    assert (item.candidate_ref, item.class_id, item.content_summary, item.record) == (
        record.candidate_ref,
        record.class_id,
        record.content_summary,
        record,
    )
    assert item.content_digest == parsed.content_digest
    with_init = RecallItem(
        memory_ref="ref-1",
        provider_ref="provider-" + "1" * 20,
        candidate_ref=parsed.candidate_ref,
        class_id=parsed.class_id,
        content_summary=parsed.content_summary,
        authority_level=parsed.authority_level,
        legacy=parsed.legacy,
        record=parsed.record,
        _source=parsed,
    )
    assert repr(item) == repr(with_init)
    assert item.__reduce__() == with_init.__reduce__()


def test_static_fit_is_a_pure_verdict() -> None:
    """Uncached, the verdict is recomputed every time and never depends on an earlier one."""
    parsed = readback.parse(content_of(active_record()))
    assert parsed is not None
    item_filter = filter_of(corpus(), request().surface_id)
    assert static_fit(item_filter, parsed) is static_fit(item_filter, parsed) is True


@given(
    queries=st.lists(
        st.text(alphabet="abcdefgh 0123456789", min_size=1, max_size=60).filter(str.strip),
        min_size=1,
        max_size=3,
    )
)
def test_a_request_s_views_are_set_when_it_is_built(queries: list[str]) -> None:
    """The normalised view a new request holds is the one NormalizedRecallRequest builds,
    with one digest per query (reference §7.1: a packet carries digests, never the text)."""
    built = request(
        mode="bounded_agentic_search",
        queries=[RecallQuery(query=q, query_summary=f"summary {i}") for i, q in enumerate(queries)],
    )
    assert [e.query_digest for e in built.query_evidence] == [
        short_digest(q.query) for q in built.queries
    ]
    validated = NormalizedRecallRequest(
        **{
            field.name: getattr(built, field.name)
            for field in attrs.fields(NormalizedRecallRequest)
            if field.name != "query_evidence"
        },
        query_evidence=built.query_evidence,
    )
    assert built.normalized == validated
    assert attrs.evolve(built).normalized == validated
    # A copy or an unpickled request (its views not carried) computes them on first read.
    assert pickle.loads(pickle.dumps(built)).normalized == validated
    assert copy.deepcopy(built).normalized == validated


def test_a_subclassed_request_computes_its_views_on_first_read() -> None:
    """Only the exact record type is primed; a subclass gets the validating constructor."""

    @attrs.frozen(kw_only=True)
    class Mine(RecallRequest):
        pass

    base = request()
    mine = Mine(**{field.name: getattr(base, field.name) for field in attrs.fields(RecallRequest)})
    assert mine.normalized == base.normalized
    assert mine.query_evidence == base.query_evidence
