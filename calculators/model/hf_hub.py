"""Fetch a model's config.json from the Hugging Face hub (or the mirror HF_ENDPOINT names) by repo id.

HF_ENDPOINT and HF_TOKEN are read when the fetch runs (not when the module is imported), so a page
or test can point at a mirror. Error messages never contain the token.
"""

from __future__ import annotations

import json
import os
import re
import threading
from pathlib import Path
from typing import Any

from calculators.errors import ServewiseInputError, json_problem
from calculators.i18n import _
from calculators.model.architecture import ModelArchitecture
from calculators.model.embedding_info import EmbeddingPooling, embedding_pooling_from_files
from calculators.model.hf_config import architecture_from_config, load_config_text
from calculators.units import compact

DEFAULT_TIMEOUT_S = 10.0
_REPO_ID = re.compile(r"^[A-Za-z0-9][\w.-]*/[\w.-]+$")


class HubFetchError(ServewiseInputError):
    """config.json could not be fetched; the message says why and what to do (never shows the token)."""


def _endpoint() -> str:
    """The hub address in use: HF_ENDPOINT if set, else huggingface.co."""
    return (os.environ.get("HF_ENDPOINT") or "https://huggingface.co").rstrip("/")


class HubFileMissing(HubFetchError):
    """The repository exists but has no file of that name."""


def fetch_config(
    repo_id: str, revision: str | None = None, timeout_s: float = DEFAULT_TIMEOUT_S, cache_dir: str | Path | None = None
) -> dict[str, Any]:
    """Download (or reuse from the hub cache) `repo_id`'s config.json and parse it into a dict.

    `timeout_s` bounds the whole fetch (seconds): huggingface_hub alone retries a timed-out metadata
    request with a 60 s timeout, so the download runs in a worker thread that is abandoned when the
    deadline passes. `cache_dir` defaults to the huggingface_hub cache (HF_HUB_CACHE / HF_HOME).
    """
    try:
        text = _download_text(repo_id, "config.json", revision, timeout_s, cache_dir)
    except HubFileMissing as missing:
        raise HubFileMissing(_("{missing} (a GGUF-only repo? give the .gguf file instead)").format(
                               missing=missing)) from None
    return load_config_text(text, source=f"{repo_id}/config.json")


def fetch_chat_template(
    repo_id: str, revision: str | None = None, timeout_s: float = DEFAULT_TIMEOUT_S, cache_dir: str | Path | None = None
) -> str:
    """The default chat template in `repo_id`'s tokenizer_config.json (or its chat_template.jinja)."""
    from calculators.checks.chat_template import chat_template_from_tokenizer_config

    try:
        text = _download_text(repo_id, "tokenizer_config.json", revision, timeout_s, cache_dir)
    except HubFileMissing:
        text = None
    if text is not None and '"chat_template"' in text:
        return chat_template_from_tokenizer_config(text, f"{repo_id}/tokenizer_config.json")
    try:
        return _download_text(repo_id, "chat_template.jinja", revision, timeout_s, cache_dir)
    except HubFileMissing:
        raise HubFileMissing(_("{repo_id} has no chat template (neither in tokenizer_config.json nor "
                               "chat_template.jinja)").format(repo_id=repo_id)) from None


def fetch_embedding_pooling(
    repo_id: str, revision: str | None = None, timeout_s: float = DEFAULT_TIMEOUT_S, cache_dir: str | Path | None = None
) -> EmbeddingPooling | None:
    """Pooling, output dimension and normalisation from a sentence-transformers repo; None if it has no modules.json."""
    try:
        modules = json.loads(_download_text(repo_id, "modules.json", revision, timeout_s, cache_dir))
    except HubFileMissing:
        return None
    except json.JSONDecodeError as exc:
        raise HubFetchError(_("{repo_id}/modules.json is not valid JSON ({msg})").format(
                              repo_id=repo_id, msg=json_problem(exc.msg))) from None
    pooling_dirs = [m.get("path") for m in modules if str(m.get("type", "")).endswith(".Pooling")]
    if not pooling_dirs:
        return None
    filename = f"{pooling_dirs[0]}/config.json"
    pooling = load_config_text(
        _download_text(repo_id, filename, revision, timeout_s, cache_dir), f"{repo_id}/{filename}"
    )
    return embedding_pooling_from_files(pooling, modules)


