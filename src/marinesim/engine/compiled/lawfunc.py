"""Each law of the generated tick compiled on its own, as a C-callable function cached apart.

numba links the LLVM IR of everything a compiled function calls into that function and
optimises and translates all of it again, so a tick that calls its laws as numba functions
compiles them whole each time, for every plugin set (``docs/guide/engine.md``: 30 s for
``auv_survey_ins``, 13 s of it even with every law compiled before).  Here each law call of
the tick goes through a C function pointer instead:

* a **law function** is a small generated module (``<cache>/laws/law_<digest>.py``) whose
  ``law(k, j, [s,] t, h, ad, dm, six)`` rebuilds the law's arrays from the tick's tables of
  data addresses (``ad``) and shapes (``dm``) at the places ``six`` names (``numba.carray``,
  C order) and calls the law; compiled with ``numba.cfunc``
  (numpy's error model, as the tick) and cached on disk by numba.  Its digest covers its own
  text and the package's sources, so every plugin set that calls a law with arrays of the
  same types shares its machine code, and a plugin set that differs by one law compiles that
  law only.  A law that raises returns 1: the tick hands that tick back to the plugins.
* a **call site** of the compiled tick (``tick_run``, ``tick_loop``) calls entry ``c`` of the
  tick's table of function pointers (:func:`call_law`; :func:`site_table`: an array whose
  address the process registers under a symbol named after the tick's module, which the
  tick's machine code loads at run time, so the cached tick holds no address), passing the
  addresses and shapes of the law's arrays.  An entry still zero hands the tick back.  The
  interpreted tick (``py_run``, ``py_loop``) calls the laws themselves.
* :func:`load` fills a tick module's table before its compiled tick first runs: the law
  functions missing from the cache compile first: in this process when they are few (fewer
  than :data:`PER_PROCESS` a process), else in several processes at once
  (``MARINESIM_COMPILE_JOBS``, default the machine's CPU count), each taking the next law no
  other has claimed, the longest first.

The same bits as laws inlined into the tick: each law is the same code on arrays of the same
types.
"""

from __future__ import annotations

import hashlib
import inspect
import os
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from marinesim.engine.compiled.background import child_env

__all__ = ["all_cached", "call_law", "call_law_sub", "copy_rows", "law_path", "load", "site_table"]

#: Law functions to compile per process at least (fewer: compiled in the calling process).
PER_PROCESS = 4
#: Prefix of the symbol under which a tick module's table of law pointers is registered.
SYMBOL = "marinesim_lp_"
_TABLES: dict[str, np.ndarray] = {}  # symbol → table (kept alive: its address is registered)
_CFUNCS: dict[Path, Any] = {}  # law module → its compiled ``law``


def site_table(module_file: str, sites: int) -> tuple[np.ndarray, str]:
    """The table of law pointers of the tick module ``module_file`` (``sites`` entries, zero
    until :func:`load`) and the symbol its compiled tick loads it by (registered with LLVM
    when numba is there; one table per tick module name and process: the name is the
    digest of the module's text, so modules of one name call the same laws)."""
    sym = SYMBOL + Path(module_file).stem
    table = _TABLES.get(sym)
    if table is None:
        table = _TABLES[sym] = np.zeros(max(sites, 1), dtype=np.int64)
        try:
            import llvmlite.binding as llb
        except ImportError:  # pragma: no cover - the interpreted tick needs no table
            pass
        else:
            llb.add_symbol(sym, table.ctypes.data)
    return table, sym


