"""Read an engine's start-up log: engine, version, geometry, settings and every printed memory figure.

    parsed = parse_startup_log(text)
    parsed.engine                                   # a registered engine id (calculators.engines.ENGINE_IDS) or None
    parsed.settings["ctx_size"]                     # shared setting keys (runner_settings for Ollama's runner)
    parsed.geometry.n_kv_heads                      # what the GGUF metadata dump states
    k = parsed.figure("k_bytes", cache="kv_swa")    # a Figure: value in bytes, printed text, unit, line
    k.consistent_with(plan_k_bytes)                 # exact to the printed precision?
    parsed.total("kv_buffer_bytes", cache="kv")     # per-device figures summed
    parsed.missing, parsed.notes                    # what a complete log would state but this one did not

The figure names, their units and the plan fields they match are listed in `vocabulary.FIGURES`;
`precision.py` turns a printed, rounded number into the interval of exact values it stands for.
"""
