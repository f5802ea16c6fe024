"""The models tree: one package or module per model; the old flat paths still import (one
release) with a DeprecationWarning and are the new modules."""

from __future__ import annotations

import importlib
import subprocess
import sys
import warnings
from pathlib import Path

import pytest

import marinesim.models as models

ROOT = Path(models.__file__).resolve().parent

#: What ``ls src/marinesim/models`` may list: the models, the package's face, the registry
#: declarations and the presets (data).
EXPECTED = {
    "__init__.py",
    "registry.toml",
    "presets",
    "usm",
    "sixdof",
    "uuv",
    "heave.py",
    "battery.py",
}


def test_models_folder_lists_the_models_only() -> None:
    names = {p.name for p in ROOT.iterdir() if p.name != "__pycache__"}
    assert names == EXPECTED


@pytest.mark.parametrize("old", sorted(o for o, n in models.MOVED.items() if "," not in n))
def test_old_path_imports_with_a_warning_as_the_new_module(old: str) -> None:
    new = models.MOVED[old]
    # a fresh interpreter: the old path must not be imported already
    code = (
        "import importlib, warnings\n"
        "warnings.simplefilter('error')\n"
        f"new = importlib.import_module({new!r})\n"
        "try:\n"
        f"    importlib.import_module({old!r})\n"
        "except DeprecationWarning as w:\n"
        "    print('WARNED', w)\n"
        "warnings.simplefilter('ignore')\n"
        f"print('SAME', importlib.import_module({old!r}) is new)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120
    ).stdout
    assert f"WARNED {old} moved to {new}" in out
    assert "SAME True" in out


def test_split_module_offers_every_name_of_its_parts() -> None:
    old = "marinesim.models.hydro"
    parts = [importlib.import_module(m.strip()) for m in models.MOVED[old].split(",")]
    sys.modules.pop(old, None)  # a fresh import, whatever ran before
    models.__dict__.pop("hydro", None)
    with pytest.warns(DeprecationWarning, match=r"marinesim\.models\.hydro moved"):
        hydro = importlib.import_module(old)
    names = [n for p in parts for n in p.__all__]
    assert {"m2c", "euler_kinematics", "m_rb", "hoerner", "uuv_wrench_replay"} <= set(names)
    for part in parts:
        for n in part.__all__:
            assert getattr(hydro, n) is getattr(part, n)
    assert sys.modules[old] is hydro


def test_from_package_import_old_name_warns_and_gives_the_new_module() -> None:
    new = importlib.import_module("marinesim.models.usm.config")
    models.__dict__.pop("usm_config", None)
    with pytest.warns(DeprecationWarning, match=r"marinesim\.models\.usm_config moved"):
        from marinesim.models import usm_config
    assert usm_config is new


def test_new_paths_import_without_warnings() -> None:
    code = (
        "import warnings\n"
        "warnings.simplefilter('error', DeprecationWarning)\n"
        "import marinesim.api, marinesim.models.usm, marinesim.models.uuv, marinesim.models.heave\n"
        "import marinesim.models.battery, marinesim.models.presets\n"
        "from marinesim.models.sixdof import fossen6dof, pvs, motion, backends, fleet\n"
        "from marinesim.models.sixdof import arrays, setup, terms\n"
        "from marinesim.models.sixdof import motion_model\n"
        "from marinesim.models import make_model\n"
        "print('OK', motion_model is motion.motion_model)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120
    ).stdout
    assert "OK True" in out


def test_unknown_name_is_an_attribute_error() -> None:
    with pytest.raises(AttributeError, match="no attribute 'nonesuch'"):
        models.nonesuch  # noqa: B018
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        from marinesim.models import sixdof

        with pytest.raises(AttributeError):
            sixdof.nonesuch  # noqa: B018
