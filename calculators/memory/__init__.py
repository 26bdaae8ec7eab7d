"""Engine-independent memory arithmetic and results: KV bytes per token, plan result types,
every engine's plan side by side (compare) and each engine's capacity."""
