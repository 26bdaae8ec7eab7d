"""llama.cpp's llama-server: settings, memory plan, launch flags, start-up-log reader, reconciliation rows, scheduler policy."""
