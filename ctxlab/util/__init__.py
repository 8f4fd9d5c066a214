"""Small helpers every layer may use: escaped HTML pieces, JSON Lines reading, atomic writes.
Nothing here imports the rest of ctxlab but its exceptions."""
