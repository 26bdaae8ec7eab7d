"""Pure-Python memory, capacity and scheduling models for LLM inference engines (never imports streamlit)."""
