"""Concurrency and queueing simulator: how each engine's scheduler turns a workload into latencies.

`run.simulate()` runs one engine policy on one workload with a roofline step-time estimate and returns
per-request records, latency distributions, time series and binding-constraint diagnostics.
Every figure is an estimate, not a measurement.
"""