def _download_text(
    repo_id: str, filename: str, revision: str | None, timeout_s: float, cache_dir: str | Path | None
) -> str:
    """One file of a hub repo as text, with every failure turned into a HubFetchError that names the fix."""
    from huggingface_hub import hf_hub_download
    from huggingface_hub.errors import (
        EntryNotFoundError,
        GatedRepoError,
        HfHubHTTPError,
        LocalEntryNotFoundError,
        OfflineModeIsEnabled,
        RepositoryNotFoundError,
        RevisionNotFoundError,
    )

    if not _REPO_ID.match(repo_id or ""):
        raise HubFetchError(_("'{repo_id}' is not a Hugging Face repo id; write it as owner/name, e.g. "
                              "Qwen/Qwen3-8B").format(repo_id=repo_id))
    endpoint = _endpoint()
    where = f"{repo_id} on {endpoint}"
    outcome: dict[str, Any] = {}

    def download() -> None:
        try:
            outcome["path"] = hf_hub_download(
                repo_id,
                filename,
                revision=revision,
                endpoint=endpoint,
                token=os.environ.get("HF_TOKEN") or None,
                etag_timeout=timeout_s,
                cache_dir=cache_dir,
            )
        except BaseException as exc:  # handed to the caller's thread below
            outcome["error"] = exc

    # A daemon thread: abandoned at the deadline, it cannot keep the process alive while it retries.
    worker = threading.Thread(target=download, name="servewise-hub-fetch", daemon=True)
    worker.start()
    worker.join(timeout_s)
    try:
        if worker.is_alive():
            raise HubFetchError(
                _("{where} did not answer successfully within {timeout_s}\u00a0s (timed out, refused or kept "
                  "failing); check the network or HF_ENDPOINT").format(where=where, timeout_s=compact(timeout_s, 3))
            )
        if "error" in outcome:
            raise outcome.pop("error")
        return Path(outcome["path"]).read_text(encoding="utf-8")
    except GatedRepoError:
        raise HubFetchError(
            _("{where} is gated: accept its licence on the model page, then set HF_TOKEN to a token of that "
              "account").format(where=where)
        ) from None
    except RepositoryNotFoundError as exc:
        status = getattr(exc.response, "status_code", None)
        hint = " " + _("(or it is private/gated and no valid HF_TOKEN was sent)") if status == 401 else ""
        raise HubFetchError(_("{where} was not found{hint}; check the repo id").format(
                              where=where, hint=hint)) from None
    except RevisionNotFoundError:
        raise HubFetchError(_("{where} has no revision '{revision}'").format(where=where, revision=revision)) from None
    except LocalEntryNotFoundError as exc:
        raise HubFetchError(_unreachable_message(exc, where, filename, timeout_s, OfflineModeIsEnabled)) from None
    except EntryNotFoundError:
        raise HubFileMissing(_("{where} has no {filename}").format(where=where, filename=filename)) from None
    except HfHubHTTPError as exc:
        status = getattr(exc.response, "status_code", "?")
        if status == 403:
            raise HubFetchError(
                _("{where} refused access (HTTP 403): the token in HF_TOKEN lacks permission for it").format(
                  where=where)
            ) from None
        raise HubFetchError(_("{where} answered HTTP {status}; try again later").format(
                              where=where, status=status)) from None
    except HubFetchError:
        raise
    except OSError as exc:
        raise HubFetchError(_("could not store {filename} of {where} in the cache: {value}").format(
                              filename=filename, where=where, value=exc.strerror or exc)) from None
    except Exception as exc:  # transport errors of huggingface_hub's HTTP client surface here unwrapped
        raise HubFetchError(
            _("fetching {filename} of {where} failed ({name}); check the network or HF_ENDPOINT").format(
              filename=filename, where=where, name=type(exc).__name__)
        ) from None


def _unreachable_message(exc: BaseException, where: str, filename: str, timeout_s: float, offline_error: type) -> str:
    """Say whether the hub timed out, was unreachable, or offline mode is on."""
    cause = exc.__cause__
    if isinstance(cause, offline_error):
        return _("offline mode is on (HF_HUB_OFFLINE) and {filename} of {where} is not in the local cache").format(
                 filename=filename, where=where)
    if cause is not None and "Timeout" in type(cause).__name__:
        return _("{where} did not answer within {timeout_s}\u00a0s; check the network or HF_ENDPOINT").format(
                 where=where, timeout_s=compact(timeout_s, 3))
    return _("could not reach {where} and {filename} is not in the local cache; check the network or "
             "HF_ENDPOINT").format(where=where, filename=filename)


def architecture_from_hub(
    repo_id: str, revision: str | None = None, timeout_s: float = DEFAULT_TIMEOUT_S, cache_dir: str | Path | None = None
) -> ModelArchitecture:
    """The architecture of `repo_id` from its config.json on the hub (see `fetch_config`)."""
    config = fetch_config(repo_id, revision=revision, timeout_s=timeout_s, cache_dir=cache_dir)
    return architecture_from_config(config, name=repo_id, source=f"hf:{repo_id}" + (f"@{revision}" if revision else ""))
