"""Small helpers every layer may use: escaped HTML pieces, JSON Lines reading. Nothing here
imports the rest of ctxlab."""