def _call_codegen(substep: bool) -> Any:
    """The typing and codegen of :func:`call_law` (``substep``: with the substep index)."""
    from llvmlite import ir
    from numba.core import types

    nscal = 5 if substep else 4

    def typer(typingctx: Any, sym: Any, c: Any, *rest: Any) -> Any:  # noqa: ARG001
        if not isinstance(sym, types.StringLiteral) or len(rest) != nscal + 4:
            return None
        if not all(isinstance(a, types.Array) for a in rest[nscal : nscal + 3]):
            return None
        name = sym.literal_value

        def codegen(context: Any, builder: Any, signature: Any, args: Any) -> Any:
            i64, f64 = ir.IntType(64), ir.DoubleType()
            p64 = i64.as_pointer()
            gv = builder.module.globals.get(name)
            if gv is None:
                gv = ir.GlobalVariable(builder.module, i64, name)  # the process defines it
            entry = context.cast(builder, args[1], signature.args[1], types.int64)
            fptr = builder.load(builder.gep(builder.bitcast(gv, p64), [entry]))
            tabs = []
            for q in range(3):  # AD, DM, SIX
                aty = signature.args[2 + nscal + q]
                ary = context.make_array(aty)(context, builder, value=args[2 + nscal + q])
                tabs.append(builder.bitcast(ary.data, p64))
            off = context.cast(builder, args[-1], signature.args[-1], types.int64)
            tabs[2] = builder.gep(tabs[2], [off])
            kinds = [types.int64] * (nscal - 2) + [types.float64, types.float64]
            scal = [context.cast(builder, args[2 + i], signature.args[2 + i], kinds[i]) for i in range(nscal)]
            fnty = ir.FunctionType(i64, [i64] * (nscal - 2) + [f64, f64, p64, p64, p64])
            res = builder.alloca(i64)
            builder.store(ir.Constant(i64, 1), res)  # 1: hand back while the entry is zero
            with builder.if_then(builder.icmp_unsigned("!=", fptr, ir.Constant(i64, 0))):
                builder.store(builder.call(builder.inttoptr(fptr, fnty.as_pointer()), [*scal, *tabs]), res)
            return builder.load(res)

        return types.int64(sym, c, *rest), codegen

    return typer


try:  # the compiled call sites
    from numba.core import types as _types
    from numba.extending import intrinsic as _intrinsic

    _TYPE4, _TYPE5 = _call_codegen(False), _call_codegen(True)

    @_intrinsic
    def call_law(typingctx: Any, sym: Any, c: Any, k: Any, j: Any, t: Any, h: Any,
                 ad: Any, dm: Any, six: Any, off: Any) -> Any:  # fmt: skip
        """Call entry ``c`` of the table ``sym`` with ``(k, j, t, h)`` and the tables of
        every array's address (``ad``) and shape (``dm``) and, from ``off`` in ``six``, the
        places of this law's arrays in them (1, handed back, while the entry is zero)."""
        return _TYPE4(typingctx, sym, c, k, j, t, h, ad, dm, six, off)

    @_intrinsic
    def call_law_sub(typingctx: Any, sym: Any, c: Any, k: Any, j: Any, s: Any, t: Any, h: Any,
                     ad: Any, dm: Any, six: Any, off: Any) -> Any:  # fmt: skip
        """:func:`call_law` of a substep law (``k, j, s, t, h``)."""
        return _TYPE5(typingctx, sym, c, k, j, s, t, h, ad, dm, six, off)

    @_intrinsic
    def _memcpy(typingctx: Any, dst: Any, src: Any, nbytes: Any) -> Any:  # noqa: ARG001
        """Copy ``nbytes`` bytes from address ``src`` to address ``dst``."""

        def codegen(context: Any, builder: Any, signature: Any, args: Any) -> Any:
            from llvmlite import ir
            from numba.core import cgutils

            i8p = ir.IntType(8).as_pointer()
            d, s = builder.inttoptr(args[0], i8p), builder.inttoptr(args[1], i8p)
            cgutils.raw_memcpy(builder, d, s, args[2], 1)
            return context.get_dummy_value()

        return _types.none(dst, src, nbytes), codegen

    from numba.extending import register_jitable as _register_jitable

    @_register_jitable
    def copy_rows(sv: Any, back: int) -> None:
        """The rows of the copy table ``sv`` (copy, array, bytes): each array into its copy,
        or with ``back`` each copy into its array."""
        for r in range(sv.shape[0]):
            if back == 0:
                _memcpy(sv[r, 0], sv[r, 1], sv[r, 2])
            else:
                _memcpy(sv[r, 1], sv[r, 0], sv[r, 2])

