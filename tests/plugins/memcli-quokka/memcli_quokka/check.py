"""A heartbeat check: a memory that mentions a quokka in its title."""

from memcli.api import Check, Finding


class QuokkaCheck(Check):
    codes = ("QUOKKA001",)

    def memo(self, m, line, now):
        if "quokka" not in m.title.lower():
            return []
        return [
            Finding(
                "QUOKKA001",
                "info",
                m.path,
                line,
                "this memory is about a quokka",
                "nothing to do: the plugin only says so",
            )
        ]
