"""The source people wrote: ``.tf`` and ``.bicep`` files behind a plan or a compiled template.

A plan and a compiled template are build products. GitHub code scanning annotates a pull request
only on lines of committed files, so each resource gets a `Declaration` (its block, and the
lines of the properties it writes) when its source is found, and reports point there.
"""
