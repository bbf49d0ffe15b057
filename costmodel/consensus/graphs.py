"""Communication graphs for gossip and decentralised SGD: generators only, no algorithms.

Every generator returns a :class:`Graph`, a plain adjacency structure:
``graph.neighbours[i]`` is the sorted tuple of the workers that worker ``i``
mixes with (itself excluded; for a directed graph, the workers it receives
from).  Structured graphs (rings, tori, hypercubes, complete graphs, the
exponential graph, stars) also carry their *family*, which lets
:mod:`costmodel.consensus.spectral` use closed forms instead of eigen-solvers;
their neighbour lists are computed on access, so a ring of a million workers
costs nothing to build.

========================  ======================================================
name                      graph
========================  ======================================================
``ring``                  cycle: i ~ i ± 1 (mod p)
``k-ring``                i ~ i ± 1, …, i ± k (mod p); degree 2k
``torus``                 2-D torus rows × cols, i ~ its 4 grid neighbours (wrapping)
``hypercube``             i ~ i XOR 2^b; p a power of two
``complete``              every pair
``star``                  worker 0 ~ every other worker
``exponential``           static exponential graph (directed): i receives from i + 2^t (mod p),
                          t = 0 … ⌈log2 p⌉ − 1 (Ying et al. 2021)
``random-regular``        uniform-ish random d-regular graph (Steger–Wormald pairing), seeded
``erdos-renyi``           G(p, q): each pair an edge with probability q (Batagelj–Brandes), seeded
``edges``                 a user edge-list file: one ``u v`` pair per line, ``#`` comments
========================  ======================================================

Random generators take a ``seed`` (default 0) and never touch a global RNG.

References
----------
.. [1] B. Ying, K. Yuan, Y. Chen, H. Hu, P. Pan, W. Yin, "Exponential Graph is
   Provably Efficient for Decentralized Deep Training", NeurIPS 2021 (the static
   exponential graph).
.. [2] A. Steger, N. C. Wormald, "Generating random regular graphs quickly",
   Combinatorics, Probability and Computing 8(4), 1999.
.. [3] V. Batagelj, U. Brandes, "Efficient generation of large random networks",
   Physical Review E 71, 036113, 2005, algorithm 1 (G(n, p) by geometric skips).

Examples
--------
>>> g = ring(4)
>>> tuple(g.neighbours)
((1, 3), (0, 2), (1, 3), (0, 2))
>>> g.degree, hypercube(8).degree, exponential(8).neighbours[0]
(2, 3, (1, 2, 4))
"""

from __future__ import annotations

import math
import operator
import random
import re
from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, overload

from costmodel._files import read_text
from costmodel._json import to_json_dict
from costmodel.consensus.citations import BATAGELJ_2005, STEGER_1999, YING_2021
from costmodel.errors import InputError, ParseError
from costmodel.exact import parse_number
from costmodel.intmath import ceil_log2, is_power_of_two
from costmodel.names import Names
from costmodel.references import Cited
from costmodel.validate import is_whole, positive, whole

__all__ = [
    "GRAPHS",
    "MAX_EDGES",
    "MAX_P",
    "Circulant",
    "Graph",
    "Star",
    "check_p",
    "complete",
    "erdos_renyi",
    "exponential",
    "from_edges",
    "generate",
    "hypercube",
    "k_ring",
    "load_edge_list",
    "parse_edge_list",
    "random_regular",
    "recognise",
    "resolve_graph",
    "ring",
    "star",
    "torus",
]

MAX_P = 2**24
"""The largest worker count a graph may have (16,777,216)."""
MAX_EDGES = 250_000
"""The most edges of a graph built edge by edge (random-regular, erdos-renyi, an edge list), checked
before building it: a few seconds from drawing to ρ.  The structured graphs (ring, torus, ...) have closed
forms and no such bound."""


def check_p(p: object, *, graph: str = "graph") -> int:
    """Validate a worker count: an integer, 2 ≤ p ≤ :data:`MAX_P`.

    >>> check_p(4)
    4
    """
    return whole(p, "p", low=2, high=MAX_P, hint="give the number of workers, e.g. p=16",
                 small=f"a {graph} for consensus needs at least 2 workers",
                 large=f"costmodel builds graphs of at most {MAX_P:,} workers")


