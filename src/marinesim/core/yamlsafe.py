"""Safe YAML reading with limits (depth, aliases, expanded size): the YAML half of
:mod:`marinesim.core.textio`, which re-exports these names and imports this module (and
PyYAML) on first use only.  The limits are textio's constants."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from marinesim.core.errors import ConfigError
from marinesim.core.textio import (
    YAML_MAX_ALIASES,
    YAML_MAX_BYTES,
    YAML_MAX_DEPTH,
    YAML_MAX_NODES,
    _line_col,
)

__all__ = ["SafeYamlLoader", "yaml_compose", "yaml_construct", "yaml_load"]


class SafeYamlLoader(yaml.SafeLoader):
    """PyYAML's safe loader with bounds on nesting depth, alias uses and expanded size.

    Aliases stay shared objects (never copied), and the expanded size is counted once per
    node, so checking a document costs time linear in its text.
    """

    def __init__(self, stream: Any, *, file: str | Path | None = None) -> None:
        super().__init__(stream)
        self._file = file
        self._depth = 0
        self._aliases = 0

    def _limit(self, message: str, param: str) -> ConfigError:
        mark = self.peek_event().start_mark if self.check_event() else None
        return ConfigError(
            message,
            file=self._file,
            line=mark.line + 1 if mark is not None else None,
            column=mark.column + 1 if mark is not None else None,
            param=param,
        )

    def compose_node(self, parent: Any, index: Any) -> Any:  # noqa: D102
        if self.check_event(yaml.AliasEvent):
            self._aliases += 1
            if self._aliases > YAML_MAX_ALIASES:
                raise self._limit(
                    f"more than {YAML_MAX_ALIASES} alias uses (*name) in one document",
                    "yaml.max_aliases",
                )
        self._depth += 1
        try:
            if self._depth > YAML_MAX_DEPTH:
                raise self._limit(f"nesting deeper than {YAML_MAX_DEPTH} levels", "yaml.max_depth")
            return super().compose_node(parent, index)
        finally:
            self._depth -= 1


def _expanded_size(node: yaml.Node) -> int:
    """Number of nodes once aliases are expanded (memoised per node; iterative)."""
    memo: dict[int, int] = {}
    active: set[int] = set()
    stack: list[tuple[yaml.Node, bool]] = [(node, False)]
    while stack:
        n, done = stack.pop()
        key = id(n)
        if key in memo:
            continue
        if isinstance(n, yaml.ScalarNode):
            memo[key] = 1
            continue
        children: list[yaml.Node] = []
        if isinstance(n, yaml.MappingNode):
            for k, v in n.value:
                children += (k, v)
        elif isinstance(n, yaml.SequenceNode):
            children = list(n.value)
        if done:
            active.discard(key)
            memo[key] = min(1 + sum(memo.get(id(c), 1) for c in children), YAML_MAX_NODES + 1)
            continue
        if key in active:
            raise ConfigError(
                "recursive alias (a collection that contains itself)",
                line=n.start_mark.line + 1,
                column=n.start_mark.column + 1,
                param="yaml.aliases",
            )
        active.add(key)
        stack.append((n, True))
        stack.extend((c, False) for c in children if id(c) not in memo)
    return memo[id(node)]


def _char(c: Any) -> str:
    code = c if isinstance(c, int) else ord(c) if isinstance(c, str) and len(c) == 1 else None
    return f"U+{code:04X}" if code is not None else repr(c)


def _marked(exc: yaml.MarkedYAMLError, problem: str, file: str | Path | None) -> ConfigError:
    """``malformed YAML: problem`` at the error's mark (its problem mark, else its context)."""
    mark = exc.problem_mark or exc.context_mark
    return ConfigError(
        f"malformed YAML: {problem}",
        file=file,
        line=mark.line + 1 if mark is not None else None,
        column=mark.column + 1 if mark is not None else None,
    )


def _too_deep(file: str | Path | None) -> ConfigError:
    """The nesting limit, for a RecursionError while composing or constructing."""
    return ConfigError(
        f"nesting deeper than {YAML_MAX_DEPTH} levels", file=file, param="yaml.max_depth"
    )


def yaml_compose(text: str, *, file: str | Path | None = None) -> yaml.Node | None:
    """Compose one YAML document into nodes, with the limits of :class:`SafeYamlLoader`.

    Raises
    ------
    ConfigError
        Malformed YAML (with line and column), nesting, alias or size limits exceeded
        (``yaml.max_depth``, ``yaml.max_aliases``, ``yaml.max_nodes``).
    """
    size = len(text.encode("utf-8", errors="surrogatepass"))
    if size > YAML_MAX_BYTES:
        raise ConfigError(
            f"the YAML document is {size} bytes, over the limit of {YAML_MAX_BYTES} bytes",
            file=file,
            param="yaml.max_bytes",
        )
    loader = None
    try:
        loader = SafeYamlLoader(text, file=file)  # the reader checks the characters here
        node = loader.get_single_node()
    except yaml.MarkedYAMLError as exc:
        raise _marked(exc, exc.problem or exc.context or "malformed YAML", file) from None
    except yaml.reader.ReaderError as exc:
        line, col = _line_col(text.encode("utf-8", "surrogatepass"), len(
            text[: exc.position].encode("utf-8", "surrogatepass")))  # fmt: skip
        raise ConfigError(
            f"character {_char(exc.character)} is not allowed in YAML (offset {exc.position})",
            file=file,
            line=line,
            column=col,
        ) from None
    except yaml.YAMLError as exc:
        raise ConfigError(f"malformed YAML: {exc}", file=file) from None
    except RecursionError:
        raise _too_deep(file) from None
    finally:
        if loader is not None:
            loader.dispose()
    try:
        size = 0 if node is None else _expanded_size(node)
    except ConfigError as exc:
        raise ConfigError(
            exc.message, file=file, line=exc.line, column=exc.column, param=exc.param
        ) from None
    if size > YAML_MAX_NODES:
        raise ConfigError(
            f"the document expands to more than {YAML_MAX_NODES} nodes through its aliases",
            file=file,
            line=1,
            param="yaml.max_nodes",
        )
    return node


def yaml_construct(node: yaml.Node, *, file: str | Path | None = None) -> Any:
    """Python data of a composed node (safe types only; aliases stay shared objects)."""
    loader = SafeYamlLoader("", file=file)
    try:
        return loader.construct_document(node)
    except yaml.MarkedYAMLError as exc:
        raise _marked(exc, exc.problem or exc.context or "invalid value", file) from None
    except (yaml.YAMLError, ValueError, OverflowError) as exc:
        raise ConfigError(f"malformed YAML: {exc}", file=file) from None
    except RecursionError:
        raise _too_deep(file) from None
    finally:
        loader.dispose()


def yaml_load(text: str, *, file: str | Path | None = None) -> Any:
    """Safe-load one YAML document with the limits (see :func:`yaml_compose`)."""
    node = yaml_compose(text, file=file)
    return None if node is None else yaml_construct(node, file=file)
