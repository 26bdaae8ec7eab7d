"""llama-server's embeddings: the GGUF's pooling type, --pooling to override, L2 by default (--embd-normalize 2).

common/arg.cpp defines --embeddings, --pooling {none,mean,cls,last,rank} and --embd-normalize; the GGUF's
<arch>.pooling_type is written by conversion/base.py _try_set_pooling_type from the sentence-transformers
files; tools/server/server-context.cpp rejects an input longer than the physical batch (-ub, 512 by default
in common/common.h) when the embeddings must be computed in one batch. The rule is the one the GGUF engines
share.
"""

from calculators.checks.embeddings import gguf_pooling_rule

EMBEDDING_RULE = gguf_pooling_rule
