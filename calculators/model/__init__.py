"""What a model is, read from its inputs: config.json (file, text or the hub), the GGUF header (the one GGUF reader),
the catalog, parameter counts, weight bytes and ggml tensor sizes."""