# -- families: the structure closed forms use ------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Circulant:
    """A Cartesian product of circulant graphs: the structure behind rings, tori and hypercubes.

    Factor ``f`` has ``sizes[f]`` nodes and node ``a`` receives from ``a + s (mod sizes[f])`` for
    each ``s`` in ``offsets[f]``; worker ``i`` has mixed-radix coordinates, the first factor
    the most significant.  Undirected when every factor's offset set is symmetric.
    """

    sizes: tuple[int, ...]
    offsets: tuple[tuple[int, ...], ...]

    @property
    def p(self) -> int:
        return math.prod(self.sizes)

    @property
    def degree(self) -> int:
        return sum(len(o) for o in self.offsets)

    @property
    def directed(self) -> bool:
        factors = zip(self.sizes, self.offsets, strict=True)
        return any({(n - s) % n for s in offs} != set(offs) for n, offs in factors)

    def strides(self) -> tuple[int, ...]:
        out, stride = [], 1
        for n in reversed(self.sizes):
            out.append(stride)
            stride *= n
        return tuple(reversed(out))

    def neighbours_of(self, i: int) -> tuple[int, ...]:
        found = set()
        for n, stride, offs in zip(self.sizes, self.strides(), self.offsets, strict=True):
            a = (i // stride) % n
            for s in offs:
                found.add(i + ((a + s) % n - a) * stride)
        return tuple(sorted(found))


@dataclass(frozen=True, slots=True)
class Star:
    """The star on p workers: worker 0 is the hub."""

    p: int

    def neighbours_of(self, i: int) -> tuple[int, ...]:
        return tuple(range(1, self.p)) if i == 0 else (0,)


Family = Circulant | Star


class Adjacency(Sequence[tuple[int, ...]]):
    """The neighbour lists of a structured graph, computed on access (a read-only sequence)."""

    __slots__ = ("_family", "_p")

    def __init__(self, family: Family) -> None:
        self._family = family
        self._p = family.p

    def __len__(self) -> int:
        return self._p

    @overload
    def __getitem__(self, i: int) -> tuple[int, ...]: ...
    @overload
    def __getitem__(self, i: slice) -> tuple[tuple[int, ...], ...]: ...
    def __getitem__(self, i: int | slice) -> Any:
        if isinstance(i, slice):
            return tuple(self[j] for j in range(*i.indices(self._p)))
        j = operator.index(i)
        if j < 0:
            j += self._p
        if not 0 <= j < self._p:
            raise IndexError(f"worker {i} out of range for p={self._p}")
        return self._family.neighbours_of(j)

    def __iter__(self) -> Iterator[tuple[int, ...]]:
        return (self._family.neighbours_of(j) for j in range(self._p))

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Adjacency):
            return self._family == other._family
        if isinstance(other, Sequence):
            return len(other) == self._p and all(a == tuple(b) for a, b in zip(self, other, strict=True))
        return NotImplemented

    def __hash__(self) -> int:
        return hash(self._family)

    def __repr__(self) -> str:
        return f"Adjacency({self._family!r})"


# -- the graph ---------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True)
class Graph:
    """A communication graph: who mixes with whom.

    Parameters
    ----------
    name : str
        The generator's canonical name (``"ring"``, ``"torus"``, ``"edges"``, ...).
    p : int
        Number of workers.
    label : str
        A short description, e.g. ``"2-D torus 4 × 8"``.
    neighbours : sequence of tuple of int
        ``neighbours[i]``: sorted workers that worker i receives from, itself excluded.
    directed : bool
        Whether some worker receives from a worker that does not receive from it.
    family : Circulant, Star or None
        The structure closed forms use, when the graph has one.
    seed : int or None
        The seed of a random graph.
    source : Cited or None
        Where the construction comes from.
    path : str or None
        The edge-list file, for ``edges``.
    notes : tuple of str
    """

    name: str
    p: int
    label: str
    neighbours: Sequence[tuple[int, ...]]
    directed: bool = False
    family: Family | None = None
    seed: int | None = None
    source: Cited | None = None
    path: str | None = None
    notes: tuple[str, ...] = ()

    def degrees(self) -> tuple[int, ...]:
        """Each worker's in-degree (the number of workers it receives from)."""
        if isinstance(self.family, Circulant):
            return (self.family.degree,) * self.p
        return tuple(len(n) for n in self.neighbours)

    def out_degrees(self) -> tuple[int, ...]:
        """Each worker's out-degree (the number of workers it sends to)."""
        if not self.directed:
            return self.degrees()
        if isinstance(self.family, Circulant):
            return (self.family.degree,) * self.p
        counts = [0] * self.p
        for nbrs in self.neighbours:
            for j in nbrs:
                counts[j] += 1
        return tuple(counts)

    @property
    def degree(self) -> int | None:
        """The common degree of a regular graph (in- and out-degree alike), else None."""
        if isinstance(self.family, Circulant):
            return self.family.degree
        if isinstance(self.family, Star):
            return 1 if self.p == 2 else None
        ins = set(self.degrees())
        if len(ins) != 1:
            return None
        if self.directed and set(self.out_degrees()) != ins:
            return None
        return ins.pop()

    @property
    def max_degree(self) -> int:
        """The largest in- or out-degree."""
        if isinstance(self.family, Circulant):
            return self.family.degree
        if isinstance(self.family, Star):
            return self.p - 1
        return max(*self.degrees(), *self.out_degrees())

    @property
    def edge_count(self) -> int:
        """Number of edges (directed edges for a directed graph)."""
        if isinstance(self.family, Circulant):
            total = self.p * self.family.degree
        elif isinstance(self.family, Star):
            total = 2 * (self.p - 1)
        else:
            total = sum(self.degrees())
        return total if self.directed else total // 2

    def to_dict(self) -> dict[str, object]:
        return to_json_dict(self, ("name", "label", "p", "directed", "degree", "max_degree", "edge_count",
                                   "seed", "path", "source"),
                            rename={"name": "graph", "edge_count": "edges", "path": "edges_file",
                                    "source": "graph_source"})


