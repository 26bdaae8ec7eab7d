"""vLLM (v1 engine): settings, memory plan split like vLLM's source, launch flags, start-up-log reader, reconciliation rows, scheduler policy."""
