"""Provider SPI, discovery, and the built-in embedded SQLite provider."""
