"""`python tests/support/sglang_conformance/serve.py ARGS`: sglang.launch_server, printing the free memory it reads.

On the CPU device SGLang sizes its pool from `get_free_cpu_memory()` (psutil's available memory, capped by
the cgroup's limit; sglang/srt/utils/common.py at 0.5.23), but prints it rounded to 2 decimals. This wrapper
prints each exact reading (bytes) with the functions that asked, so a recording can feed the plan the very
figures SGLang used, and the memory capacity (MiB) that sets its automatic chunk size on CPU. It runs again in
each spawned SGLang process (spawn re-imports the main module).
"""

import sys
import traceback

import sglang.srt.utils.common as _common

_read_free = _common.get_free_cpu_memory


def _logged_free_cpu_memory() -> int:
    value = _read_free()
    callers = ">".join(f"{frame.name}:{frame.lineno}" for frame in traceback.extract_stack(limit=7)[:-1])
    print(f"SERVEWISE free_cpu_memory_bytes={value} callers={callers}", flush=True)
    return value


_common.get_free_cpu_memory = _logged_free_cpu_memory
_read_capacity = _common.get_cpu_memory_capacity


def _logged_cpu_memory_capacity():
    value = _read_capacity()
    print(f"SERVEWISE cpu_memory_capacity_mib={value!r}", flush=True)
    return value


_common.get_cpu_memory_capacity = _logged_cpu_memory_capacity

if __name__ == "__main__":
    import os

    from sglang.launch_server import run_server
    from sglang.srt.plugins import load_plugins
    from sglang.srt.server_args import prepare_server_args
    from sglang.srt.utils import kill_process_tree

    load_plugins()
    try:  # what `python -m sglang.launch_server` runs, with this module staying __main__
        run_server(prepare_server_args(sys.argv[1:]))
    finally:
        kill_process_tree(os.getpid(), include_parent=False)
