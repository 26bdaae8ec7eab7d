"""Iteration-level (continuous batching, as in Orca) simulation of one engine serving one workload.

Each step: cancel requests past their first-token deadline, admit waiting requests while the
policy's sequence cap, free KV and the step's token budget allow, run one prefill chunk per
prefilling sequence and one decode token per decoding sequence, then retire finished ones. When a
pool runs out of KV a preempting engine frees the newest running request, which goes back to the
queue front and later recomputes its prompt and generated tokens.

An engine whose host processes a step's outputs while the next step runs on the device
(`SchedulerSpec.outputs_returned_next_step`, vLLM's V0 engine) is modelled as such: each step spends
the host time of the previous step's sequences, and a first token or a finish computed in one step
reaches the client when the next step ends (at once when the engine has nothing left to run).

Repeated prompts (`RequestSet.prompt_keys`) on an engine with a shared prefix cache: a finished (or preempted)
request's KV blocks stay cached in the free part of the pool, least recently freed evicted first and a
request's tail before its head (vLLM V1 frees a request's blocks in reverse order into an LRU free queue;
SGLang's radix cache evicts least recently used leaves); a later request with the same key reuses its whole
blocks up to one token short of what it has to compute, and those blocks count against the pool again.

Speed: decoding sequences are not touched one by one. A global decode-step counter advances them
all at once, each remembers the counter value it started decoding at, and finishes come from a heap
keyed by the counter value they finish at. When only decodes run and the queue cannot move,
the simulator jumps straight to the next event (a finish, an arrival, KV running out) and sums the
step times of the span in closed form.
"""

from __future__ import annotations

import heapq
import math
from collections import OrderedDict, deque

import numpy as np

from calculators.simulator.policy import Admission, KvLayout, PrefixReuse, SchedulerSpec
from calculators.simulator.results import (
    QUEUE_NEGLIGIBLE_SHARE,
    Constraint,
    Diagnostics,
    Distribution,
    RejectReason,
    RequestRecord,
    RequestStatus,
    SimulationResult,
    Slo,
    StepTrace,
    Summary,
    TimeSeries,
)
from calculators.simulator.roofline import StepCostModel, decode_span_seconds, prefill_pairs, step_seconds
from calculators.simulator.workload import RequestSet, WorkloadSpec

_NOT_ARRIVED, _WAITING, _PREFILL, _DECODE, _FINISHED, _REJECTED, _CANCELLED = range(7)
#: Most points a time series keeps after downsampling.
TIMESERIES_POINTS = 300


