"""One vocabulary for units: sizes in I/O syntax are binary, numbers decimal, reports decimal."""

import pytest

from storbench.errors import InputError
from storbench.units import BINARY, DECIMAL, human_bytes, parse_count, parse_size
from storbench.workloads.params import SizeParam


@pytest.mark.parametrize(
    "text,expected",
    [  # fio's syntax, as the fio engine read it before
        ("4k", 4096),
        ("1m", 1 << 20),
        ("512M", 512 << 20),
        ("1g", 1 << 30),
        ("1GiB", 1 << 30),
        ("65536", 65536),
        ("1000000000", 10**9),
        ("4kb", 4096),
        (" 2 t ", 2 << 40),
        ("1p", 1 << 50),
        ("7b", 7),
        (12, 12),
    ],
)
def test_sizes_are_binary_by_default(text, expected):
    assert parse_size(text) == expected


def test_the_base_is_a_named_choice():
    assert parse_size("4k", base=DECIMAL) == 4000
    assert parse_size("10G", base=DECIMAL) == 10**10
    assert parse_size("10G", base=BINARY) == 10 << 30


@pytest.mark.parametrize("text", ["0", "-4k", "4q", "1.5m", "", "k", "4 kk"])
def test_a_bad_size_is_one_line_naming_what_is_allowed(text):
    with pytest.raises(InputError) as error:
        parse_size(text, name="--set: bs", what="a fio size")
    message = str(error.value)
    assert message == (
        f"--set: bs={text!r} is not a fio size; use bytes or a whole number with k, m, g, t or p "
        f"(1024-based: 4k = 4096 bytes), e.g. 4k, 1m, 512m"
    )
    assert "\n" not in message


def test_fewer_prefixes_can_be_allowed():
    assert parse_size("64G", prefixes="kmg") == 64 << 30
    with pytest.raises(InputError, match=r"size='1t' is not a size; use bytes or a whole number with k, m or g "):
        parse_size("1t", prefixes="kmg")


@pytest.mark.parametrize(
    "text,expected",
    [
        ("5000", 5000),
        ("5_000", 5000),
        ("5k", 5000),
        ("1.5k", 1500),
        ("2M", 2_000_000),
        ("1e6", 1_000_000),
        ("1G", 10**9),
        ("10B", 10**10),
        ("2t", 2 * 10**12),
        ("huge", None),
        ("0", None),
        ("0.1", None),
        ("4KiB", None),
        ("1p", None),
    ],
)
def test_counts_are_decimal(text, expected):
    assert parse_count(text) == expected


@pytest.mark.parametrize(
    "value,text",
    [
        (0, "0 B"),
        (999, "999 B"),
        (1000, "1.0 kB"),
        (1 << 20, "1.0 MB"),
        (512 * 10**6, "512.0 MB"),
        (1.5e9, "1.5 GB"),
        (2e12, "2.0 TB"),
    ],
)
def test_human_bytes_are_decimal(value, text):
    assert human_bytes(value) == text


def test_size_param_keeps_text_and_names_the_parameter():
    bs = SizeParam("bs", str, "1m", "block size", what="a fio size")
    assert bs.coerce(" 4k ", "--set") == "4k"
    assert bs.coerce(65536, "--set") == "65536"
    with pytest.raises(InputError, match=r"^--set: bs='12q' is not a fio size; use bytes or a whole number"):
        bs.coerce("12q", "--set")


def test_size_param_with_a_meaning_for_empty():
    op_size = SizeParam("op_size", str, "", "bytes per write", empty="the object size")
    assert op_size.coerce("", "suite.yaml") == op_size.coerce("0", "suite.yaml") == ""
    assert op_size.coerce("64k", "suite.yaml") == "64k"
    with pytest.raises(InputError, match=r"op_size='big' is not a size \(or empty for the object size\); use"):
        op_size.coerce("big", "suite.yaml")
