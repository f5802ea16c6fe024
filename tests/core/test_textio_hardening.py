"""core.textio: path checks, size limits, strict UTF-8 with the first bad byte, gzip, safe YAML."""

from __future__ import annotations

import gzip
import os

import pytest

from marinesim.core import limits
from marinesim.core.errors import ConfigError, DataError
from marinesim.core.textio import (
    YAML_MAX_DEPTH,
    check_input_path,
    decode_text,
    gunzip,
    read_input_text,
    yaml_load,
)


def test_path_checks_name_the_file(tmp_path):
    with pytest.raises(ConfigError, match="not found") as exc:
        check_input_path(tmp_path / "nope.moos", what="file")
    assert "nope.moos" in str(exc.value)
    with pytest.raises(ConfigError, match="is a directory, not a file"):
        check_input_path(tmp_path)
    with pytest.raises(DataError, match="not found"):
        check_input_path(tmp_path / "x", error=DataError)


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads any file")
def test_unreadable_file(tmp_path):
    p = tmp_path / "secret.yaml"
    p.write_text("a: 1\n")
    p.chmod(0)
    try:
        with pytest.raises(ConfigError, match="permission denied"):
            read_input_text(p)
    finally:
        p.chmod(0o644)


def test_referring_line_locates_path_errors(tmp_path):
    with pytest.raises(ConfigError) as exc:
        check_input_path(tmp_path / "f.cfd", ref_file="m.moos", ref_line=7, param="current_field")
    assert str(exc.value).startswith("m.moos:7: current_field: ")
    assert "f.cfd" in str(exc.value)


def test_first_bad_byte_with_offset_line_and_column():
    with pytest.raises(ConfigError) as exc:
        decode_text(b"ok\nab\xb0c\n", file="m.moos")
    e = exc.value
    assert (e.file, e.line, e.column) == ("m.moos", 2, 3)
    assert "byte 0xb0 at offset 5" in str(e)


@pytest.mark.parametrize("enc", ["utf-16", "utf-32"])
def test_utf16_and_utf32_are_named(enc):
    with pytest.raises(ConfigError, match=enc.upper()):
        decode_text("a: 1\n".encode(enc), file="s.yaml")


def test_nul_byte_and_bom():
    with pytest.raises(ConfigError, match="NUL byte at offset 1"):
        decode_text(b"a\x00b", file="f")
    assert decode_text(b"\xef\xbb\xbfa: 1\n") == "a: 1\n"


def test_size_limit_names_parameter(tmp_path, monkeypatch):
    p = tmp_path / "big.txt"
    p.write_bytes(b"x" * 100)
    monkeypatch.setenv("MARINESIM_MAX_INPUT_BYTES", "50")
    with pytest.raises(ConfigError, match="max_input_bytes"):
        read_input_text(p)
    monkeypatch.setenv("MARINESIM_MAX_INPUT_BYTES", "nonsense")
    with pytest.raises(ConfigError, match="MARINESIM_MAX_INPUT_BYTES"):
        read_input_text(p)


def test_gzip_corrupt_truncated_and_bomb():
    blob = gzip.compress(b"t,x\n0,1\n" * 100)
    assert gunzip(blob).startswith(b"t,x")
    with pytest.raises(DataError, match="truncated"):
        gunzip(blob[:-12], file="c.csv.gz")
    with pytest.raises(DataError, match="not a gzip file"):
        gunzip(b"plain text", file="c.csv.gz")
    bomb = gzip.compress(b"\0" * 1_000_000)
    with pytest.raises(DataError, match="max_input_bytes"):
        gunzip(bomb, file="c.csv.gz", limit=1000)


def test_yaml_alias_bomb_is_refused_quickly():
    levels = ["b0: &b0 [x, x, x, x, x, x, x, x, x]"]
    levels += [f"b{k}: &b{k} [" + ", ".join([f"*b{k - 1}"] * 9) + "]" for k in range(1, 12)]
    with pytest.raises(ConfigError, match="yaml.max_nodes"):
        yaml_load("\n".join(levels) + "\n", file="bomb.yaml")


def test_yaml_plain_aliases_still_work():
    assert yaml_load("a: &x [1, 2]\nb: *x\n") == {"a": [1, 2], "b": [1, 2]}


def test_yaml_nesting_and_recursive_alias():
    with pytest.raises(ConfigError, match="yaml.max_depth"):
        yaml_load("[" * (YAML_MAX_DEPTH + 5) + "]" * (YAML_MAX_DEPTH + 5), file="deep.yaml")
    with pytest.raises(ConfigError, match="recursive alias"):
        yaml_load("a: &l [*l]\n", file="r.yaml")


def test_yaml_bad_character_is_located():
    with pytest.raises(ConfigError) as exc:
        yaml_load("a: 1\nb: \x1c\n", file="c.yaml")
    assert exc.value.line == 2


def test_check_steps_limits():
    assert limits.check_steps(10.0, 0.1) == 100
    with pytest.raises(ConfigError, match="MIN_DT"):
        limits.check_steps(1.0, 1e-12)
    with pytest.raises(ConfigError, match="MAX_SAMPLES"):
        limits.check_steps(1e9, 0.1)
