"""The double-binary-tree all-reduce schedule (NCCL's two trees).

Two binary trees of height h = ⌊log2 p⌋ over all p ranks; every rank is an
inner node in at most one of them, so each rank sends at most once per tree
and receives from at most two children in all.  Edges are 2-coloured so that
a rank's two up-edges, and its two child edges, differ; step 2t−1 of a pair
runs the colour-0 edges, step 2t the colour-1 edges, and a block moves one
level per pair (level-synchronous, as the record models it).

References
----------
.. [1] P. Sanders, J. Speck, J. L. Träff, "Two-tree algorithms for full
   bandwidth broadcast, reduction and scan", Parallel Computing 35(12):581-594,
   2009, sections 2-4 (in-order trees, mirroring/shifting, edge colouring).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterator

import numpy as np

from costmodel.errors import InputError
from costmodel.intmath import floor_log2
from costmodel.schedules.model import Group, Op, Schedule, Step, check_ranks
from costmodel.validate import positive, whole

__all__ = ["BUILDERS", "double_binary_tree_allreduce", "two_trees"]


def _natural_parent(x: np.ndarray) -> np.ndarray:
    """Parent of x in the infinite in-order tree: x − b if bit 2b of x is set, else x + b (b = lowest bit)."""
    low = x & -x
    return np.where((x & (2 * low)) != 0, x - low, x + low)


def _inorder_parents(p: int) -> np.ndarray:
    """Parent of each rank in the in-order binary tree on ranks 0 .. p−1 (−1 at the root).

    Rank i sits at x = i + 1 of the infinite in-order tree; an ancestor beyond p is
    skipped for its own parent.  The root is 2^⌊log2 p⌋ − 1, the even ranks are the
    leaves, and the height is ⌊log2 p⌋ (the root's left subtree is complete).
    """
    x = np.arange(1, p + 1, dtype=np.int64)
    top = 1 << floor_log2(p)
    parent = _natural_parent(x)
    parent[top - 1] = 0  # the root: its ancestors all lie beyond p
    while (beyond := parent > p).any():
        parent[beyond] = _natural_parent(parent[beyond])
    return parent - 1


def _depths(parent: np.ndarray) -> np.ndarray:
    depth = np.zeros(parent.size, dtype=np.int64)
    node = np.arange(parent.size, dtype=np.int64)
    while (up := parent[node] >= 0).any():
        depth += up
        node = np.where(up, parent[node], node)
    return depth


def _colour(parents: np.ndarray) -> np.ndarray:
    """Colour 0/1 per edge (tree, child) so that a rank's up-edges differ and its child edges differ.

    The conflicts form paths and even cycles (each edge meets at most one other edge at
    its sender and one at its receiver), so a walk colours them alternately.  Where both
    roots have a single child (p a power of two), their two edges get different colours
    when they lie in different components, so that no step of the last pair of the
    reduction (or the first of the broadcast) idles.
    """
    trees, p = parents.shape
    edge = np.where(parents >= 0, np.arange(trees * p).reshape(trees, p), -1)
    at_sender = np.where(parents >= 0, edge[::-1], -1)  # the same rank's edge in the other tree
    at_receiver = np.full((trees, p), -1, dtype=np.int64)
    for t in range(trees):
        kids = np.flatnonzero(parents[t] >= 0)
        order = kids[np.argsort(parents[t, kids], kind="stable")]
        same = parents[t, order[1:]] == parents[t, order[:-1]]
        left, right = order[:-1][same], order[1:][same]
        at_receiver[t, left], at_receiver[t, right] = edge[t, right], edge[t, left]
    neighbours = np.stack([at_sender.reshape(-1), at_receiver.reshape(-1)], axis=1).tolist()
    colour = np.full(trees * p, -1, dtype=np.int64)
    component = np.full(trees * p, -1, dtype=np.int64)
    for start in np.flatnonzero(edge.reshape(-1) >= 0).tolist():
        if colour[start] >= 0:
            continue
        colour[start], component[start] = 0, start
        todo = deque([start])
        while todo:
            e = todo.popleft()
            for f in neighbours[e]:
                if f >= 0 and colour[f] < 0:
                    colour[f], component[f] = 1 - colour[e], start
                    todo.append(f)
    roots = np.flatnonzero(parents.reshape(-1) < 0) % p
    only = [np.flatnonzero(parents[t] == roots[t]) for t in range(trees)]
    if all(kids.size == 1 for kids in only):
        a, b = int(edge[0, only[0][0]]), int(edge[1, only[1][0]])
        if colour[a] == colour[b] and component[a] != component[b]:
            colour[component == component[b]] ^= 1
    return colour.reshape(trees, p)


def two_trees(p: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The two complementary binary trees of the double-binary-tree all-reduce, and their colouring.

    Tree 0 is the in-order tree on ranks 0 .. p−1 (odd ranks inner, height ⌊log2 p⌋).
    Tree 1 is its mirror image (rank i ↦ p−1−i) for even p and its shift by one
    (i ↦ i+1 mod p) for odd p, so every rank is inner in at most one tree.

    Parameters
    ----------
    p : int
        Ranks, p ≥ 2.

    Returns
    -------
    parents, depths, colours : (2, p) int arrays
        ``parents[t, v]`` is v's parent in tree t (−1 at the root), ``depths[t, v]`` its
        depth, ``colours[t, v]`` the colour (0 or 1) of the edge from v to its parent.

    Raises
    ------
    InputError
        If p < 2.

    References
    ----------
    .. [1] Sanders, Speck and Träff 2009, sections 2-3.

    Examples
    --------
    >>> parents, depths, colours = two_trees(6)
    >>> parents.tolist()
    [[1, 3, 1, -1, 5, 3], [2, 0, -1, 4, 2, 4]]
    >>> depths.max(axis=1).tolist()  # ⌊log2 6⌋
    [2, 2]
    """
    whole(p, "p", low=2, problem="is too few ranks for two trees", hint="use an integer p ≥ 2")
    first = _inorder_parents(p)
    image = p - 1 - np.arange(p, dtype=np.int64) if p % 2 == 0 else (np.arange(p, dtype=np.int64) + 1) % p
    second = np.full(p, -1, dtype=np.int64)
    second[image] = np.where(first >= 0, image[np.maximum(first, 0)], -1)
    parents = np.stack([first, second])
    depths = np.stack([_depths(first), _depths(second)])
    return parents, depths, _colour(parents)


def double_binary_tree_allreduce(p: int, *, root: int = 0, k: int | None = None) -> Schedule:
    """Double-binary-tree all-reduce: pipelined reduce then broadcast over two trees, n/2 each.

    Tree t carries chunks t·k .. t·k + k − 1 (k blocks of n/(2k)).  Reduce: a rank at
    depth d sends block b of tree t to its parent in pair h − d + b + 1 (h = ⌊log2 p⌋),
    in the step of its edge's colour; a parent has both children's block b by then.  The
    broadcast mirrors it: a rank at depth d receives block b in pair d + b.  Each phase
    takes h + k − 1 pairs, 2(h + k − 1) steps of one block.

    Parameters
    ----------
    p : int
        Ranks, p ≥ 4.
    root : int
        Ignored (all-reduce has no root); must name a rank.
    k : int
        Blocks per tree, k ≥ 1 (the record's extra parameter; required, since the best k
        depends on n and the link).

    Returns
    -------
    Schedule
        ``units`` = 2k.

    Raises
    ------
    InputError
        If p < 4, root is not a rank, or k is missing or below 1.

    References
    ----------
    .. [1] Sanders, Speck and Träff 2009, two-tree reduction and broadcast.

    Examples
    --------
    >>> from costmodel.schedules import execute
    >>> s = double_binary_tree_allreduce(8, k=2)
    >>> len(s.transfers())  # 4(h + k - 1), h = 3
    16
    >>> execute(s).ok
    True
    """
    check_ranks(p, root=root)
    if p < 4:
        raise InputError(f"p={p}: below 4 ranks no rank is inner in one tree and a leaf in the other; "
                         "use p ≥ 4")
    if k is None:
        raise InputError("k=None: the double binary tree needs its number of blocks per tree; pass k ≥ 1")
    positive(k, "k", expected="a number of blocks", hint="use an integer k ≥ 1")
    parents, depths, colours = two_trees(p)
    h = floor_log2(p)
    has = parents >= 0
    tree = np.broadcast_to(np.arange(2, dtype=np.int64)[:, None], parents.shape)
    ranks = np.broadcast_to(np.arange(p, dtype=np.int64)[None, :], parents.shape)

    def pairs(first: np.ndarray, op: Op, *, up: bool) -> Iterator[Step]:
        for t in range(1, h + k):
            block = t - first
            for c in (0, 1):
                on = has & (colours == c) & (block >= 0) & (block < k)
                if not on.any():
                    continue
                child, parent = ranks[on], parents[on]
                src, dst = (child, parent) if up else (parent, child)
                yield (Group(src, dst, (tree[on] * k + block[on])[:, None], op),)

    def generate() -> Iterator[Step]:
        yield from pairs(h - depths + 1, "reduce", up=True)
        yield from pairs(depths, "copy", up=False)

    return Schedule(collective="allreduce", algorithm="double-binary-tree", p=p, units=2 * k,
                    generate=generate)


BUILDERS = {
    "double_binary_tree_allreduce": ("allreduce", double_binary_tree_allreduce),
}
"""Builders by name: the ``schedule`` field of a formula record names one of these."""
