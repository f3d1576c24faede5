"""The use cases over a memory root, one module each (write, edit, recall, context, inbox, reflect,
maintain, watch, git, merge, transfer, lookup, rename, …): each takes a ``store.Root`` (never the
``Memory`` facade, which calls them) and returns typed values."""