except ImportError:  # pragma: no cover - interpreted only
    call_law = call_law_sub = copy_rows = None


# ------------------------------------------------------------------------------ law functions
def law_source(fn: Callable[..., int], substep: bool, kinds: Sequence[tuple[str, int]]) -> str:
    """The module text of the law function of ``fn`` for arrays of ``kinds`` (dtype, ndim)."""
    common = ["k", "j", "s", "t", "h"] if substep else ["k", "j", "t", "h"]
    scal = ["types.int64"] * (len(common) - 2) + ["types.float64", "types.float64"]
    lines = [
        '"""Generated by marinesim.engine.compiled.lawfunc: do not edit."""',
        "import numpy as np",
        "from numba import carray, cfunc, types",
        "from numba.extending import register_jitable",
        "",
        "from marinesim.engine.compiled.generate import address_ptr",
        f"from {fn.__module__} import {fn.__name__} as _law",
        "",
        "_P = types.CPointer(types.int64)",
        f"SIG = types.int64({', '.join(scal)}, _P, _P, _P)",
        "",
        "",
        "@register_jitable",
        f"def run({', '.join(common)}, ad, dm, six):",
    ]
    args = []
    for m, (dtype, nd) in enumerate(kinds):
        dt = f"np.{dtype}" + ("_" if dtype == "bool" else "")
        ptr = f"address_ptr(ad[six[{2 * m}]])"
        if nd == 0:
            lines.append(f"    a{m} = carray({ptr}, (1,), {dt}).reshape(())")
        else:
            shape = ", ".join(f"dm[six[{2 * m + 1}] + {q}]" for q in range(nd))
            lines.append(f"    a{m} = carray({ptr}, ({shape},), {dt})")
        args.append(f"a{m}")
    lines += [
        f"    return _law({', '.join(common)}, {', '.join(args)})",
        "",
        "",
        f"def law({', '.join(common)}, ad, dm, six):",
        "    try:  # (apart from the call: numba takes no try around a call of 30 arguments or more)",
        f"        return run({', '.join(common)}, ad, dm, six)",
        "    except Exception:  # the plugins run the tick (and raise, if they do)",
        "        return 1",
        "",
        "",
        "def build():",
        '    return cfunc(SIG, cache=True, error_model="numpy")(law)',
        "",
    ]
    return "\n".join(lines)


def law_path(
    fn: Callable[..., int], substep: bool, kinds: Sequence[tuple[str, int]], sources: Sequence[str] = ()
) -> Path:
    """The module file of the law function (written once; its name is its digest: its text,
    the package's sources, the law's own module and the declaration's ``sources``, files or
    folders, as the tick's digest)."""
    from marinesim.core.compile import package_digest
    from marinesim.engine.compiled.generate import cache_dir

    text = law_source(fn, substep, kinds)
    h = hashlib.sha256(text.encode())
    h.update(package_digest().encode())
    files = {Path(sys.modules[fn.__module__].__file__ or "").resolve()}  # (a user plugin's too)
    for extra in sources:
        p = Path(extra).resolve()
        files.update(p.glob("*.py") if p.is_dir() else (p,))
    for f in sorted(files):
        if f.is_file():
            h.update(f.read_bytes())
    path = cache_dir().parent / "laws" / f"law_{h.hexdigest()[:20]}.py"
    if not path.is_file():
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(f".{os.getpid()}.tmp")
        tmp.write_text(text)
        try:
            os.link(tmp, path)  # never over an existing file (numba stamps its cache with it)
        except FileExistsError:
            pass
        finally:
            tmp.unlink()
    return path


def _module(path: Path) -> Any:
    from marinesim.engine.compiled.generate import tick_module

    return tick_module(path)


def cached(path: Path) -> bool:
    """Whether numba's disk cache holds the machine code of the law function in ``path``."""
    import numba

    probe = numba.njit(cache=True)(_module(path).law)  # (not compiled: its cache's folder)
    folder = getattr(getattr(probe, "_cache", None), "_cache_path", None)
    return folder is not None and any(Path(folder).glob(f"{path.stem}.law-*.nbi"))


