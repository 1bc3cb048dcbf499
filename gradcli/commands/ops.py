"""`gradcli ops [FILTER]`: the catalogue of `gradcli.program.catalog`, filtered and shown."""
from __future__ import annotations

from typing import Optional

import typer

from gradcli.commands.common import console, emit_json, guarded


def ops_command(
    text: Optional[str] = typer.Argument(None, metavar="[FILTER]", help="Show only entries whose name contains this."),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON object."),
    debug: bool = typer.Option(False, "--debug", help="Show Python tracebacks."),
) -> None:
    """Every function, method, attribute and operator a program can use, with its derivative rule."""
    with guarded(as_json, debug):
        from gradcli.program.catalog import entries, matching, namespaces
        rows = matching(entries(), text)
        if as_json:
            emit_json({"ops": [e.to_json() for e in rows], "namespaces": namespaces()})
        else:
            from gradcli.views.render import ops_view
            console().print(ops_view(rows, text, namespaces()))
