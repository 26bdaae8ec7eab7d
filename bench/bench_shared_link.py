"""Time from opening a shared link to its main result being visible in headless Chromium, against a bare page.

Serves the app as `make run` does (ui.serve) and, in the same run, a one-line Streamlit page from a temporary
directory. Each sample opens the link in a fresh browser context (nothing cached, as for someone clicking a
link they were sent) and stops the clock when the result a user came for is on screen. Every page app.py
lists is opened in its typical state (bench/typical_states.py: the link and its main-result element); a page
without one ends the run with a non-zero exit. Prints the median of each and their ratio against the target
(<= 1.5x the bare page). `python -m bench.bench_shared_link [page.py ...]` measures only the pages named.

Paired A/B: `python -m bench.bench_shared_link --against DIR [--rounds N] [page.py ...]` serves this checkout (A)
and the checkout at DIR (B, say /work/main), each with ui.serve, next to the same bare page, and opens every link on
A and on B in the same rounds (which of the two goes first alternates by round). It prints each page's median ratio
to the bare page on A and on B, and the median of the per-round A/B ratios: the figure to judge a change by on a
shared machine, since a slow spell hits both sides of it alike.
"""

from __future__ import annotations

import importlib.util
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

from bench.served_app import REPO, chromium, served
from bench.typical_states import (
    TYPICAL_STATES,
    TypicalState,
    link,
    missing_pages,
    page_file_names,
    unknown_page_names,
)
from tests.support.page_discovery import app_pages

TARGET_RATIO = 1.5
SAMPLES = 11
BARE_PAGE = 'import streamlit as st\n\nst.write("hello from a bare page")\n'


#: How long one wait for the main result lasts before it is asked again. Playwright's `locator.wait_for` polls
#: at 0, 20, 70, 170 and 270 ms and then every 500 ms, so a single long wait rounds every time past ~0.3 s up
#: to its next poll (a result drawn at 0.9 s was timed at ~1.3 s, and two pages 0.1 s apart could differ by
#: 0.5 s). A wait of 100 ms keeps only the 20 ms step of that back-off, so repeating it polls every ~20 ms.
POLL_SLICE_MS = 100
RESULT_TIMEOUT_S = 60


def time_to_visible(browser, url: str, selector: str, text: str) -> float:
    """Seconds from navigation start until `selector` is visible (and contains `text`), in a fresh context.

    Polled every ~20 ms (POLL_SLICE_MS), so the figure is within a few tens of ms of when the result showed.
    """
    from playwright.sync_api import TimeoutError as PlaywrightTimeoutError

    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    page = context.new_page()
    try:
        start = time.perf_counter()
        page.goto(url, wait_until="commit")
        target = page.locator(selector)
        result = (target.filter(has_text=text) if text else target).first
        while True:
            try:
                result.wait_for(state="visible", timeout=POLL_SLICE_MS)
                return time.perf_counter() - start
            except PlaywrightTimeoutError:
                if time.perf_counter() - start > RESULT_TIMEOUT_S:
                    raise
    finally:
        context.close()


def _quartiles_ms(values: list[float]) -> str:
    """The first and third quartiles of `values` (seconds), in milliseconds."""
    q1, _median, q3 = statistics.quantiles(values, n=4)
    return f"{q1 * 1000:.0f}-{q3 * 1000:.0f} ms"


