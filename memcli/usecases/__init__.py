"""Use cases: what memcli does with a root, one module each."""
