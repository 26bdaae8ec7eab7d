"""One JSON document per memory plan: the memory page's export and `memory --json` write the same schema."""

from __future__ import annotations

import json

from calculators.hardware.machine import Machine
from calculators.memory.capacity import capacity
from calculators.memory.command import plan_from_command
from calculators.memory.compare import ComparisonInputs, Workload, compare_engines
from calculators.units import GIB
from knowledge.loader import load_knowledge
from reports.memory_json import cli_memory_document
from reports.memory_readouts import export_data, export_json
from tests.support.models import gqa

#: The fields `memory --json` printed before the page and the CLI shared one document (besides the plan's own).
CLI_FIELDS = {"model", "model_source", "weights_basis", "settings", "unknown_flags", "ignored_settings", "gpu",
              "n_gpus", "notes"}


def _cli_document():
    result = plan_from_command("vllm serve meta-llama/Llama-3.1-8B --max-model-len 8192", load_knowledge(),
                               catalog_id="llama-3.1-8b", gpu_id="h100-sxm-80gb")
    return result, json.loads(json.dumps(cli_memory_document(result), default=str))


def _page_document():
    inputs = ComparisonInputs(gqa(32, 8, 128, 32, 131_072), Machine(device_memory_bytes=80 * GIB), 16 * GIB)
    workload = Workload(8192, 4)
    rows = compare_engines(inputs, workload)
    caps = [capacity(inputs, row.engine, workload) for row in rows]
    return json.loads(export_json(export_data("m", "1 x H100", workload, 16 * GIB, rows, caps, {})))


def test_the_cli_keeps_every_field_it_printed():
    result, document = _cli_document()
    assert set(result.plan.model_dump(mode="json")) | CLI_FIELDS <= set(document)
    assert document["weights_bytes"] == result.plan.weights_bytes  # the plan's, per device, as before
    assert document["model_weights_bytes"] >= document["weights_bytes"] > 0  # the whole model vs one device


def test_page_export_and_cli_share_the_document_schema():
    _, cli = _cli_document()
    page = _page_document()
    assert set(page) <= set(cli)
    assert cli["servewise"] == page["servewise"]
    assert {tuple(sorted(entry)) for entry in page["engines"]} == {tuple(sorted(cli["engines"][0]))}
    assert cli["engines"][0]["plan"] == {k: cli[k] for k in cli["engines"][0]["plan"]}
