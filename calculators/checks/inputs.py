"""The checks' model inputs from files a user has: a chat template file, a sentence-transformers directory."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from calculators.checks.chat_template import read_template_file
from calculators.checks.embeddings import EmbeddingModel, embedding_model_from_files
from calculators.checks.tool_calls import ToolModel, tool_model_from_template
from calculators.errors import ServewiseInputError, json_problem
from calculators.i18n import _
from knowledge.tool_calling import ToolCallingFile


def tool_model_from_file(path: str | Path, kb: ToolCallingFile) -> ToolModel:
    """A model known by its chat template: a GGUF (tokenizer.chat_template), tokenizer_config.json or a text file."""
    file = Path(path)
    if file.suffix == ".gguf":
        from calculators.model.gguf import read_gguf_header

        template = read_gguf_header(file).chat_template
        if template is None:
            raise ServewiseInputError(_("{name} carries no tokenizer.chat_template; give the model's "
                                        "template file").format(name=file.name))
        return tool_model_from_template(template, kb, file.name, f"{file} (tokenizer.chat_template)")
    return tool_model_from_template(read_template_file(file), kb, file.name, str(file))


def tool_model_from_hub(repo_id: str, kb: ToolCallingFile) -> ToolModel:
    """A hub model's chat template from its tokenizer_config.json (HF_ENDPOINT, HF_TOKEN as for config.json)."""
    from calculators.model.hf_hub import fetch_chat_template

    return tool_model_from_template(fetch_chat_template(repo_id), kb, repo_id, f"hf:{repo_id}/tokenizer_config.json")


def _json_file(path: Path, required: bool = False) -> Any:
    if not path.is_file():
        if required:
            raise ServewiseInputError(_("{path} does not exist").format(path=path))
        return None
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as exc:
        raise ServewiseInputError(_("{path} cannot be read ({exc})").format(path=path, exc=exc)) from None
    except json.JSONDecodeError as exc:
        raise ServewiseInputError(_("{path} is not valid JSON ({msg} at line {lineno})").format(
                                    path=path, msg=json_problem(exc.msg), lineno=exc.lineno)) from None


def embedding_model_from_directory(path: str | Path) -> EmbeddingModel:
    """The reference pipeline from a sentence-transformers model directory (modules.json and the files it names)."""
    root = Path(path)
    if not root.is_dir():
        raise ServewiseInputError(_("{root} is not a directory; give the model's sentence-transformers "
                                    "folder").format(root=root))
    modules = _json_file(root / "modules.json")
    if modules is not None and not isinstance(modules, list):
        raise ServewiseInputError(_("{root} must hold a list of modules").format(root=root / 'modules.json'))
    entries = [m for m in modules or [] if isinstance(m, dict)]
    pooling_dir = next((m.get("path") for m in entries if str(m.get("type", "")).endswith(".Pooling")), "1_Pooling")
    dense_dirs = [m.get("path") for m in entries if str(m.get("type", "")).endswith(".Dense")]
    dense = _json_file(root / str(dense_dirs[-1]) / "config.json") if dense_dirs else None
    return embedding_model_from_files(
        root.name,
        str(root),
        _json_file(root / str(pooling_dir) / "config.json", required=True),
        entries if modules is not None else None,
        _json_file(root / "config.json"),
        dense,
        _json_file(root / "sentence_bert_config.json"),
    )
