"""A memcli plugin: one module named by a `memcli.plugins` entry point, with the hooks memcli
calls when it needs what they add. Each hook imports its own module, so a recall loads the
layer and nothing else."""


def register_layers(register):
    from .layer import QuokkaLayer

    register(QuokkaLayer(), before="details")


def register_checks(register):
    from .check import QuokkaCheck

    register(QuokkaCheck)


def register_commands(app):
    from .command import add

    add(app)


def register_providers(register):
    from .provider import TrigramProvider

    register("quokka-trigrams", lambda config: TrigramProvider())


def register_rule_sets(add):
    add(
        "quokka",
        {
            "format": 1,
            "about": "the token of the quokka API",
            "secrets": [{"kind": "Quokka API token", "pattern": "qk_[a-z0-9]{20}(?![a-z0-9])", "hints": ["qk_"]}],
        },
    )
