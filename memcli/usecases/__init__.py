"""The use cases over a memory root, one module each: write (remember, update, forget, restore),
edit, recall and context, state (session, scope), maintain (audit, repair, index rebuild and
check) and watch, git (sync, resolve, the reconciliation after a merge) and merge (the drivers
git runs), transfer (import, export), lookup (completion, stats, search), duplicates
(remember's near-duplicate check), rename, reflect and the inbox, outcome, init, hooks. Each
takes a ``store.Root`` (never the ``Memory`` facade, which calls them) and returns typed values.
"""
