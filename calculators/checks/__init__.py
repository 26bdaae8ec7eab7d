"""Will it work with my application: tool-call parsing and embedding-vector checks per engine (issue 20)."""