def _typical_states_of(checkout: Path) -> dict[str, TypicalState]:
    """The typical states another checkout's bench/typical_states.py defines (its main results may differ)."""
    spec = importlib.util.spec_from_file_location("typical_states_against", checkout / "bench" / "typical_states.py")
    if spec is None or spec.loader is None:
        raise FileNotFoundError(checkout / "bench" / "typical_states.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclass looks its own module up while it is defined
    spec.loader.exec_module(module)
    return module.TYPICAL_STATES


def _paired(browser, links, b_states: dict[str, TypicalState], app_urls: tuple[str, str], bare_url: str,
            rounds: int) -> None:
    """Open every link on A and on B and the bare page in `rounds` interleaved rounds; print ratios and A/B.

    Each side waits for its own main result (B's from B's bench/typical_states.py), at the same link.
    """
    bare: list[float] = []
    samples: dict[str, tuple[list[float], list[float]]] = {name: ([], []) for name, _, _ in links}
    load_start = os.getloadavg()[0]
    for round_index in range(rounds):
        bare.append(time_to_visible(browser, bare_url, '[data-testid="stMarkdown"]', "hello"))
        for name, path, state in links:
            sides = (0, 1) if round_index % 2 == 0 else (1, 0)  # A first in even rounds, B first in odd ones
            for side in sides:
                result = state if side == 0 else b_states[name]
                samples[name][side].append(
                    time_to_visible(browser, app_urls[side] + path, result.main_result, result.main_text))
    bare_s = statistics.median(bare)
    print(f"shared link -> main result, paired: A = this checkout, B = --against; {rounds} interleaved rounds; "
          f"load average {load_start:.1f} at the start, {os.getloadavg()[0]:.1f} at the end")
    print(f"  {'bare one-line page':<18} {bare_s * 1000:7.0f} ms   ({_quartiles_ms(bare)})")
    for name, _path, _state in links:
        a, b = samples[name]
        per_round = statistics.median(x / y for x, y in zip(a, b, strict=True))
        print(f"  {name:<18} A {statistics.median(a) / bare_s:4.2f}x ({_quartiles_ms(a)})   "
              f"B {statistics.median(b) / bare_s:4.2f}x ({_quartiles_ms(b)})   per-round A/B median {per_round:4.2f}")


def main(argv: list[str]) -> int:
    """Print the median time to the main result for each page's shared link, the bare page's, and their ratios."""
    missing = missing_pages()
    if missing:
        print(f"no typical state in bench/typical_states.py for: {', '.join(missing)}", file=sys.stderr)
        return 1
    against: Path | None = None
    rounds = SAMPLES
    names: list[str] = []
    arguments = iter(argv)
    for argument in arguments:
        if argument in ("--against", "--rounds"):
            value = next(arguments, None)
            if value is None:
                print(f"{argument} needs a value", file=sys.stderr)
                return 2
            if argument == "--against":
                against = Path(value)
                if not (against / "app.py").is_file():
                    print(f"--against {value}: no app.py there", file=sys.stderr)
                    return 2
            elif not value.isdigit() or int(value) < 1:
                print(f"--rounds {value}: give a whole number of rounds, 1 or more", file=sys.stderr)
                return 2
            else:
                rounds = int(value)
        elif argument in ("-h", "--help"):
            print(__doc__)
            return 0
        elif argument.startswith("-"):
            print(f"unknown option {argument}; give page names, --rounds N or --against DIR", file=sys.stderr)
            return 2
        else:
            names.append(argument)
    if message := unknown_page_names(names):
        print(message, file=sys.stderr)
        return 2
    names = page_file_names(names)
    links = [(page.name, link(page.name, TYPICAL_STATES[page.name]), TYPICAL_STATES[page.name])
             for page in app_pages() if not names or page.name in names]
    if against is not None:
        with tempfile.TemporaryDirectory() as bare_dir, chromium() as browser:
            (Path(bare_dir) / "bare.py").write_text(BARE_PAGE)
            python = sys.executable
            with served([python, "-m", "ui.serve"], REPO) as (a_url, _, _), served(
                [python, "-m", "ui.serve"], against
            ) as (b_url, _, _), served([python, "-m", "streamlit", "run", "bare.py"], Path(bare_dir)) as (
                bare_url, _, _
            ):
                b_states = _typical_states_of(against)
                time_to_visible(browser, bare_url, '[data-testid="stMarkdown"]', "hello")  # warm-up, as below
                for name, path, state in links:
                    for url, result in ((a_url, state), (b_url, b_states[name])):
                        time_to_visible(browser, url + path, result.main_result, result.main_text)
                _paired(browser, links, b_states, (a_url, b_url), bare_url, rounds)
        return 0
    with tempfile.TemporaryDirectory() as bare_dir, chromium() as browser:
        (Path(bare_dir) / "bare.py").write_text(BARE_PAGE)
        python = sys.executable
        with served([python, "-m", "ui.serve"], REPO) as (app_url, _, _), served(
            [python, "-m", "streamlit", "run", "bare.py"], Path(bare_dir)
        ) as (bare_url, _, _):
            # One warm-up each: the first run of a server imports and loads its caches once for everyone.
            time_to_visible(browser, bare_url, '[data-testid="stMarkdown"]', "hello")
            for _, path, state in links:
                time_to_visible(browser, app_url + path, state.main_result, state.main_text)
            # Rounds interleave the bare page with every link, so a slow spell of the machine hits both sides of a
            # ratio alike (timing all bare samples first let load drift between them and the pages).
            bare: list[float] = []
            samples: dict[str, list[float]] = {name: [] for name, _, _ in links}
            for _round in range(rounds):
                bare.append(time_to_visible(browser, bare_url, '[data-testid="stMarkdown"]', "hello"))
                for name, path, state in links:
                    samples[name].append(time_to_visible(browser, app_url + path, state.main_result, state.main_text))
            bare_s = statistics.median(bare)
            print(f"shared link -> main result visible (headless Chromium, fresh context, median of {rounds} "
                  f"interleaved rounds; quartiles in brackets); load average {os.getloadavg()[0]:.1f}")
            print(f"  {'bare one-line page':<18} {bare_s * 1000:7.0f} ms   ({_quartiles_ms(bare)})")
            over = []
            for name, path, _state in links:
                app_s = statistics.median(samples[name])
                ratio = app_s / bare_s
                verdict = "ok" if ratio <= TARGET_RATIO else "OVER TARGET"
                if ratio > TARGET_RATIO:
                    over.append(name)
                print(f"  {name:<18} {app_s * 1000:7.0f} ms   ratio {ratio:4.2f} (target <= {TARGET_RATIO})   "
                      f"{verdict:<11}  ({_quartiles_ms(samples[name])})   {path[:60]}")
            print("every link within target" if not over else f"over target: {', '.join(over)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
