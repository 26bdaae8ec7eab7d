"""Start-up log knowledge: how to capture each engine's log, and defaults that changed between releases.

Two YAML files, each fact with its source and the version it was read at:
- log_capture.yaml: the command that captures an engine's start-up log on each platform;
- version_defaults.yaml: a setting's default by engine release, for logs that state their version but
  not the setting.
"""

from __future__ import annotations

import functools
from pathlib import Path

from pydantic import Field

from knowledge.common import Frozen, Sourced
from knowledge.engines import EngineId
from knowledge.loader import load_yaml_file

KNOWLEDGE_DIR = Path(__file__).parent


class LogCapture(Sourced):
    """One way to capture an engine's start-up log."""

    engine: EngineId
    platform: str = Field(min_length=1, description="slug: linux-systemd, macos, windows, docker, terminal, ...")
    label: str = Field(min_length=1)
    command: str = Field(min_length=1, description="the command as the source gives it; <...> are placeholders")
    note: str = ""


class LogCaptureFile(Frozen):
    """Top level of log_capture.yaml."""

    captures: tuple[LogCapture, ...]


class DefaultRange(Sourced):
    """A setting's default over a range of releases (bounds inclusive, as read)."""

    since: str | None = Field(default=None, description="first release read with this default; None: also earlier")
    through: str | None = Field(default=None, description="last release read with it; None: up to today's")
    value: int | float | bool | str
    rule: str = Field(default="", description="what the value means when it is not a plain number ('auto', ...)")


class VersionDefault(Frozen):
    """The defaults one setting had across an engine's releases."""

    engine: EngineId
    setting: str = Field(min_length=1, description="servewise's setting key for this engine")
    meaning: str
    scheme: str = Field(pattern="^(semver|build)$", description="how the engine numbers releases")
    ranges: tuple[DefaultRange, ...]


class VersionDefaultsFile(Frozen):
    """Top level of version_defaults.yaml."""

    defaults: tuple[VersionDefault, ...]


@functools.lru_cache(maxsize=2)
def load_log_captures(directory: str | None = None) -> tuple[LogCapture, ...]:
    """Every capture command, in file order."""
    root = Path(directory) if directory else KNOWLEDGE_DIR
    return load_yaml_file(root / "log_capture.yaml", LogCaptureFile).captures


@functools.lru_cache(maxsize=2)
def load_version_defaults(directory: str | None = None) -> tuple[VersionDefault, ...]:
    """Every setting whose default changed between releases."""
    root = Path(directory) if directory else KNOWLEDGE_DIR
    return load_yaml_file(root / "version_defaults.yaml", VersionDefaultsFile).defaults
