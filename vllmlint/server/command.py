"""`vllmlint server`: the language server over standard input and output (imported only for this command)."""
from __future__ import annotations

import sys

import click


@click.command("server")
@click.option("--stdio", is_flag=True, help="Talk LSP over standard input/output (the default and only transport; "
              "accepted because editors' clients pass it).")
@click.option("--debounce", type=click.IntRange(min=0), default=0, show_default=True,
              help="Milliseconds after the last change of a document before it is linted again.")
def command(stdio: bool, debounce: int) -> None:
    """Run the language server (for editors: VS Code, Neovim, Helix, Emacs; see docs/editors.md)."""
    try:
        import lsprotocol  # noqa: F401
        import pygls  # noqa: F401
    except ImportError:
        click.echo("vllmlint: error: `vllmlint server` needs the server extra (pygls 2 and lsprotocol); vllmlint is "
                   "not on PyPI: install it from a checkout or a wheel built from one, "
                   "pip install '/path/to/vllmlint[server]'", err=True)
        sys.exit(2)
    from vllmlint.server.server import main

    main(debounce / 1000)
