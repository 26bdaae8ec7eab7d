"""One module per engine: its settings (named as the engine names them) and its memory plan."""
