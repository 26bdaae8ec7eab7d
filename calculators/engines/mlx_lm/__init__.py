"""MLX LM: settings, memory plan, launch flags, start-up-log reader, reconciliation rows."""
