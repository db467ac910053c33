"""``reward-memory schema list | show NAME | validate FILE``."""

from __future__ import annotations

import argparse

from reward_memory.cli._common import Outcome, read_json_input, write_json


def configure(parser: argparse.ArgumentParser) -> None:
    """Sub-actions: list the bundled schemas, show one, or validate a packet file."""
    actions = parser.add_subparsers(dest="action", required=True, metavar="ACTION")
    actions.add_parser("list", help="list the bundled packet schemas")
    show = actions.add_parser("show", help="print one schema document")
    show.add_argument("name", help="a schema_version, e.g. reward_memory_corpus_health_v0")
    validate = actions.add_parser("validate", help="validate a packet file (- for stdin)")
    validate.add_argument("file")
    for sub in actions.choices.values():
        # Accept --format after the action too; SUPPRESS keeps the verb-level value otherwise.
        sub.add_argument(
            "--format",
            choices=("json", "text", "markdown"),
            default=argparse.SUPPRESS,
            help="output format",
        )


def run(args: argparse.Namespace) -> Outcome:
    """Dispatch the sub-action."""
    from reward_memory import schemas, wire
    from reward_memory.records._plain import to_plain

    if args.action == "list":
        from reward_memory.records.catalog import SchemaCatalog, SchemaEntry

        entries = tuple(
            SchemaEntry(name=name, id=doc["$id"], title=doc.get("title", name))
            for name in schemas.schema_names()
            for doc in (schemas.get_schema(name),)
        )
        catalog = SchemaCatalog(schema_count=len(entries), schemas=entries)
        lines = tuple(f"  {entry.name}" for entry in entries)
        return Outcome(packet=to_plain(catalog), text_lines=lines)
    if args.action == "show":
        # A schema is printed as itself (always JSON): it is a document, not a packet.
        document = schemas.get_schema(args.name)
        write_json(document)
        return Outcome(packet=document, printed=True)
    from reward_memory.records._plain import from_plain
    from reward_memory.records.catalog import SchemaValidation

    data = read_json_input(args.file, option="FILE")
    # Schema first (strict types, closed objects), then the record's own invariants.
    # from_plain builds what wire.load would, without paying for cattrs at start-up.
    name = schemas.validate(data)
    record: object = from_plain(wire.packet_type(name), data)
    result = SchemaValidation(validated_schema=name, record_type=type(record).__name__)
    return Outcome(packet=to_plain(result))
