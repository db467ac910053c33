"""attrs records for every packet and durable record (one module per concept)."""