class _Run:
    """Mutable state of one simulation; `run()` drives it to the end and builds the result."""

    def __init__(self, spec: SchedulerSpec, cost: StepCostModel, workload: WorkloadSpec, reqs: RequestSet, slo: Slo):
        self.spec = spec
        self.cost = cost
        self.rates = cost.rates
        self.slo = slo
        self.workload = workload
        n = len(reqs.prompt_tokens)
        self.n = n
        self.prompt = reqs.prompt_tokens
        self.output = reqs.output_tokens
        self.prefix = reqs.prefix_tokens
        self.think = reqs.think_s
        self.cancel_after = workload.cancel_after_s
        self.closed_loop = reqs.arrival_s is None

        self.status = [_NOT_ARRIVED] * n
        self.arrival = [0.0] * n
        self.admit: list[float | None] = [None] * n
        self.first: list[float | None] = [None] * n
        self.end = [0.0] * n
        self.preemptions = [0] * n
        self.gen = [0] * n  # generated tokens (valid while not decoding)
        self.out_eff = list(self.output)  # output target after truncation at a slot's context
        self.truncated = [False] * n
        self.reject_reason: list[RejectReason | None] = [None] * n
        self.hit = [0] * n  # prompt tokens served from a prefix cache at the last admission
        self.shared = [0] * n  # tokens of this sequence's KV held in the shared prefix copy
        self.ctx = [0] * n  # KV tokens held (valid while prefilling)
        self.need = [0] * n  # tokens left to prefill in this pass
        self.d0 = [0] * n  # decode counter when decoding started
        self.ctx0 = [0] * n  # KV tokens when decoding started
        self.g0 = [0] * n  # generated tokens when decoding started
        self.epoch = [0] * n  # bumps on preemption: stale heap entries are skipped
        self.slot = [-1] * n

        self.now = 0.0
        self.decode_steps = 0  # global decode-step counter D
        self.waiting: deque[int] = deque()  # may hold cancelled ids (removed lazily); n_waiting counts live ones
        self.n_waiting = 0
        self.pending_first: deque[int] = deque()  # arrived, no first token yet, in arrival order
        self.prefilling: dict[int, None] = {}  # in admission order
        self.kv_prefill = 0  # sum of ctx - shared over prefilling sequences
        self.rem_prefill = 0  # sum of out_eff - gen over prefilling sequences
        self.running: dict[int, None] = {}  # insertion order = admission order; last = newest
        self.finish_heap: list[tuple[int, int, int]] = []  # (decode counter at finish, request, epoch)
        self.n_dec = 0
        self.sum_ctx_dec = 0  # sum of ctx0 - d0 over decoders: their KV = sum_ctx_dec + n_dec * D
        self.sum_shared_dec = 0
        self.sum_rem_dec = 0  # sum of out_eff - g0 + d0: remaining outputs = sum_rem_dec - n_dec * D
        self.reserved_full = 0  # static baseline: prompt + output reserved by the running batch

        self.capacity = spec.kv_capacity_tokens
        self.pool = spec.kv_layout is KvLayout.POOL
        self.block_waste = (spec.block_size_tokens - 1) / 2.0 if self.pool else 0.0
        self.budget = spec.step_token_budget if spec.step_token_budget is not None else 1 << 62
        if spec.prefix_reuse is PrefixReuse.SHARED and workload.prefix_warm:
            # the cache holds the longest prefix any request that can fit at all will ask for
            fits = self.capacity - spec.block_size_tokens
            self.resident_prefix = max(
                (pre for p, o, pre in zip(self.prompt, self.output, self.prefix, strict=True) if p + o <= fits),
                default=0,
            )
        else:
            self.resident_prefix = 0
        # the shared prefix copy is charged to KV only up to the longest part a running sequence uses;
        # the rest of the cached prefix is evictable and costs nothing until reused
        self.shared_refs: dict[int, int] = {}
        self.shared_heap: list[int] = []  # negated lengths, stale entries skipped lazily
        self.ref_prefix = 0
        self.slot_prefix: list[int] = []
        self.free_slots: list[int] = []
        # repeated prompts: key -> KV tokens a left request keeps cached in the free pool, least recently freed first
        self.keys = reqs.prompt_keys if spec.prefix_reuse is PrefixReuse.SHARED and self.pool else None
        self.prompt_cache: OrderedDict[int, int] = OrderedDict()
        self.prompt_cache_tokens = 0
        if spec.kv_layout is KvLayout.SLOTS:
            warm = max(self.prefix, default=0) if workload.prefix_warm else 0
            self.slot_prefix = [warm] * spec.max_running
            self.free_slots = list(range(spec.max_running - 1, -1, -1))

        if self.closed_loop:
            first_wave = min(workload.n_clients, n)
            self.arrivals = [(self.think[i], i) for i in range(first_wave)]
            heapq.heapify(self.arrivals)
            self.next_issue = first_wave
        else:
            assert reqs.arrival_s is not None  # open loop: closed_loop is `arrival_s is None`
            self.arrivals = [(t, i) for i, t in enumerate(reqs.arrival_s)]  # sorted: already a heap
            self.next_issue = n

        unused = {Constraint.NONE} if spec.max_prefilling is not None else {Constraint.NONE, Constraint.PREFILL_SLOTS}
        self.blocked: dict[Constraint, float] = {c: 0.0 for c in Constraint if c not in unused}
        self.queued_time = 0.0
        self.busy_time = 0.0
        self.active_integral = 0.0
        self.kv_integral = 0.0
        self.peak_active = 0
        self.peak_kv = 0.0
        self.n_preempt = 0
        self.n_steps = 0
        self.decode_stall_s = 0.0
        self.ts_t: list[float] = [0.0]
        self.ts_q: list[int] = [0]
        self.ts_a: list[int] = [0]
        self.ts_kv: list[float] = [0.0]
        #: steps as they ran (start time, decoded ids, handed-over ids, prefill chunks), when a trace is asked for
        self.trace: list[StepTrace] | None = None
        self.awaiting_first: list[int] = []  # decode-then-prefill: handed over, first token not yet returned
        # SchedulerSpec.outputs_returned_next_step: first tokens and finishes of the last step, which the client sees
        # when the current step ends, and how many sequences' outputs the current step processes on the host
        self.late_outputs = spec.outputs_returned_next_step
        self.late_first: list[int] = []
        self.late_end: list[int] = []
        self.host_seqs = 0
        # SchedulerSpec.graph_max_batch: decode steps of a larger batch run eagerly, at least the host's launch time
        self.graph_cap = spec.graph_max_batch
        self.eager_floor_s = spec.eager_host_s_per_layer * cost.n_layers * cost.eager_host_scale
        self.eager_steps = 0

    # ---- KV bookkeeping -------------------------------------------------------------------
    def kv_used(self) -> float:
        """KV tokens held now: owned by running sequences, plus the shared prefix copy, plus block waste."""
        used = self.sum_ctx_dec + self.n_dec * self.decode_steps - self.sum_shared_dec + self.ref_prefix
        return used + self.kv_prefill + self.block_waste * len(self.running)

    def set_shared(self, i: int, tokens: int) -> None:
        """Record that sequence `i` uses the first `tokens` of the shared prefix copy; keeps
        `ref_prefix`, the longest part of the copy any running sequence uses, up to date."""
        old = self.shared[i]
        if old == tokens:
            return
        refs = self.shared_refs
        if old:
            refs[old] -= 1
        if tokens:
            count = refs.get(tokens, 0)
            refs[tokens] = count + 1
            if not count:
                heapq.heappush(self.shared_heap, -tokens)
        self.shared[i] = tokens
        if tokens > self.ref_prefix:
            self.ref_prefix = tokens
        elif old == self.ref_prefix and not refs[old]:
            heap = self.shared_heap
            while heap and not refs.get(-heap[0]):
                heapq.heappop(heap)
            self.ref_prefix = -heap[0] if heap else 0

    def remaining_outputs(self) -> int:
        """Output tokens the running sequences have still to generate."""
        return self.sum_rem_dec - self.n_dec * self.decode_steps + self.rem_prefill

    # ---- request lifecycle ----------------------------------------------------------------
    def arrive(self, i: int, t: float) -> None:
        spec = self.spec
        self.arrival[i] = t
        p, o = self.prompt[i], self.output[i]
        reason = None
        slot_context = spec.slot_context_tokens
        if spec.kv_layout is KvLayout.SLOTS and slot_context is not None:  # SchedulerSpec requires it for slots
            if p >= slot_context:
                reason = RejectReason.EXCEEDS_CONTEXT
            elif p + o > slot_context:
                self.out_eff[i] = slot_context - p
                self.truncated[i] = True
        else:
            if spec.max_request_tokens is not None and p + o > spec.max_request_tokens:
                reason = RejectReason.EXCEEDS_CONTEXT
            elif p + o + spec.block_size_tokens > self.capacity and spec.admission is not Admission.UNCHECKED:
                reason = RejectReason.EXCEEDS_KV
            elif not spec.chunked_prefill and p + o > self.budget:
                # without chunking a (re)prefill of prompt + generated tokens must fit one step; vLLM
                # enforces it by refusing max_num_batched_tokens < max_model_len
                reason = RejectReason.EXCEEDS_TOKEN_BUDGET
        if reason is None and spec.max_queue is not None and self.n_waiting >= spec.max_queue:
            reason = RejectReason.QUEUE_FULL
        if reason is not None:
            self.status[i] = _REJECTED
            self.reject_reason[i] = reason
            self.end[i] = t
            self.issue_next(t)
            return
        self.status[i] = _WAITING
        self.waiting.append(i)
        self.n_waiting += 1
        if self.cancel_after is not None:
            self.pending_first.append(i)

    def issue_next(self, t: float) -> None:
        """Closed loop: the client whose request just ended sends the next one after thinking."""
        if self.closed_loop and self.next_issue < self.n:
            j = self.next_issue
            self.next_issue += 1
            heapq.heappush(self.arrivals, (t + self.think[j], j))

    def leave_running(self, i: int) -> None:
        """Take a sequence out of the running set (finish, cancel or preemption), freeing its KV."""
        st = self.status[i]
        if st == _DECODE:
            self.gen[i] = self.g0[i] + self.decode_steps - self.d0[i]
            self.n_dec -= 1
            self.sum_ctx_dec -= self.ctx0[i] - self.d0[i]
            self.sum_shared_dec -= self.shared[i]
            self.sum_rem_dec -= self.out_eff[i] - self.g0[i] + self.d0[i]
            self.epoch[i] += 1
        elif st == _PREFILL:
            del self.prefilling[i]
            self.kv_prefill -= self.ctx[i] - self.shared[i]
            self.rem_prefill -= self.out_eff[i] - self.gen[i]
        del self.running[i]
        self.ctx[i] = 0
        self.set_shared(i, 0)
        if self.spec.admission is Admission.FULL_REQUEST:
            self.reserved_full -= self.prompt[i] + self.out_eff[i]
        if self.slot[i] >= 0:
            self.free_slots.append(self.slot[i])
            self.slot[i] = -1

    def trim_prompt_cache(self, used: float) -> None:
        """Evict cached prompts (oldest first, a prompt's tail before its head) until they fit the free KV."""
        cache = self.prompt_cache
        excess = math.ceil(self.prompt_cache_tokens - (self.capacity - used))
        while excess > 0 and cache:
            key, tokens = next(iter(cache.items()))
            if tokens <= excess:
                del cache[key]
                self.prompt_cache_tokens -= tokens
                excess -= tokens
            else:
                cache[key] = tokens - excess
                self.prompt_cache_tokens -= excess
                excess = 0

    def leave_cached(self, i: int) -> None:
        """`i` leaves the running set; with repeated prompts its KV (prompt and generated) stays cached."""
        if self.keys is None:
            self.leave_running(i)
            return
        self.trim_prompt_cache(self.kv_used())  # the KV peak before these blocks are freed
        self.leave_running(i)
        key = self.keys[i]
        tokens = self.prompt[i] + self.gen[i]
        self.prompt_cache_tokens += tokens - self.prompt_cache.pop(key, 0)
        self.prompt_cache[key] = tokens

    def own_prompt_hit(self, i: int) -> int:
        """Tokens of `i`'s prompt (and generated tokens) a repeated prompt finds cached: whole blocks, one token short
        of all it has to compute (the last token is computed again for its logits)."""
        if self.keys is None:
            return 0
        held = self.prompt_cache.get(self.keys[i], 0)
        block = self.spec.block_size_tokens
        limit = (self.prompt[i] + self.gen[i] - 1) // block * block
        held = held // block * block
        return held if held < limit else limit

    def finish(self, i: int, t: float) -> None:
        self.leave_cached(i)
        self.status[i] = _FINISHED
        self.end[i] = t
        if self.late_outputs:
            self.late_end.append(i)  # the client sees it when the next step ends (or when the engine drains)
            return
        self.issue_next(t)

    def take_late(self) -> tuple[list[int], list[int]]:
        """First tokens and finishes of the step that just ended, to be returned when the next one ends."""
        late = self.late_first, self.late_end
        self.late_first, self.late_end = [], []
        return late

    def return_late(self, late: tuple[list[int], list[int]]) -> None:
        """The client sees `late` (from take_late) now: first-token and end times, closed-loop clients' next sends."""
        firsts, ends = late
        for i in firsts:
            self.first[i] = self.now
        for i in ends:
            self.end[i] = self.now
            self.issue_next(self.now)

    def drain_if_idle(self) -> None:
        """Nothing is left to run but the last step's finishes are not seen yet: the engine runs them once more
        (it learns they are finished only while processing that step's outputs, in the next step), then idles."""
        if not self.late_end or self.running or self.n_waiting:
            return
        late = self.take_late()
        dt = step_seconds(self.rates, len(late[1]), 0.0, self.host_seqs)
        self.account(dt, 0, Constraint.NONE)
        self.now += dt
        self.n_steps += 1
        self.host_seqs = 0
        self.return_late(late)

    def preempt_newest(self) -> None:
        victim = next(reversed(self.running))
        self.leave_cached(victim)
        self.status[victim] = _WAITING
        self.preemptions[victim] += 1
        self.n_preempt += 1
        self.waiting.appendleft(victim)
        self.n_waiting += 1

    def cancel_overdue(self) -> None:
        """Cancel requests without a first token past their deadline, in the queue or in prefill."""
        limit = self.cancel_after
        assert limit is not None  # requests enter pending_first only when cancel_after is set (arrive)
        pend = self.pending_first
        while pend:
            i = pend[0]
            st = self.status[i]
            if self.first[i] is not None or st not in (_WAITING, _PREFILL):
                pend.popleft()
                continue
            deadline = self.arrival[i] + limit
            if deadline > self.now:
                break
            pend.popleft()
            if st == _PREFILL:
                self.leave_running(i)
            else:
                self.n_waiting -= 1  # its id leaves the deque lazily
            self.status[i] = _CANCELLED
            self.end[i] = deadline
            self.issue_next(deadline)

    def prefix_hit(self, i: int) -> int:
        reuse = self.spec.prefix_reuse
        if reuse is PrefixReuse.SHARED:
            return min(self.prefix[i], self.resident_prefix)
        if reuse is PrefixReuse.PER_SLOT:
            best = max(self.free_slots, key=lambda s: self.slot_prefix[s])
            return min(self.prefix[i], self.slot_prefix[best])
        return 0

    # ---- one scheduling decision ----------------------------------------------------------
    def admit_waiting(self, budget: int, chunks: list[tuple[int, int]], decode_growth: int) -> tuple[int, Constraint]:
        """Admit queue-head requests while limits allow (the step's decodes add `decode_growth` KV
        tokens); returns the budget left and what stopped the queue."""
        spec = self.spec
        admission = spec.admission
        waiting = self.waiting
        blocked = Constraint.NONE
        if spec.static_batch and self.running:
            return budget, Constraint.STATIC_BATCH
        kv_used = self.kv_used() + decode_growth if self.pool else 0.0
        reserve = (
            spec.output_reserve_ratio * self.remaining_outputs() if admission is Admission.PROMPT_PLUS_RESERVE else 0.0
        )
        status = self.status
        while waiting:
            if status[waiting[0]] != _WAITING:
                waiting.popleft()
                continue
            if len(self.running) >= spec.max_running:
                blocked = Constraint.MAX_RUNNING
                break
            if budget <= 0:
                blocked = Constraint.TOKEN_BUDGET
                break
            i = waiting[0]
            hit = self.prefix_hit(i)
            own = self.own_prompt_hit(i)
            if own > hit:
                hit = own
            else:
                own = 0
            total = self.prompt[i] + self.gen[i] - hit
            if total < 1:  # a full hit still computes the last token to get logits
                hit -= 1 - total
                total = 1
            if spec.chunked_prefill:
                chunk = total if total <= budget else budget
            elif total <= budget:
                chunk = total
            else:
                blocked = Constraint.TOKEN_BUDGET
                break
            # reusing a cached prefix nobody runs with makes it count against KV again
            revived = hit - self.ref_prefix if spec.prefix_reuse is PrefixReuse.SHARED and hit else 0
            revived = own if own else (revived if revived > 0 else 0)
            if admission is Admission.NEXT_CHUNK:
                fits = kv_used + revived + chunk + self.block_waste <= self.capacity
            elif admission is Admission.PROMPT_PLUS_RESERVE:
                rem = self.out_eff[i] - self.gen[i]
                fits = (kv_used + revived + total + self.block_waste + spec.output_reserve_ratio * rem + reserve
                        <= self.capacity)
            elif admission is Admission.FULL_REQUEST:
                fits = self.reserved_full + self.prompt[i] + self.out_eff[i] <= self.capacity
            else:
                fits = True
            if not fits:
                blocked = Constraint.KV_CAPACITY
                break
            waiting.popleft()
            self.n_waiting -= 1
            if self.admit[i] is None:
                self.admit[i] = self.now
            self.status[i] = _PREFILL
            self.running[i] = None
            self.prefilling[i] = None
            self.hit[i] = hit
            self.set_shared(i, hit if spec.prefix_reuse is PrefixReuse.SHARED and not own else 0)
            if self.keys is not None:
                self.prompt_cache_tokens -= self.prompt_cache.pop(self.keys[i], 0)
            self.ctx[i] = hit + chunk
            self.kv_prefill += hit + chunk - self.shared[i]
            self.rem_prefill += self.out_eff[i] - self.gen[i]
            self.need[i] = total - chunk
            if spec.kv_layout is KvLayout.SLOTS:
                s = max(self.free_slots, key=lambda k: self.slot_prefix[k])
                self.free_slots.remove(s)
                self.slot[i] = s
            if admission is Admission.FULL_REQUEST:
                self.reserved_full += self.prompt[i] + self.out_eff[i]
            elif admission is Admission.PROMPT_PLUS_RESERVE:
                reserve += spec.output_reserve_ratio * (self.out_eff[i] - self.gen[i])
            kv_used += revived + chunk + self.block_waste
            if self.keys is not None:
                self.trim_prompt_cache(kv_used)
            chunks.append((i, chunk))
            budget -= chunk
        return budget, blocked

    def prefill_done(self, i: int) -> None:
        """Prefill of `i` ended this step: it emits a token and either finishes or starts decoding."""
        spec = self.spec
        self.rem_prefill -= 1
        self.gen[i] += 1
        if self.first[i] is None:
            if self.late_outputs:
                self.first[i] = self.now  # provisional; set when the client sees it (return_late)
                self.late_first.append(i)
            else:
                self.first[i] = self.now
        if spec.prefix_reuse is PrefixReuse.SHARED and self.prefix[i] > self.shared[i]:
            # this request computed (more of) the shared prefix: that part becomes the shared copy
            self.resident_prefix = max(self.resident_prefix, self.prefix[i])
            self.kv_prefill -= self.prefix[i] - self.shared[i]
            self.set_shared(i, self.prefix[i])
        elif spec.prefix_reuse is PrefixReuse.PER_SLOT:
            self.slot_prefix[self.slot[i]] = self.prefix[i]
        if self.gen[i] >= self.out_eff[i]:
            self.finish(i, self.now)
            return
        del self.prefilling[i]
        self.kv_prefill -= self.ctx[i] - self.shared[i]
        self.rem_prefill -= self.out_eff[i] - self.gen[i]
        self.sum_shared_dec += self.shared[i]
        self.become_decoder(i)

    def retire_decoders(self) -> None:
        heap = self.finish_heap
        d = self.decode_steps
        while heap and heap[0][0] <= d:
            _unused, i, ep = heapq.heappop(heap)
            if self.status[i] == _DECODE and self.epoch[i] == ep:
                self.finish(i, self.now)

    def next_finish_steps(self) -> int:
        heap = self.finish_heap
        while heap:
            d_fin, i, ep = heap[0]
            if self.status[i] == _DECODE and self.epoch[i] == ep:
                return d_fin - self.decode_steps
            heapq.heappop(heap)
        return 1 << 62

    def make_room_for_decodes(self) -> bool:
        """Preempt the newest requests until every decoder's next token fits in KV; True if any was."""
        if not (self.pool and self.spec.preempt_on_kv_exhaustion):
            return False
        preempted = False
        while self.running and self.kv_used() + self.n_dec > self.capacity:
            self.preempt_newest()
            preempted = True
        return preempted

    def schedule_prefill(self, budget: int, decode_growth: int) -> tuple[list[tuple[int, int]], int, bool]:
        """Next chunk of each prefilling sequence within `budget` tokens and free KV (after
        `decode_growth` tokens the step's decodes add). Returns (chunks, budget left, preempted)."""
        chunks: list[tuple[int, int]] = []
        preempted = False
        capacity = self.capacity
        preempting = self.spec.preempt_on_kv_exhaustion
        for i in list(self.prefilling):
            if budget <= 0:
                break
            if self.status[i] != _PREFILL:  # preempted earlier in this loop
                continue
            need = self.need[i]
            chunk = need if need <= budget else budget
            if self.pool:
                while (
                    self.kv_used() + decode_growth + chunk > capacity
                    and preempting
                    and next(reversed(self.running)) != i
                ):
                    self.preempt_newest()
                    preempted = True
                    decode_growth = min(decode_growth, self.n_dec)
                if self.kv_used() + decode_growth + chunk > capacity:
                    continue
            self.ctx[i] += chunk
            self.kv_prefill += chunk
            self.need[i] -= chunk
            chunks.append((i, chunk))
            budget -= chunk
        return chunks, budget, preempted

    # ---- main loop ------------------------------------------------------------------------
    def take_arrivals(self) -> bool | None:
        """Admit arrivals due by now to the queue and cancel overdue ones. True: there is work to step;
        False: idle, time moved to the next arrival; None: nothing is left, the run is over."""
        arrivals = self.arrivals
        while arrivals and arrivals[0][0] <= self.now:
            t, i = heapq.heappop(arrivals)
            self.arrive(i, t)
        pend = self.pending_first
        # pending_first fills only when cancel_after is set (arrive)
        if pend and self.cancel_after is not None and self.arrival[pend[0]] + self.cancel_after <= self.now:
            self.cancel_overdue()
        if not self.running and not self.n_waiting:
            if not arrivals:
                self.record()
                return None
            self.now = arrivals[0][0]
            self.record()
            return False
        return True

    def run(self) -> None:
        spec = self.spec
        if spec.decode_then_prefill:
            self.run_decode_then_prefill()
            return
        rates = self.rates
        arrivals = self.arrivals
        while True:
            work = self.take_arrivals()
            if work is None:
                break
            if not work:
                continue

            if spec.mixed_prefill_decode:
                # one step carries every decode token plus prefill chunks in the rest of the budget
                preempted = self.make_room_for_decodes()
                chunks, budget, preempted_pf = self.schedule_prefill(self.budget - self.n_dec, self.n_dec)
                preempted = preempted or preempted_pf
                # vLLM admits nothing new in a step that had to preempt
                if self.n_waiting and not preempted:
                    budget, blocked = self.admit_waiting(budget, chunks, self.n_dec)
                else:
                    blocked = Constraint.KV_CAPACITY if self.n_waiting else Constraint.NONE
            else:
                # SGLang: a prefill batch runs alone whenever there is prefill work; decodes wait for it
                chunks, budget, preempted = self.schedule_prefill(self.budget, 0)
                if self.n_waiting and not preempted:
                    budget, blocked = self.admit_waiting(budget, chunks, 0)
                else:
                    blocked = Constraint.KV_CAPACITY if self.n_waiting else Constraint.NONE
                if not chunks and self.make_room_for_decodes() and self.n_waiting:
                    blocked = Constraint.KV_CAPACITY
            n_dec = self.n_dec if (spec.mixed_prefill_decode or not chunks) else 0
            if not chunks and n_dec == 0:
                if arrivals and not self.running:
                    self.now = max(self.now, arrivals[0][0])
                    continue
                # nothing can run: a state the arrival checks are meant to exclude
                raise RuntimeError(
                    f"{spec.engine}: simulation stalled at t={self.now:.3f}s with {self.n_waiting} waiting"
                )
            dec_kv = self.sum_ctx_dec + n_dec * (self.decode_steps + 1) if n_dec else 0
            queued = self.n_waiting
            if not chunks and not self.prefilling and (not self.n_waiting or blocked is not Constraint.NONE):
                self.decode_span(n_dec, dec_kv, queued, blocked)
                continue
            tokens = n_dec
            kv_read = dec_kv
            pairs = 0.0
            for i, c in chunks:
                tokens += c
                kv_read += self.ctx[i]
                pairs += prefill_pairs(c, self.ctx[i])  # the chunk's queries over the cached and its own keys
            n_seqs = n_dec + len(chunks)
            if self.late_outputs:
                dt = step_seconds(rates, tokens, kv_read, self.host_seqs, pairs)
                self.host_seqs = n_seqs
            else:
                dt = step_seconds(rates, tokens, kv_read, n_seqs, pairs)
            if not chunks and self.runs_eager(n_dec):
                self.eager_steps += 1
                dt = max(dt, self.eager_floor_s)
            late = self.take_late()
            if self.n_dec and not n_dec:
                self.decode_stall_s += dt  # a prefill batch ran alone while sequences were decoding
            self.account(dt, queued, blocked)
            self.now += dt
            self.n_steps += 1
            if n_dec:
                self.decode_steps += 1
            self.return_late(late)
            for i, _unused in chunks:
                if self.status[i] == _PREFILL and self.need[i] == 0:
                    self.prefill_done(i)
            self.retire_decoders()
            self.drain_if_idle()
            self.record()

    def decode_span(self, n_dec: int, kv_read_first: float, queued: int, blocked: Constraint) -> None:
        """Jump over pure-decode steps up to the next finish, arrival or KV exhaustion."""
        rates = self.rates
        k = self.next_finish_steps()
        kv_start = self.kv_used()
        if self.pool and self.spec.preempt_on_kv_exhaustion:
            k = min(k, max(1, int((self.capacity - kv_start) // n_dec)))
        k = self.steps_to_next_arrival(k, n_dec, kv_read_first)
        late = self.take_late()
        if late[0] or late[1]:
            k = 1  # what the last step returned is seen when this one ends: step once
        dt = self.decode_seconds(k, n_dec, kv_read_first)
        if self.runs_eager(n_dec):
            self.eager_steps += k
        if self.late_outputs:  # the span's first step does the host work of the step before it
            dt += rates[4] * (self.host_seqs - n_dec)
            self.host_seqs = n_dec
        self.account(dt, queued, blocked, kv_mean=kv_start + n_dec * (k + 1) / 2.0)
        self.now += dt
        self.n_steps += k
        self.decode_steps += k
        self.return_late(late)
        self.retire_decoders()
        self.drain_if_idle()
        self.record()

    def runs_eager(self, n_dec: int) -> bool:
        """True when a decode step of `n_dec` sequences is above the engine's CUDA-graph batch cap."""
        return self.graph_cap is not None and n_dec > self.graph_cap

    def decode_seconds(self, steps: int, n_dec: int, kv_read_first: float) -> float:
        """Seconds for `steps` pure-decode steps of `n_dec` sequences (KV read growing by n_dec a step): the roofline,
        and above the CUDA-graph cap each step at least the host's eager launch time (`eager_floor_s`)."""
        rates = self.rates
        floor = self.eager_floor_s
        if not self.runs_eager(n_dec) or floor <= 0.0 or steps <= 0:
            return decode_span_seconds(rates, steps, n_dec, kv_read_first)

        def step(j: int) -> float:
            return step_seconds(rates, n_dec, kv_read_first + n_dec * j, n_dec)

        if step(steps - 1) <= floor:
            return steps * floor
        if step(0) >= floor:
            return decode_span_seconds(rates, steps, n_dec, kv_read_first)
        lo, hi = 0, steps - 1  # the first step whose roofline reaches the floor (steps grow with their KV read)
        while lo < hi:
            mid = (lo + hi) // 2
            if step(mid) >= floor:
                hi = mid
            else:
                lo = mid + 1
        return lo * floor + decode_span_seconds(rates, steps - lo, n_dec, kv_read_first + n_dec * lo)

    def steps_to_next_arrival(self, k: int, n_dec: int, kv_read_first: float) -> int:
        """`k`, or fewer pure-decode steps: the fewest whose end reaches the next arrival."""
        if self.arrivals:
            t_next = self.arrivals[0][0]
            if self.now + self.decode_seconds(k, n_dec, kv_read_first) > t_next:
                lo, hi = 1, k  # smallest k whose end reaches the next arrival
                while lo < hi:
                    mid = (lo + hi) // 2
                    if self.now + self.decode_seconds(mid, n_dec, kv_read_first) >= t_next:
                        hi = mid
                    else:
                        lo = mid + 1
                k = lo
        return k

    # ---- decode pass, then prompt passes (SchedulerSpec.decode_then_prefill) ----------------------------------
    def run_decode_then_prefill(self) -> None:
        """Steps as a batch generator with a decode queue and a prompt queue runs them.

        Each step: a decode pass over the decoding sequences; unless they fill max_running, admission of
        queue-head requests up to max_running decoders and max_prefilling prompts in progress; a one-token
        pass handing prompts with one token left to the decoders; a prompt pass in which every prompt in
        progress processes up to prefill_chunk_tokens (padded to the longest chunk of the pass). A prompt
        of p tokens thus processes p - 1 of them in prompt passes and its last in the hand-over pass of a
        later step; each following decode pass returns one token, the first one the one the hand-over
        computed. Tokens a step with a prompt pass returns reach the client when the step ends (that pass
        waits for the device); a step without one returns them as soon as the pass that computed them
        ended, when the step starts. Memory is not checked: the cache grows past the capacity (kv_overflow).
        """
        spec = self.spec
        rates = self.rates
        cap_running = spec.max_running
        cap_prompts = spec.max_prefilling or cap_running
        chunk_cap = spec.prefill_chunk_tokens or self.budget
        tracing = self.trace is not None
        while True:
            work = self.take_arrivals()
            if work is None:
                break
            if not work:
                continue
            queued = self.n_waiting
            n_dec = self.n_dec
            full = n_dec >= cap_running
            if n_dec and not tracing and (full or not (self.prefilling or self.n_waiting)):
                blocked = Constraint.MAX_RUNNING if self.n_waiting else Constraint.NONE
                if self.decode_only_span(n_dec, queued, blocked):
                    continue
            start = self.now
            dt = 0.0
            decoded: tuple[int, ...] = ()
            finished: list[int] = []
            firsts: list[int] = []
            if n_dec:
                dec_kv = self.sum_ctx_dec + n_dec * (self.decode_steps + 1)
                dt += step_seconds(rates, n_dec, dec_kv, n_dec)
                if tracing:
                    decoded = tuple(sorted(i for i in self.running if self.status[i] == _DECODE))
                self.decode_steps += 1
                firsts, self.awaiting_first = self.awaiting_first, []
                self.peak_kv = max(self.peak_kv, self.kv_used())
                finished = self.pop_finished()
            handed: list[int] = []
            chunks: list[tuple[int, int]] = []
            if self.n_dec >= cap_running:
                blocked = Constraint.MAX_RUNNING if self.n_waiting else Constraint.NONE
            else:
                blocked = self.admit_prompts(cap_prompts - len(self.prefilling), cap_running - self.n_dec)
                handed = [i for i in self.prefilling if self.need[i] == 0]
                if handed:
                    kv_read = sum(self.ctx[i] + 1 for i in handed)
                    dt += step_seconds(rates, len(handed), kv_read, len(handed), kv_read - 0.5 * len(handed))
                    for i in handed:
                        self.hand_over(i)
                for i in self.prefilling:
                    need = self.need[i]
                    chunk = need if need <= chunk_cap else chunk_cap
                    self.ctx[i] += chunk
                    self.kv_prefill += chunk
                    self.need[i] -= chunk
                    chunks.append((i, chunk))
                if chunks:
                    width = max(c for _unused, c in chunks)
                    kv_read = sum(self.ctx[i] for i, _unused in chunks)
                    pairs = sum(prefill_pairs(c, self.ctx[i]) for i, c in chunks)
                    dt += step_seconds(rates, width * len(chunks), kv_read, len(chunks), pairs)
            if not (n_dec or handed or chunks):
                raise RuntimeError(
                    f"{spec.engine}: simulation stalled at t={self.now:.3f}s with {self.n_waiting} waiting"
                )
            seen = start + dt if chunks else start
            for i in firsts:
                if self.first[i] is None:
                    self.first[i] = seen
            for i in finished:
                self.end[i] = seen
                self.issue_next(seen)
            self.account(dt, queued, blocked)
            self.now += dt
            self.n_steps += 1
            if self.trace is not None:
                self.trace.append(StepTrace(start_s=start, decoded=decoded, handed_over=tuple(handed),
                                            prefilled=tuple(chunks)))
            self.record()

    def decode_only_span(self, n_dec: int, queued: int, blocked: Constraint) -> bool:
        """Decode-only steps up to (not including) the next finish or the next arrival; False if none."""
        k = self.next_finish_steps() - 1
        if k < 1:
            return False
        kv_first = self.sum_ctx_dec + n_dec * (self.decode_steps + 1)
        k = self.steps_to_next_arrival(k, n_dec, kv_first)
        for i in self.awaiting_first:  # their first token comes back from the span's first (decode-only) step
            if self.first[i] is None:
                self.first[i] = self.now
        self.awaiting_first = []
        kv_start = self.kv_used()
        dt = decode_span_seconds(self.rates, k, n_dec, kv_first)
        self.account(dt, queued, blocked, kv_mean=kv_start + n_dec * (k + 1) / 2.0)
        self.now += dt
        self.n_steps += k
        self.decode_steps += k
        self.record()
        return True

    def admit_prompts(self, prompt_places: int, running_places: int) -> Constraint:
        """Move up to min(places) queue-head requests into the prompt queue; returns what held the rest."""
        places = min(prompt_places, running_places)
        waiting = self.waiting
        status = self.status
        while waiting and places > 0:
            i = waiting.popleft()
            if status[i] != _WAITING:
                continue
            self.n_waiting -= 1
            places -= 1
            if self.admit[i] is None:
                self.admit[i] = self.now
            status[i] = _PREFILL
            self.running[i] = None
            self.prefilling[i] = None
            self.ctx[i] = 0
            self.need[i] = self.prompt[i] + self.gen[i] - 1  # the last token goes through the hand-over pass
            self.rem_prefill += self.out_eff[i] - self.gen[i]
        if not self.n_waiting:
            return Constraint.NONE
        return Constraint.MAX_RUNNING if running_places <= prompt_places else Constraint.PREFILL_SLOTS

    def become_decoder(self, i: int) -> None:
        """Sequence `i` joins the decoders at the current decode step (its finish step goes on the heap)."""
        self.status[i] = _DECODE
        d = self.decode_steps
        self.d0[i] = d
        self.ctx0[i] = self.ctx[i]
        self.g0[i] = self.gen[i]
        self.n_dec += 1
        self.sum_ctx_dec += self.ctx[i] - d
        self.sum_rem_dec += self.out_eff[i] - self.gen[i] + d
        heapq.heappush(self.finish_heap, (d + self.out_eff[i] - self.gen[i], i, self.epoch[i]))

    def hand_over(self, i: int) -> None:
        """Prompt `i` has one token left: that token's pass makes it a decoder (its first token comes next step)."""
        del self.prefilling[i]
        self.kv_prefill -= self.ctx[i]
        self.rem_prefill -= self.out_eff[i] - self.gen[i]
        self.ctx[i] += 1
        self.become_decoder(i)
        self.awaiting_first.append(i)

    def pop_finished(self) -> list[int]:
        """Decoders done at the current decode counter, taken out of the running set (end times set later)."""
        heap = self.finish_heap
        d = self.decode_steps
        done = []
        while heap and heap[0][0] <= d:
            _unused, i, ep = heapq.heappop(heap)
            if self.status[i] == _DECODE and self.epoch[i] == ep:
                self.leave_running(i)
                self.status[i] = _FINISHED
                done.append(i)
        return done

    def account(self, dt: float, queued: int, blocked: Constraint, kv_mean: float | None = None) -> None:
        active = len(self.running)
        kv = self.ts_kv[-1] if kv_mean is None else kv_mean  # KV at the last step boundary
        self.busy_time += dt
        self.active_integral += active * dt
        self.kv_integral += kv * dt
        if active > self.peak_active:
            self.peak_active = active
        if queued:
            self.queued_time += dt
            if blocked is not Constraint.NONE:
                self.blocked[blocked] += dt

    def record(self) -> None:
        kv = self.kv_used()
        if kv > self.peak_kv:
            self.peak_kv = kv
        self.ts_t.append(self.now)
        self.ts_q.append(self.n_waiting)
        self.ts_a.append(len(self.running))
        self.ts_kv.append(kv)

    # ---- results --------------------------------------------------------------------------
    def result(self) -> SimulationResult:
        records = []
        status_map = {
            _FINISHED: RequestStatus.FINISHED,
            _REJECTED: RequestStatus.REJECTED,
            _CANCELLED: RequestStatus.CANCELLED,
        }
        handling = self.cost.request_overhead_s  # request handling outside the steps (HTTP, tokenisation)
        for i in range(self.n):
            st = self.status[i]
            if st not in status_map:  # defensive: the loop only ends when every request has ended
                raise RuntimeError(f"request {i} still in state {st} at the end of the run")
            first = self.first[i]
            records.append(
                RequestRecord(
                    index=i,
                    arrival_s=self.arrival[i],
                    prompt_tokens=self.prompt[i],
                    output_tokens=self.output[i],
                    generated_tokens=self.gen[i],
                    status=status_map[st],
                    end_s=self.end[i] + handling,
                    admit_s=self.admit[i],
                    first_token_s=first + handling if first is not None else None,
                    preemptions=self.preemptions[i],
                    prefix_hit_tokens=self.hit[i],
                    truncated=self.truncated[i],
                    reject_reason=self.reject_reason[i],
                )
            )
        summary = summarize(records, self.slo, self.n_preempt)
        duration = summary.duration_s or 1.0
        spec = self.spec
        mean_hold = (
            sum(p + o / 2.0 for p, o in zip(self.prompt, self.output, strict=True)) / self.n if self.n else 1.0
        )
        blocked = dict(self.blocked)
        binding = Constraint.NONE
        if self.queued_time > QUEUE_NEGLIGIBLE_SHARE * duration and max(blocked.values()) > 0:
            binding = max(blocked, key=lambda constraint: blocked[constraint])
        diagnostics = Diagnostics(
            binding=binding,
            queued_time_s=self.queued_time,
            blocked_time_s=blocked,
            max_running=spec.max_running,
            max_running_knob=spec.max_running_knob,
            peak_active=self.peak_active,
            mean_active=self.active_integral / duration,
            step_token_budget=spec.step_token_budget,
            step_token_budget_knob=spec.step_token_budget_knob,
            kv_capacity_tokens=spec.kv_capacity_tokens,
            kv_capacity_knob=spec.kv_capacity_knob,
            peak_kv_used_tokens=self.peak_kv,
            mean_kv_used_tokens=self.kv_integral / duration,
            kv_concurrency_estimate=spec.kv_capacity_tokens / max(mean_hold, 1.0),
            busy_fraction=min(1.0, self.busy_time / duration),
            n_preemptions=self.n_preempt,
            n_steps=self.n_steps,
            decode_stall_s=self.decode_stall_s,
            decode_steps=self.decode_steps,
            eager_decode_steps=self.eager_steps,
            eager_step_floor_s=self.eager_floor_s if self.graph_cap is not None else 0.0,
            kv_overflow_tokens=max(0.0, self.peak_kv - spec.kv_capacity_tokens)
            if spec.admission is Admission.UNCHECKED else 0.0,
        )
        return SimulationResult(
            engine=spec.engine,
            records=records,
            summary=summary,
            timeseries=downsample(self.ts_t, self.ts_q, self.ts_a, self.ts_kv, TIMESERIES_POINTS),
            diagnostics=diagnostics,
        )


def _distribution(values: list[float]) -> Distribution | None:
    if not values:
        return None
    arr = np.asarray(values, dtype=float)
    p50, p90, p99 = np.percentile(arr, [50, 90, 99])
    return Distribution(
        count=len(values), mean=float(arr.mean()), p50=float(p50), p90=float(p90), p99=float(p99), max=float(arr.max())
    )


def summarize(records: list[RequestRecord], slo: Slo, n_preemptions: int = 0) -> Summary:
    """Latency distributions (seconds), throughput and goodput (requests per second) of a run's records."""
    finished = [r for r in records if r.status is RequestStatus.FINISHED]
    start = min((r.arrival_s for r in records), default=0.0)
    stop = max((r.end_s for r in records), default=0.0)
    duration = max(stop - start, 0.0)
    good = 0
    for r in finished:
        itl = r.itl_s
        if r.ttft_s is not None and r.ttft_s <= slo.ttft_s and (itl is None or itl <= slo.itl_s):
            good += 1
    per_s = 1.0 / duration if duration > 0 else 0.0
    return Summary(
        n_requests=len(records),
        n_finished=len(finished),
        n_rejected=sum(1 for r in records if r.status is RequestStatus.REJECTED),
        n_cancelled=sum(1 for r in records if r.status is RequestStatus.CANCELLED),
        n_preemptions=n_preemptions,
        duration_s=duration,
        throughput_rps=len(finished) * per_s,
        output_tokens_per_s=sum(r.generated_tokens for r in finished) * per_s,
        goodput_rps=good * per_s,
        slo=slo,
        queue=_distribution([r.queue_s for r in records if r.queue_s is not None]),
        ttft=_distribution([r.ttft_s for r in records if r.ttft_s is not None]),
        itl=_distribution([r.itl_s for r in finished if r.itl_s is not None]),
        e2e=_distribution([r.e2e_s for r in finished if r.e2e_s is not None]),  # every finished one has one
    )


def downsample(t: list[float], queued: list[int], active: list[int], kv: list[float], points: int) -> TimeSeries:
    """Keep at most `points` samples, each the maximum of its bucket so peaks survive; the final
    sample is kept as it is (the state the run ended in)."""
    if len(t) <= points:
        return TimeSeries(list(t), list(queued), list(active), list(kv))
    body = len(t) - 1
    edges = np.linspace(0, body, points).astype(int)[:-1]
    return TimeSeries(
        t_s=[*np.asarray(t[:body])[edges].tolist(), t[-1]],
        queued=[*np.maximum.reduceat(np.asarray(queued[:body]), edges).tolist(), queued[-1]],
        active=[*np.maximum.reduceat(np.asarray(active[:body]), edges).tolist(), active[-1]],
        kv_used_tokens=[*np.maximum.reduceat(np.asarray(kv[:body], dtype=float), edges).tolist(), kv[-1]],
    )
