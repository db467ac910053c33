"""The parts of guarded recall, one concept a module.

The public names live in :mod:`reward_memory.guarded_recall`.


- :mod:`.session` -- the transient :class:`RecallItem` and the :class:`RecallSession`;
- :mod:`.readback` -- parsing one provider readback into an active record (v1 or legacy v0);
- :mod:`.item_filter` -- which parsed readbacks belong to the corpus and surface;
- :mod:`.execution` -- the provider loop (search, exact readback, fail open) and the packet.
"""
