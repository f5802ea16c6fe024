"""File-reading helpers of the MOOS face: current-field files and uSimMarine configurations.

Layer L3: the pure parsers live in L1 (:mod:`marinesim.environment.current`,
:mod:`marinesim.models.usm.config`); this module opens the files and passes text and loader
callables to them.  :func:`load_current_field` is the scenario layer's
(:mod:`marinesim.scenario.current_field`), re-exported here.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from marinesim.core.errors import ConfigWarning
from marinesim.interop.moos.moosfile import MoosFile, read_moos_file
from marinesim.models.usm.config import UsmConfig, configure

__all__ = ["LoadedConfig", "block_for", "load_current_field", "load_usm_config"]  # noqa: F822

Compat = Literal["doc", "moos"]
Variant = Literal["usm", "usm_v22"]


def block_for(variant: Variant | None, block: str | None, mf: MoosFile) -> tuple[str, Variant]:
    """Choose the block name and the variant.

    ``block`` wins; otherwise ``uSimMarineV22`` for ``usm_v22`` and ``uSimMarine`` for
    ``usm``; with neither given, a file with only a ``uSimMarineV22`` block selects V22.
    """
    if block is not None:
        name = block
        if variant is None:
            variant = "usm_v22" if block.lower() == "usimmarinev22" else "usm"
        return name, variant
    if variant == "usm_v22":
        return "uSimMarineV22", variant
    if variant == "usm":
        return "uSimMarine", variant
    if mf.find_block("uSimMarine") is None and mf.find_block("uSimMarineV22") is not None:
        return "uSimMarineV22", "usm_v22"
    return "uSimMarine", "usm"


@dataclass(frozen=True)
class LoadedConfig:
    """A configuration read from a ``.moos`` file.

    Attributes
    ----------
    config : UsmConfig
        The effective configuration.
    warnings : list of ConfigWarning
        Reading warnings, then the configuration's (mode differences included).
    moos : MoosFile
        The parsed file (globals and blocks).
    block : str
        The block used.
    """

    config: UsmConfig
    warnings: list[ConfigWarning]
    moos: MoosFile
    block: str


def load_usm_config(
    path: str | Path,
    *,
    compat: Compat = "doc",
    variant: Variant | None = None,
    block: str | None = None,
) -> LoadedConfig:
    """Read a ``.moos`` file and configure its uSimMarine block.

    Parameters
    ----------
    path : str or Path
        The mission file.
    compat : {"doc", "moos"}
        Mode (spec §10).
    variant : {"usm", "usm_v22"}, optional
        Default: from the block name.
    block : str, optional
        Block to read (default ``uSimMarine`` / ``uSimMarineV22``; ``--alias`` names).

    Raises
    ------
    ConfigError
        Missing file, missing block, or an invalid configuration in documented mode.
    """
    p = Path(path)
    mf = read_moos_file(p)
    name, var = block_for(variant, block, mf)
    blk = mf.block(name)
    cfg, warns = configure(
        blk.entries,
        variant=var,
        compat=compat,
        file=p,
        globals=mf.globals_dict(),
        base_dir=p.parent,
        load_current_field=_load_current_field,
    )
    return LoadedConfig(cfg, list(mf.warnings) + warns, mf, blk.name)


def _load_current_field(*args: Any, **kwargs: Any) -> Any:
    # imported on use: the scenario layer (and the engine behind it) is not on the start-up
    # path of ``marinesim moos`` unless the block names a current field
    from marinesim.scenario.current_field import load_current_field as load

    return load(*args, **kwargs)


def __getattr__(name: str) -> Any:
    if name == "load_current_field":
        from marinesim.scenario.current_field import load_current_field

        return load_current_field
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
