"""SGLang: settings, memory pool plan, launch flags, start-up-log reader, reconciliation rows, scheduler policy."""
