"""Field-mapping adapters from module-specific events to the shared candidate contract.

Adapters live outside the generic core: they only map strict, compact field
sets onto :mod:`reward_memory.candidates` input. Any unknown field is
rejected (that is how raw comment bodies stay out); all guards and lifecycle
decisions remain in the core.
"""
