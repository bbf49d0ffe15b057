"""One rule for a name a user types: collectives, algorithms, graphs, weights, dtypes, schedules.

:func:`normalise` strips the name, lower-cases it and reads ``_`` and spaces as
``-``; a :class:`Names` table maps each canonical name and its aliases (normalised
the same way, refused if two names claim one spelling) to the canonical name, and
an unknown name is an :class:`~costmodel.errors.UnknownNameError` with a did-you-mean.

>>> dtypes = Names("dtype", {"fp32": ("float32",), "bf16": ("bfloat16",)})
>>> dtypes.resolve(" FP32 "), dtypes.resolve("BFloat16")
('fp32', 'bf16')
>>> dtypes.resolve("fp33")
Traceback (most recent call last):
    ...
costmodel.errors.UnknownNameError: unknown dtype 'fp33'; did you mean 'fp32'?
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping

from costmodel.errors import UnknownNameError

__all__ = ["Names", "normalise"]


def normalise(name: str) -> str:
    """The spelling names are compared in: stripped, lower case, ``_`` and spaces as ``-``.

    >>> normalise("  All_Reduce "), normalise("Metropolis Hastings")
    ('all-reduce', 'metropolis-hastings')
    """
    return name.strip().lower().replace("_", "-").replace(" ", "-")


class Names:
    """The canonical names of one *kind* and their aliases.

    Parameters
    ----------
    kind : str
        What the names name, for messages (``"graph"``, ``"dtype"``).
    table : mapping of str to iterable of str
        Each canonical name and its aliases.

    Raises
    ------
    ValueError
        When two canonical names claim the same spelling.
    """

    def __init__(self, kind: str, table: Mapping[str, Iterable[str]]) -> None:
        self.kind = kind
        self.canonical: tuple[str, ...] = tuple(table)
        self.aliases: tuple[str, ...] = tuple(a for aliases in table.values() for a in aliases)
        self._by_key: dict[str, str] = {}
        for canonical, aliases in table.items():
            for spelling in (canonical, *aliases):
                key = normalise(spelling)
                if self._by_key.get(key, canonical) != canonical:
                    raise ValueError(f"{kind} name {spelling!r} is taken by {self._by_key[key]!r}")
                self._by_key[key] = canonical

    def get(self, name: str) -> str | None:
        """The canonical name for *name*, or ``None`` when it names nothing."""
        return self._by_key.get(normalise(name))

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and self.get(name) is not None

    def __iter__(self) -> Iterator[str]:
        return iter(self.canonical)

    def resolve(self, name: str, *, choices: Iterable[str] | None = None, context: str = "") -> str:
        """The canonical name for *name*.

        Raises
        ------
        UnknownNameError
            Naming *name* as typed, with a did-you-mean among *choices* (by default
            the canonical names); *context* follows the name (``for allreduce``).
        """
        found = self.get(name)
        if found is None:
            raise UnknownNameError(self.kind, name, self.canonical if choices is None else choices,
                                   context=context)
        return found
