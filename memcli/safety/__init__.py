"""What memcli checks before anything lands in a committed file.

``writecheck`` is the one check every door calls (sizes and control characters from
``text_limits``, conflict-marker lines, secrets, a detail file's ``frontmatter_values``);
``scanner`` finds secrets and prompt injection by the rules of ``rules/*.json`` (``ruleset`` reads
them, ``rule_functions`` holds the code they name, ``normalize`` undoes disguises, ``invisible``
judges invisible characters); ``pii`` finds and masks personal data under `write.pii`.
"""
