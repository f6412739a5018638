"""Headless Chromium for tests: find it, dump a page's DOM, take a screenshot, read the PNG.

Reusable by any test: ``find_chromium()`` returns None when no browser is installed
(``scripts/setup.sh --test`` installs Debian's ``chromium``), so callers can skip.
"""

from __future__ import annotations

import os
import shutil
import signal
import struct
import subprocess
import zlib
from pathlib import Path

CANDIDATES = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable", "chrome")
FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-dev-shm-usage",
    "--hide-scrollbars",
]


def find_chromium() -> str | None:
    override = os.environ.get("STORBENCH_CHROMIUM")
    if override:
        return override if Path(override).exists() else None
    for name in CANDIDATES:
        path = shutil.which(name)
        if path:
            return path
    return None


def run_chromium(args: list[str], workdir: Path, timeout: float = 120) -> subprocess.CompletedProcess:
    """Chromium with a throw-away profile under ``workdir``; its whole process group is killed on timeout."""
    binary = find_chromium()
    if binary is None:
        raise FileNotFoundError("no chromium binary found (install Debian's chromium: scripts/setup.sh --test)")
    profile = Path(workdir) / "chromium-profile"
    profile.mkdir(parents=True, exist_ok=True)
    proc = subprocess.Popen(
        [binary, *FLAGS, f"--user-data-dir={profile}", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        out, err = proc.communicate()
        raise TimeoutError(f"chromium did not finish in {timeout}s: {err[-2000:]}") from None
    return subprocess.CompletedProcess(proc.args, proc.returncode, out, err)


def dump_dom(page: Path, workdir: Path) -> str:
    result = run_chromium(["--dump-dom", Path(page).resolve().as_uri()], workdir)
    if result.returncode != 0 or "<html" not in result.stdout:
        raise RuntimeError(f"chromium --dump-dom failed ({result.returncode}): {result.stderr[-2000:]}")
    return result.stdout


def screenshot(page: Path, png: Path, workdir: Path, size: tuple[int, int] = (1280, 2000)) -> Path:
    result = run_chromium(
        [f"--screenshot={png}", f"--window-size={size[0]},{size[1]}", Path(page).resolve().as_uri()], workdir
    )
    if not Path(png).exists():
        raise RuntimeError(f"chromium wrote no screenshot ({result.returncode}): {result.stderr[-2000:]}")
    return Path(png)


def read_png(path: Path, max_rows: int | None = None) -> tuple[int, int, int, list[bytes]]:
    """(width, height, channels, decoded rows of pixel bytes) of an 8-bit RGB/RGBA/grey PNG, without Pillow.

    Only the first ``max_rows`` rows are unfiltered (each row depends only on the rows above it).
    """
    data = Path(path).read_bytes()
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        raise ValueError(f"{path}: not a PNG")
    pos, idat, header = 8, [], None
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos : pos + 8])
        chunk = data[pos + 8 : pos + 8 + length]
        if kind == b"IHDR":
            header = struct.unpack(">IIBBBBB", chunk)
        elif kind == b"IDAT":
            idat.append(chunk)
        elif kind == b"IEND":
            break
        pos += 12 + length
    if header is None:
        raise ValueError(f"{path}: no IHDR chunk")
    width, height, depth, color, _, _, interlace = header
    channels = {0: 1, 2: 3, 4: 2, 6: 4}.get(color)
    if depth != 8 or channels is None or interlace:
        raise ValueError(f"{path}: unsupported PNG (depth {depth}, colour type {color}, interlace {interlace})")
    raw = zlib.decompress(b"".join(idat))
    stride, bpp = width * channels, channels
    rows, previous = [], bytearray(stride)
    for y in range(min(height, max_rows or height)):
        kind = raw[y * (stride + 1)]
        line = bytearray(raw[y * (stride + 1) + 1 : (y + 1) * (stride + 1)])
        if kind == 1:
            for i in range(bpp, stride):
                line[i] = (line[i] + line[i - bpp]) & 0xFF
        elif kind == 2:
            line = bytearray((a + b) & 0xFF for a, b in zip(line, previous))
        elif kind == 3:
            for i in range(stride):
                left = line[i - bpp] if i >= bpp else 0
                line[i] = (line[i] + ((left + previous[i]) >> 1)) & 0xFF
        elif kind == 4:
            for i in range(stride):
                a = line[i - bpp] if i >= bpp else 0
                b, c = previous[i], previous[i - bpp] if i >= bpp else 0
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                pred = a if pa <= pb and pa <= pc else b if pb <= pc else c
                line[i] = (line[i] + pred) & 0xFF
        rows.append(bytes(line))
        previous = line
    return width, height, channels, rows


def distinct_colors(rows: list[bytes], channels: int, step: int = 1) -> int:
    seen = set()
    for row in rows[::step]:
        for i in range(0, len(row) - channels + 1, channels):
            seen.add(row[i : i + channels])
    return len(seen)
