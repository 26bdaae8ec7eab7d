"""Ollama: settings, memory plan (its own prediction, then llama.cpp's), launch environment, start-up-log reader, reconciliation rows, scheduler policy."""