def cfunc_of(path: Path) -> Any:
    """The compiled law function of ``path`` (from numba's disk cache, else compiled)."""
    fn = _CFUNCS.get(path)
    if fn is None:
        fn = _CFUNCS[path] = _module(path).build()
    return fn


def _paths(mod: Any) -> list[Path]:
    return [law_path(fn, sub, kinds, sources) for fn, sub, kinds, sources in mod.SITES]


def all_cached(mod: Any) -> bool:
    """Whether every law function of the tick module ``mod`` is in numba's disk cache."""
    return all(p in _CFUNCS or cached(p) for p in dict.fromkeys(_paths(mod)))


def _cost(path: Path) -> int:
    """A guess of a law function's compile cost: the length of its law's source."""
    mod = _module(path)
    try:
        return len(inspect.getsource(mod._law))
    except (OSError, TypeError):  # pragma: no cover
        return 1000


def jobs() -> int:
    """Processes that compile law functions at once (``MARINESIM_COMPILE_JOBS``, default the
    CPU count)."""
    raw = os.environ.get("MARINESIM_COMPILE_JOBS", "")
    try:
        n = int(raw) if raw else (os.cpu_count() or 1)
    except ValueError:
        n = os.cpu_count() or 1
    return max(1, n)


def compile_apart(paths: Sequence[Path], n: int) -> None:
    """Compile the law functions ``paths`` into numba's disk cache in ``n`` processes.

    Every process gets the whole list, the most costly first (:func:`_cost`), and compiles
    each law function it claims first (an exclusive create of a claim file), so the work
    spreads as it goes; a process that fails leaves its laws to be compiled here."""
    order = sorted(paths, key=_cost, reverse=True)
    token = f"{os.getpid()}-{time.monotonic_ns()}"
    procs = [
        subprocess.Popen(  # noqa: S603 - our own module, with our own interpreter
            [sys.executable, "-m", "marinesim.engine.compiled.lawfunc", "--claim", token, *map(str, order)],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            env=child_env(),
        )  # fmt: skip
        for _ in range(n)
    ]
    try:
        for proc in procs:
            proc.wait()
    finally:
        for p in order:
            Path(f"{p}.{token}.claim").unlink(missing_ok=True)


def _claim(path: Path, token: str) -> bool:
    """Whether this process is the first to claim ``path`` under ``token``."""
    try:
        os.close(os.open(f"{path}.{token}.claim", os.O_CREAT | os.O_EXCL | os.O_WRONLY))
    except FileExistsError:
        return False
    return True


def load(mod: Any) -> None:
    """Fill the table of law pointers of the tick module ``mod`` (:func:`site_table`): its
    law functions from numba's disk cache, those missing compiled first (in several
    processes when there are :data:`PER_PROCESS` or more for each and :func:`jobs` allows)."""
    if getattr(mod, "_laws_loaded", False):
        return
    table = mod._FP
    paths = _paths(mod)
    missing = [p for p in dict.fromkeys(paths) if p not in _CFUNCS and not cached(p)]
    # at least PER_PROCESS laws a process: a process of its own compiles again what its laws
    # share with the rest (the models' row functions, which this process may hold already)
    n = min(jobs(), len(missing) // PER_PROCESS)
    if n > 1:
        compile_apart(missing, n)
    for c, path in enumerate(paths):
        table[c] = cfunc_of(path).address
    mod._laws_loaded = True


def main(argv: list[str]) -> int:
    """``python -m marinesim.engine.compiled.lawfunc [--claim TOKEN] LAW.py …``: compile them
    into the cache (with ``--claim``, those this process claims first: :func:`compile_apart`)."""
    token = None
    if argv[:1] == ["--claim"]:
        token, argv = argv[1], argv[2:]
    for arg in argv:
        if token is None or _claim(Path(arg), token):
            cfunc_of(Path(arg))
    return 0


if __name__ == "__main__":  # pragma: no cover - run as a process by compile_apart()
    raise SystemExit(main(sys.argv[1:]))
