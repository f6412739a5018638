"""Progress lines on stderr: one line per step, with a live elapsed-time ticker on a terminal."""

from __future__ import annotations

import sys
import threading
import time
from contextlib import contextmanager
from typing import Iterator, TextIO


class Progress:
    def __init__(self, quiet: bool = False, stream: TextIO | None = None):
        self.quiet = quiet
        self.stream = stream or sys.stderr
        self.live = not quiet and self.stream.isatty()
        self.started = time.monotonic()

    def info(self, message: str) -> None:
        if not self.quiet:
            self._write(f"[{self._clock()}] {message}\n")

    def warn(self, message: str) -> None:
        # Warnings show even with --quiet: they say what was not measured as asked.
        self._write(f"warning: {message}\n")

    @contextmanager
    def step(self, label: str) -> Iterator[dict[str, str]]:
        """A timed step; the caller may put a short result in ``outcome['text']``."""
        outcome = {"text": ""}
        start = time.monotonic()
        stop = threading.Event()
        ticker = None
        if self.live:
            ticker = threading.Thread(target=self._tick, args=(label, start, stop), daemon=True)
            ticker.start()
        status = "failed"
        try:
            yield outcome
            status = "done"
        except KeyboardInterrupt:
            status = "interrupted"
            raise
        finally:
            stop.set()
            if ticker:
                ticker.join()
                self._write("\r\033[K")
            if not self.quiet:
                extra = f"  {outcome['text']}" if outcome["text"] else ""
                self._write(f"[{self._clock()}] {label}: {status} in {time.monotonic() - start:.2f} s{extra}\n")

    def _tick(self, label: str, start: float, stop: threading.Event) -> None:
        spinner = "|/-\\"
        index = 0
        while not stop.wait(0.25):
            self._write(f"\r\033[K{spinner[index % 4]} {label} ... {time.monotonic() - start:.0f} s")
            index += 1

    def _clock(self) -> str:
        elapsed = int(time.monotonic() - self.started)
        return f"{elapsed // 60:02d}:{elapsed % 60:02d}"

    def _write(self, text: str) -> None:
        self.stream.write(text)
        self.stream.flush()
