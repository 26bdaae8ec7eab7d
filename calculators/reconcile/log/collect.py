"""The accumulator every engine parser writes into; it turns printed numbers into `Figure`s."""

from __future__ import annotations

import math
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

from calculators.reconcile.log.clean import LogLine
from calculators.reconcile.log.figures import Figure, FigureUnit, LogGeometry, LogNote, SettingValue
from calculators.reconcile.log.precision import printed_to_units


@dataclass
class Collector:
    """Mutable scratchpad for one parse; `ParsedLog` is built from it once every line was read."""

    figures: list[Figure] = field(default_factory=list)
    settings: dict[str, SettingValue] = field(default_factory=dict)
    runner_settings: dict[str, SettingValue] = field(default_factory=dict)
    geometry: dict[str, object] = field(default_factory=dict)
    devices: list[str] = field(default_factory=list)
    notes: list[LogNote] = field(default_factory=list)
    version: str | None = None
    logged_at: str | None = None  # the first date the log's own time stamps give (YYYY-MM-DD)
    refusal: str | None = None
    #: per line number: the setting, runner-setting and geometry keys (and 'version') a line gave
    produced: dict[int, list[str]] = field(default_factory=dict)

    @contextmanager
    def reading(self, line: LogLine) -> Iterator[None]:
        """Credit to `line` whatever settings, geometry or version the reader adds while inside this block.

        Figures carry their line number themselves; the rest of what a line states does not.
        """
        before = (dict(self.settings), dict(self.runner_settings), dict(self.geometry), self.version)
        try:
            yield
        finally:
            settings, runner, geometry, version = before
            gave = self.produced.setdefault(line.number, [])
            gave += [f"setting:{k}" for k, v in self.settings.items() if settings.get(k, _MISSING) != v]
            gave += [f"runner:{k}" for k, v in self.runner_settings.items() if runner.get(k, _MISSING) != v]
            gave += [f"geometry:{k}" for k, v in self.geometry.items() if geometry.get(k, _MISSING) != v]
            if self.version != version:
                gave.append("version")

    def add(
        self,
        name: str,
        printed: str,
        line: LogLine,
        *,
        unit: FigureUnit = "bytes",
        printed_unit: str = "",
        unit_size: int | None = 1,
        device: str | None = None,
        cache: str | None = None,
        basis: str = "",
    ) -> Figure | None:
        """Record one printed number; returns None (and records nothing) when it is not a number."""
        printed = printed.strip()
        try:
            if unit_size is None:
                value: int | float = float(printed.replace(",", ""))
            else:
                value = printed_to_units(printed, unit_size)
        except (ValueError, ArithmeticError):
            return None
        if not math.isfinite(value):  # NaN/inf never come from an engine
            return None
        figure = Figure(
            name=name,
            value=value,
            unit=unit,
            printed=printed,
            printed_unit=printed_unit,
            unit_size=unit_size,
            line=line.number,
            device=device,
            cache=cache,
            basis=basis,
        )
        self.figures.append(figure)
        if device and unit == "bytes" and device not in self.devices:
            self.devices.append(device)
        return figure

    def count(self, name: str, printed: str, line: LogLine, unit: FigureUnit, **kwargs: object) -> Figure | None:
        """Record a whole-number count (tokens, blocks, layers, ...)."""
        return self.add(name, printed, line, unit=unit, unit_size=1, **kwargs)  # type: ignore[arg-type]

    def geo(self, key: str, value: object, *, overwrite: bool = True) -> None:
        """Set one geometry field (LogGeometry name)."""
        if value is None:
            return
        if overwrite or key not in self.geometry:
            self.geometry[key] = value

    def note(self, code: str, message: str, line: int | None = None) -> None:
        """Add a remark for the page (deduplicated by code and line)."""
        if not any(n.code == code and n.line == line for n in self.notes):
            self.notes.append(LogNote(code=code, message=message, line=line))

    def build_geometry(self) -> LogGeometry:
        """The geometry gathered so far, as a validated model (fields that fail validation are dropped)."""
        clean: dict[str, object] = {}
        for key, value in self.geometry.items():
            try:
                LogGeometry(**{key: value})
            except ValueError:
                continue
            clean[key] = value
        return LogGeometry(**clean)


_MISSING = object()


def to_int(text: str) -> int | None:
    """A printed integer ('2,042,016' -> 2042016), or None when it is not one."""
    try:
        return int(text.strip().replace(",", ""))
    except ValueError:
        return None


