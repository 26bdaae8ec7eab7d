"""Plain-text renderings (Markdown) of calculator results, shared by pages and the CLI; no streamlit."""
