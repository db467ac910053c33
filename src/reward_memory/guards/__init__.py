"""Pure guard functions, one module per seam.

A guard takes typed records (and ``now=`` where time matters) and returns the
reason codes that block the request, in a fixed order; an empty tuple means
the request may proceed. Guards never call a provider, never do I/O and never
raise for a policy problem: a policy problem is a reason code, a structural
problem is a :class:`~reward_memory.errors.RecordValidationError` raised earlier.
"""
