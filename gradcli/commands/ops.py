"""`gradcli ops [FILTER]`: the catalogue of `gradcli.program.catalog`, filtered and shown."""
from __future__ import annotations

from typing import Annotated, Optional

import typer

from gradcli.commands import options
from gradcli.commands.common import console, emit_json, guarded
from gradcli.commands.options import Debug


Json = options.as_json("the entries and the namespaces as one JSON object instead of a table")


def ops_command(
    text: Annotated[Optional[str], typer.Argument(
        metavar="[FILTER]", help="Show only entries whose name or node contains this, e.g. softplus or Backward.")] = None,
    as_json: Json = False, debug: Debug = False,
) -> None:
    """Every function, method, attribute and operator a program can use, with its derivative rule."""
    with guarded(as_json, debug):
        from gradcli.program.catalog import entries, matching, namespaces
        rows = matching(entries(), text)
        if as_json:
            emit_json({"ops": [e.to_json() for e in rows], "namespaces": namespaces(text)})
        else:
            from gradcli.views.render import ops_view
            console().print(ops_view(rows, text, namespaces(text)))
