"""A command: how many memories mention a quokka."""

import typer

from memcli import Memory


def add(app):
    @app.command("quokkas")
    def quokkas(ctx: typer.Context):
        """Count the memories whose title or summary mentions a quokka.

        Example: memcli quokkas
        """
        listing = Memory.find(ctx.find_root().params.get("root")).list()
        found = [d for d in listing.details if "quokka" in f"{d.title} {d.summary}".lower()]
        typer.echo(f"{len(found)} memories mention a quokka")
