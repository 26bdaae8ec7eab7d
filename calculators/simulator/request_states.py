"""Where open requests are in a server: admitted into the batch (holding KV cache) or waiting in a queue."""

from __future__ import annotations

from dataclasses import dataclass

from calculators.errors import ServewiseInputError
from calculators.i18n import _


@dataclass(frozen=True)
class RequestStates:
    """A snapshot of one server: counts of connections, queued requests and active sequences."""

    open_connections: int
    active_sequences: int  # admitted by the scheduler; each holds its own KV cache
    queued_requests: int  # accepted on a connection but not yet admitted; no KV cache yet
    weight_copies: int = 1  # every active sequence reads the same loaded weights


def request_states(open_connections: int, max_active_sequences: int) -> RequestStates:
    """Split `open_connections` (one request each) into active sequences and queued requests.

    The engine admits at most `max_active_sequences` at once (vLLM max_num_seqs, llama-server
    --parallel, OLLAMA_NUM_PARALLEL...); the rest wait. The weights are loaded once per replica
    however many requests there are.
    """
    if open_connections < 0:
        raise ServewiseInputError(_("the number of open connections cannot be negative"))
    if max_active_sequences < 1:
        raise ServewiseInputError(_("the engine must admit at least one sequence at a time"))
    active = min(open_connections, max_active_sequences)
    return RequestStates(
        open_connections=open_connections,
        active_sequences=active,
        queued_requests=open_connections - active,
    )
