"""Ollama's embeddings: the package's GGUF pooling, always L2-normalised by /api/embed (server/routes.go).

A request's dimensions truncates the vector and normalises it again; inputs are truncated to the context
unless truncate is false; the runner's batch defaults to 2048 tokens for embedding models
(llm/llama_server.go DefaultEmbeddingNumBatch). The rule is the one the GGUF engines share.
"""

from calculators.checks.embeddings import gguf_pooling_rule

EMBEDDING_RULE = gguf_pooling_rule