def _structured(name: str, label: str, family: Family, *, source: Cited | None = None,
                notes: tuple[str, ...] = ()) -> Graph:
    directed = isinstance(family, Circulant) and family.directed
    return Graph(name=name, p=family.p, label=label, neighbours=Adjacency(family), directed=directed,
                 family=family, source=source, notes=notes)


def _symmetric_offsets(n: int, distances: Iterable[int]) -> tuple[int, ...]:
    return tuple(sorted({d % n for d in distances} | {-d % n for d in distances} - {0}))


# -- generators ----------------------------------------------------------------------------------------


def ring(p: int) -> Graph:
    """The ring (cycle) of p workers: i ~ i ± 1 (mod p).

    Examples
    --------
    >>> ring(5).neighbours[0], ring(2).neighbours[0]
    ((1, 4), (1,))
    """
    check_p(p, graph="ring")
    return _structured("ring", f"ring of {p}", Circulant((p,), (_symmetric_offsets(p, (1,)),)))


def k_ring(p: int, *, k: int) -> Graph:
    """The k-neighbour ring: i ~ i ± 1, …, i ± k (mod p), degree 2k (less when it wraps onto itself).

    Examples
    --------
    >>> k_ring(8, k=2).neighbours[0]
    (1, 2, 6, 7)
    """
    check_p(p, graph="k-ring")
    positive(k, "k", hint="a k-ring links each worker to k on each side")
    offsets = _symmetric_offsets(p, range(1, min(k, p // 2) + 1))
    notes: tuple[str, ...] = ()
    if len(offsets) == p - 1:
        notes = (f"k={k} links every pair of the {p} workers: this k-ring is the complete graph",)
    return _structured("k-ring", f"{k}-neighbour ring of {p}", Circulant((p,), (offsets,)), notes=notes)


def torus(p: int, *, rows: int | None = None) -> Graph:
    """The 2-D torus rows × cols = p; each worker ~ its 4 grid neighbours, wrapping around.

    *rows* defaults to the largest divisor of p not above √p (the squarest torus).  With 2
    rows (or columns) the up and down neighbours coincide, and the degree is 3.

    Examples
    --------
    >>> torus(16).label, torus(16).degree
    ('2-D torus 4 × 4', 4)
    >>> torus(12, rows=2).label
    '2-D torus 2 × 6'
    """
    check_p(p, graph="torus")
    if rows is None:
        rows = max(r for r in range(1, math.isqrt(p) + 1) if p % r == 0)
        if rows == 1:
            raise InputError(f"p={p} is prime; a 2-D torus needs p = rows × cols with both ≥ 2; "
                             "try the ring, or a p with factors")
    elif not is_whole(rows) or rows < 2 or p % rows or p // rows < 2:
        raise InputError(f"rows={rows!r} does not split p={p} into rows × cols with both ≥ 2; "
                         "give a divisor of p, or leave rows out for the squarest torus")
    cols = p // rows
    family = Circulant((rows, cols), (_symmetric_offsets(rows, (1,)), _symmetric_offsets(cols, (1,))))
    return _structured("torus", f"2-D torus {rows} × {cols}", family)


def hypercube(p: int) -> Graph:
    """The hypercube of dimension log2 p: i ~ i XOR 2^b.

    Examples
    --------
    >>> hypercube(8).neighbours[5]
    (1, 4, 7)
    """
    check_p(p, graph="hypercube")
    if not is_power_of_two(p):
        raise InputError(f"p={p} is not a power of two; a hypercube has 2^d workers, "
                         f"e.g. p={1 << (p.bit_length() - 1)} or {1 << p.bit_length()}")
    d = p.bit_length() - 1
    family = Circulant((2,) * d, ((1,),) * d)
    return _structured("hypercube", f"{d}-dimensional hypercube ({p} workers)", family)


def complete(p: int) -> Graph:
    """The complete graph: every pair of workers is linked.

    Examples
    --------
    >>> complete(4).neighbours[2]
    (0, 1, 3)
    """
    check_p(p, graph="complete graph")
    return _structured("complete", f"complete graph on {p}", Circulant((p,), (tuple(range(1, p)),)))


def star(p: int) -> Graph:
    """The star: worker 0 (the hub) ~ every other worker.

    Examples
    --------
    >>> tuple(star(4).neighbours)
    ((1, 2, 3), (0,), (0,), (0,))
    """
    check_p(p, graph="star")
    return _structured("star", f"star of {p} (hub 0)", Star(p))


def exponential(p: int) -> Graph:
    """The static exponential graph of Ying et al. [1]_: i receives from i + 2^t (mod p).

    t runs over 0 … ⌈log2 p⌉ − 1, so each worker has τ = ⌈log2 p⌉ in- and out-neighbours.
    The graph is directed (worker i + 2^t does not receive from i) except for p ≤ 3;
    its uniform mixing matrix, 1/(τ + 1) on i and each of its τ sources, is circulant and
    doubly stochastic, but not symmetric.

    References
    ----------
    .. [1] B. Ying et al., "Exponential Graph is Provably Efficient for Decentralized Deep
       Training", NeurIPS 2021 (the "static exponential graph").

    Examples
    --------
    >>> g = exponential(8)
    >>> g.neighbours[0], g.directed, g.degree
    ((1, 2, 4), True, 3)
    """
    check_p(p, graph="exponential graph")
    tau = ceil_log2(p)
    offsets = tuple(sorted({(1 << t) % p for t in range(tau)}))
    family = Circulant((p,), (offsets,))
    return _structured("exponential", f"static exponential graph on {p} (τ = {tau})", family,
                       source=YING_2021.at("the static exponential graph"))


def random_regular(p: int, *, degree: int, seed: int | None = None) -> Graph:
    """A random *degree*-regular graph, by the pairing algorithm of Steger and Wormald [1]_.

    Stubs (degree copies of each worker) are paired at random; pairs that would make a
    self-loop or a repeated edge are set aside and re-paired, restarting when none can be.
    The result is close to uniform over regular graphs for small degrees.  *seed* (default
    0) seeds a private :class:`random.Random`.

    Raises
    ------
    InputError
        When p·degree is odd, degree ≥ p or degree < 1, or the graph drawn is disconnected.

    References
    ----------
    .. [1] A. Steger, N. C. Wormald, "Generating random regular graphs quickly",
       Combinatorics, Probability and Computing 8(4), 1999.

    Examples
    --------
    >>> g = random_regular(10, degree=3, seed=1)
    >>> g.degree, g.edge_count, g == random_regular(10, degree=3, seed=1)
    (3, 15, True)
    """
    check_p(p, graph="random regular graph")
    seed = _check_seed(seed)
    whole(degree, "degree", low=1, high=p - 1, expected=f"between 1 and p − 1 = {p - 1}",
          hint="a random regular graph needs 1 ≤ degree < p")
    if p * degree % 2:
        raise InputError(f"p × degree = {p} × {degree} is odd; a regular graph needs an even "
                         f"number of edge ends: change p or the degree")
    _check_edges(p * degree // 2, f"a random {degree}-regular graph on {p} workers has",
                 hint="lower the degree or p")
    rng = random.Random(seed)
    if degree > (p - 1) // 2:  # sparse complement: pair the missing edges instead
        missing = _pairing(p, p - 1 - degree, rng)
        edges = {(u, v) for u in range(p) for v in range(u + 1, p)} - missing
    else:
        edges = _pairing(p, degree, rng)
    label = f"random {degree}-regular graph on {p} (seed {seed})"
    return _explicit("random-regular", p, edges, label=label, seed=seed,
                     source=STEGER_1999.at("pairing, re-pairing the unsuitable pairs"),
                     disconnected_hint="draw again with another seed, or raise the degree")


def _pairing(p: int, d: int, rng: random.Random) -> set[tuple[int, int]]:
    if d == 0:
        return set()
    for _restart in range(100):
        edges: set[tuple[int, int]] = set()
        stubs = [v for v in range(p) for _ in range(d)]
        for _pass in range(10_000):
            rng.shuffle(stubs)
            left: dict[int, int] = defaultdict(int)
            it = iter(stubs)
            for a, b in zip(it, it, strict=False):  # consecutive pairs
                u, v = (a, b) if a < b else (b, a)
                if u != v and (u, v) not in edges:
                    edges.add((u, v))
                else:
                    left[u] += 1
                    left[v] += 1
            if not left:
                return edges
            if not _can_pair(left, edges):
                break
            stubs = [v for v, count in left.items() for _ in range(count)]
    raise InputError(f"no {d}-regular graph on {p} workers was found after 100 restarts; "
                     "try another seed or degree")


def _can_pair(left: dict[int, int], edges: set[tuple[int, int]]) -> bool:
    nodes = sorted(left)
    return any((u, v) not in edges for i, u in enumerate(nodes) for v in nodes[i + 1:])


def erdos_renyi(p: int, *, prob: Any = None, degree: Any = None, seed: int | None = None) -> Graph:
    """The Erdős–Rényi graph G(p, q): each pair is an edge with probability q, independently.

    Give the edge probability *prob*, or the expected *degree* (then q = degree/(p − 1)).
    Edges are drawn by geometric skips (Batagelj and Brandes [1]_), in time linear in the
    number of edges; *seed* (default 0) seeds a private :class:`random.Random`.

    Raises
    ------
    InputError
        When neither or both of *prob* and *degree* are given, q is outside (0, 1], or the
        graph drawn is disconnected (the message says how far q is from ln(p)/p).

    References
    ----------
    .. [1] V. Batagelj, U. Brandes, "Efficient generation of large random networks",
       Physical Review E 71, 036113, 2005, algorithm 1.

    Examples
    --------
    >>> g = erdos_renyi(50, prob=0.2, seed=3)
    >>> g.p, g.seed, g.name
    (50, 3, 'erdos-renyi')
    """
    check_p(p, graph="Erdős–Rényi graph")
    seed = _check_seed(seed)
    q = _edge_probability(p, prob, degree)
    _check_edges(math.ceil(q * p * (p - 1) / 2), f"an Erdős–Rényi graph G({p}, {q:.4g}) has about",
                 hint="lower the edge probability or p")
    rng = random.Random(seed)
    edges: set[tuple[int, int]] = set()
    if q >= 1:
        edges = {(u, v) for u in range(p) for v in range(u + 1, p)}
    else:
        log_q = math.log1p(-q)
        v, w = 1, -1
        while v < p:
            w += 1 + int(math.log1p(-rng.random()) / log_q)
            while w >= v and v < p:
                w -= v
                v += 1
            if v < p:
                edges.add((w, v))
    threshold = math.log(p) / p
    label = f"Erdős–Rényi G({p}, {q:.4g}) (seed {seed})"
    return _explicit("erdos-renyi", p, edges, label=label, seed=seed,
                     source=BATAGELJ_2005.at("algorithm 1 (G(n, p) by geometric skips)"),
                     disconnected_hint=(f"raise the edge probability (q = {q:.3g}; above ln(p)/p = "
                                        f"{threshold:.3g} it is connected with high probability) "
                                        "or try another seed"))


def _check_edges(count: int, what: str, *, hint: str) -> None:
    """Refuse a graph of more than :data:`MAX_EDGES` edges before building it; *what* leads the message.

    >>> _check_edges(2_000_000, "this graph has", hint="lower the degree")
    Traceback (most recent call last):
        ...
    costmodel.errors.InputError: this graph has 2,000,000 edges, more than the 250,000 costmodel builds \
one by one; lower the degree
    """
    if count > MAX_EDGES:
        raise InputError(f"{what} {count:,} edges, more than the {MAX_EDGES:,} costmodel builds one by one; "
                         f"{hint}")


def _edge_probability(p: int, prob: Any, degree: Any) -> float:
    if (prob is None) == (degree is None):
        raise InputError("give one of an edge probability (prob, e.g. 0.1) or an expected degree "
                         "(degree, e.g. 4) for an Erdős–Rényi graph")
    if prob is not None:
        q = _as_float(prob, "prob")
        if not 0 < q <= 1:
            raise InputError(f"prob={prob!r} is not in (0, 1]; an edge probability is a fraction")
        return q
    mean = _as_float(degree, "degree")
    if not 0 < mean <= p - 1:
        raise InputError(f"degree={degree!r} is not in (0, p − 1 = {p - 1}]; give an expected degree")
    return mean / (p - 1)


def _as_float(value: Any, what: str) -> float:
    return float(parse_number(value, what=what))


def _check_seed(seed: object) -> int:
    if seed is None:
        return 0
    return whole(seed, "seed", low=0, hint="give e.g. seed=0")


def from_edges(edges: Iterable[tuple[int, int]], *, p: int | None = None, name: str = "edges",
               label: str | None = None, path: str | None = None) -> Graph:
    """An undirected graph from (u, v) pairs of worker numbers 0 … p − 1.

    *p* defaults to the largest worker number plus one.  Repeated pairs count once;
    self-loops are refused (every worker mixes with itself anyway).

    Raises
    ------
    InputError
        On self-loops, negative or out-of-range workers, or a disconnected graph.

    Examples
    --------
    >>> tuple(from_edges([(0, 1), (1, 2), (2, 0)]).neighbours)
    ((1, 2), (0, 2), (0, 1))
    """
    pairs: set[tuple[int, int]] = set()
    for u, v in edges:
        for w in (u, v):
            if not is_whole(w) or w < 0:
                raise InputError(f"worker {w!r} is not a non-negative integer; number workers 0 … p − 1")
        if u == v:
            raise InputError(f"edge ({u}, {v}) is a self-loop; leave it out, every worker mixes with itself")
        pairs.add((min(u, v), max(u, v)))
    if not pairs:
        raise InputError("the graph has no edges; give at least one (u, v) pair")
    top = max(v for _, v in pairs)
    if p is None:
        p = top + 1
    check_p(p)
    if top >= p:
        raise InputError(f"worker {top} is out of range for p={p}; workers are numbered 0 … {p - 1}")
    return _explicit(name, p, pairs, label=label or f"edge list on {p}", path=path,
                     disconnected_hint="add edges so that every worker is reachable")


def _explicit(name: str, p: int, edges: Iterable[tuple[int, int]], *, label: str, seed: int | None = None,
              source: Cited | None = None, path: str | None = None, disconnected_hint: str = "") -> Graph:
    adjacency: list[list[int]] = [[] for _ in range(p)]
    for u, v in edges:
        adjacency[u].append(v)
        adjacency[v].append(u)
    neighbours = tuple(tuple(sorted(a)) for a in adjacency)
    check_connected(neighbours, label=label, hint=disconnected_hint)
    return Graph(name=name, p=p, label=label, neighbours=neighbours, seed=seed, source=source, path=path)


def check_connected(neighbours: Sequence[Sequence[int]], *, label: str, hint: str) -> None:
    """Raise InputError naming the components when the worker *neighbours* do not form one; *hint* follows."""
    p = len(neighbours)
    seen = bytearray(p)
    seen[0] = 1
    stack = [0]
    while stack:
        for j in neighbours[stack.pop()]:
            if not seen[j]:
                seen[j] = 1
                stack.append(j)
    if all(seen):
        return
    cut = seen.index(0)
    count = _count_components(neighbours)
    tail = f"; {hint}" if hint else ""
    raise InputError(f"{label!r} is disconnected ({count} components; worker {cut} cannot reach worker 0): "
                     f"consensus cannot reach agreement{tail}")


def _count_components(neighbours: Sequence[Sequence[int]]) -> int:
    p = len(neighbours)
    seen = bytearray(p)
    count = 0
    for start in range(p):
        if seen[start]:
            continue
        count += 1
        seen[start] = 1
        stack = [start]
        while stack:
            for j in neighbours[stack.pop()]:
                if not seen[j]:
                    seen[j] = 1
                    stack.append(j)
    return count


_TOKEN = re.compile(r"[\s,]+")


def parse_edge_list(text: str, *, path: str = "<text>", p: int | None = None) -> Graph:
    """An undirected graph from edge-list text: one ``u v`` pair per line (or ``u,v``), ``#`` comments.

    Raises
    ------
    ParseError
        With the line number, on a line that is not two worker numbers, or a self-loop.
    InputError
        When the file has no edges, *p* is too small, or the graph is disconnected.

    Examples
    --------
    >>> g = parse_edge_list("# a triangle\\n0 1\\n1 2\\n2 0\\n")
    >>> g.p, g.degree
    (3, 2)
    """
    pairs: list[tuple[int, int]] = []
    for number, line in enumerate(text.splitlines(), start=1):
        body = line.split("#", 1)[0].strip()
        if not body:
            continue
        tokens = _TOKEN.split(body)
        if len(tokens) != 2 or not all(t.isdigit() and t.isascii() for t in tokens):
            raise ParseError(f"{body!r} is not an edge; write two worker numbers, e.g. '0 1'",
                             path=path, line=number)
        u, v = int(tokens[0]), int(tokens[1])
        if u == v:
            raise ParseError(f"{body!r} is a self-loop; leave it out, every worker mixes with itself",
                             path=path, line=number)
        if max(u, v) >= MAX_P:
            raise ParseError(f"worker {max(u, v)} is beyond the largest supported, {MAX_P - 1}",
                             path=path, line=number)
        pairs.append((u, v))
        if len(pairs) > MAX_EDGES:
            raise ParseError(f"more than {MAX_EDGES:,} edges; costmodel builds at most that many one by one",
                             path=path, line=number)
    if not pairs:
        raise ParseError("no edges found; write one 'u v' pair per line", path=path)
    return from_edges(pairs, p=p, label=f"edge list {Path(path).name}", path=path)


def load_edge_list(path: str | Path, *, p: int | None = None) -> Graph:
    """Read an edge-list file (see :func:`parse_edge_list`).

    Raises
    ------
    ParseError
        When the file cannot be read, or a line is not an edge.
    """
    text = read_text(path, what="the edge list", hint="give a text file of 'u v' lines")
    return parse_edge_list(text, path=str(path), p=p)


def recognise(graph: Graph) -> Circulant | None:
    """The circulant family of *graph* up to relabelling, when it is a cycle or a complete graph.

    A connected graph in which every worker has degree 2 is a cycle; one in which every
    worker has degree p − 1 is complete.  Their spectra are then known in closed form.

    Examples
    --------
    >>> recognise(from_edges([(0, 2), (2, 1), (1, 3), (3, 0)]))
    Circulant(sizes=(4,), offsets=((1, 3),))
    """
    if graph.family is not None:
        return graph.family if isinstance(graph.family, Circulant) else None
    if graph.directed:
        return None
    degrees = set(graph.degrees())
    if degrees == {graph.p - 1}:
        return Circulant((graph.p,), (tuple(range(1, graph.p)),))
    if degrees == {2} and graph.p >= 3:
        return Circulant((graph.p,), ((1, graph.p - 1),))
    return None


# -- matrices of the graph (numpy/scipy imported here only) --------------------------------------


def csr_structure(graph: Graph) -> tuple[Any, Any]:
    """(indptr, indices) of the neighbour lists in CSR form (numpy int64), vectorised for circulant families.

    Row i's neighbours are ``indices[indptr[i]:indptr[i + 1]]``, as in a ``scipy.sparse.csr_array``
    of the adjacency matrix.
    """
    import numpy as np

    family = graph.family
    p = graph.p
    if isinstance(family, Circulant):
        idx = np.arange(p, dtype=np.int64)
        columns: list[np.ndarray] = []
        for n, stride, offs in zip(family.sizes, family.strides(), family.offsets, strict=True):
            a = (idx // stride) % n
            columns.extend(idx + ((a + s) % n - a) * stride for s in offs)
        d = len(columns)
        indices = np.stack(columns, axis=1).reshape(-1) if d else np.zeros(0, dtype=np.int64)
        return np.arange(0, p * d + 1, d, dtype=np.int64), indices
    degrees = np.fromiter((len(n) for n in graph.neighbours), dtype=np.int64, count=p)
    indptr = np.zeros(p + 1, dtype=np.int64)
    np.cumsum(degrees, out=indptr[1:])
    flat = (j for nbrs in graph.neighbours for j in nbrs)
    indices = np.fromiter(flat, dtype=np.int64, count=int(indptr[-1]))
    return indptr, indices


def laplacian_matrix(graph: Graph) -> Any:
    """The graph Laplacian L = D − A as a ``scipy.sparse.csr_array`` of float64 (undirected graphs)."""
    import numpy as np
    from scipy import sparse

    p = graph.p
    indptr, indices = csr_structure(graph)
    adjacency = sparse.csr_array((np.ones(indices.size), indices, indptr), shape=(p, p))
    return sparse.csr_array(sparse.diags_array(np.diff(indptr).astype(float)) - adjacency)


# -- the registry of names ---------------------------------------------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True)
class GraphKind:
    """A named generator: how to build it and which options it takes."""

    name: str
    aliases: tuple[str, ...]
    summary: str
    build: Callable[..., Graph]
    options: tuple[str, ...] = ()


def _build_k_ring(p: int, *, degree: int | None) -> Graph:
    if degree is None:
        raise InputError("the k-ring needs a degree (2k, e.g. degree=4 for two neighbours on each side)")
    if not is_whole(degree) or degree < 2 or degree % 2:
        raise InputError(f"degree={degree!r} is not an even number ≥ 2; a k-ring has degree 2k, "
                         "e.g. degree=4 for k=2")
    check_p(p, graph="k-ring")
    if degree >= p:  # 2k ≥ p wraps onto itself: fewer neighbours than asked, the complete graph
        widest = (p - 1) // 2 * 2
        fix = f"e.g. degree={widest} ({widest // 2} neighbours on each side)" if widest else "use the ring"
        raise InputError(f"degree={degree} is not below p = {p}; a k-ring of {p} workers has degree "
                         f"2k ≤ p − 1 = {p - 1}, {fix}")
    return k_ring(p, k=degree // 2)


def _build_random_regular(p: int, *, degree: int | None, seed: int | None) -> Graph:
    if degree is None:
        raise InputError("a random regular graph needs a degree, e.g. degree=4")
    return random_regular(p, degree=degree, seed=seed)


def _build_edges(p: int | None, *, edges: str | Path | None) -> Graph:
    if edges is None:
        raise InputError("the 'edges' graph needs an edge-list file (edges=PATH, one 'u v' per line)")
    return load_edge_list(edges, p=p)


_KINDS = (
    GraphKind(name="ring", aliases=("cycle",), summary="cycle i ~ i ± 1", build=ring),
    GraphKind(name="k-ring", aliases=("kring", "k-neighbour-ring", "k-neighbor-ring", "circulant"),
              summary="i ~ i ± 1 … i ± k, degree 2k", build=_build_k_ring, options=("degree",)),
    GraphKind(name="torus", aliases=("torus2d", "2d-torus", "2-d-torus"),
              summary="2-D torus rows × cols", build=torus, options=("rows",)),
    GraphKind(name="hypercube", aliases=("cube",), summary="i ~ i XOR 2^b, p a power of two",
              build=hypercube),
    GraphKind(name="complete", aliases=("full", "clique", "all-to-all"), summary="every pair",
              build=complete),
    GraphKind(name="star", aliases=("hub",), summary="worker 0 ~ every other", build=star),
    GraphKind(name="exponential", aliases=("exp", "static-exponential", "exponential-graph"),
              summary="i receives from i + 2^t (Ying et al. 2021)", build=exponential),
    GraphKind(name="random-regular", aliases=("regular", "rrg", "random_regular"),
              summary="random d-regular, seeded", build=_build_random_regular, options=("degree", "seed")),
    GraphKind(name="erdos-renyi", aliases=("er", "gnp", "erdős-rényi", "erdos_renyi", "random"),
              summary="G(p, q), seeded", build=erdos_renyi, options=("prob", "degree", "seed")),
    GraphKind(name="edges", aliases=("edge-list", "edgelist", "file"), summary="an edge-list file",
              build=_build_edges, options=("edges",)),
)


_BY_NAME = {kind.name: kind for kind in _KINDS}
_NAMES = Names("graph", {kind.name: kind.aliases for kind in _KINDS})
GRAPHS: tuple[str, ...] = tuple(k.name for k in _KINDS)
"""The canonical graph names."""


def resolve_graph(name: str) -> GraphKind:
    """The generator named *name* (an alias or any case/underscore spelling).

    Raises
    ------
    UnknownNameError
        With a did-you-mean.

    Examples
    --------
    >>> resolve_graph("Erdos_Renyi").name
    'erdos-renyi'
    """
    return _BY_NAME[_NAMES.resolve(name)]


_OPTION_WORDS = {"degree": "a degree", "rows": "rows", "prob": "an edge probability", "seed": "a seed",
                 "edges": "an edge-list file"}


def generate(name: str, p: int | None = None, **options: Any) -> Graph:
    """Build the graph called *name* on *p* workers; *options* are its parameters.

    The options are ``degree``, ``rows``, ``prob``, ``seed`` and ``edges``; ``None``
    means not given.  An option the graph does not take is refused rather than ignored.

    Raises
    ------
    UnknownNameError
        For an unknown graph name.
    InputError
        When p is missing or invalid, or an option does not apply.

    Examples
    --------
    >>> generate("torus", 12).label
    '2-D torus 3 × 4'
    >>> generate("random-regular", 20, degree=4, seed=7).degree
    4
    """
    kind = resolve_graph(name)
    given = {k: v for k, v in options.items() if v is not None}
    for key in given:
        if key not in _OPTION_WORDS:
            raise TypeError(f"generate() got an unexpected option {key!r}")
        if key not in kind.options:
            takers = [k.name for k in _KINDS if key in k.options]
            raise InputError(f"the {kind.name} graph takes no {key} (only {', '.join(takers)} do); "
                             f"leave out {_OPTION_WORDS[key]}")
    if kind.name == "edges":
        return kind.build(p, **{k: given.get(k) for k in kind.options})
    if p is None:
        raise InputError(f"no worker count given; the {kind.name} graph needs p (the number of workers)")
    return kind.build(p, **{k: given.get(k) for k in kind.options})
