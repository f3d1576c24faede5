"""What memcli checks before anything lands in a committed file.

``writecheck`` is the one check every door calls (remember and update from the command line,
the Python API and MCP; edit; import; the git merge driver's result; heartbeat's carry of a
hand-edited index line): sizes and control characters (``text_limits``), conflict-marker lines
and secrets; ``normalize`` undoes the disguises of injected text before its rules run.
``frontmatter_values`` holds the rules a memory's frontmatter values must follow, shared with heartbeat.
``scanner`` finds secrets and prompt injection by the rules of ``rules/*.json`` (``ruleset``
reads them, ``rule_functions`` holds the code they name, ``invisible`` the invisible characters).
``pii`` finds and masks personal data under the `write.pii` policies (see its docstring).
"""
