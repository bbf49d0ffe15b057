"""One objective over unequal data shards: the sample-weighted loss and gradient.

Worker k holds n_k of the N = Σ n_k samples.  The global mean loss over all
samples is the weighted mean of the local mean losses,

    L(w) = Σ_k (n_k / N) · L_k(w),

not their plain mean, which gives the smallest shard the influence of the
largest.  The same weights combine local mean gradients evaluated at one
common w.  For one synchronous mini-batch step the weights are the samples
each worker contributes to *that step*, b_k / Σ b: equal local mini-batches
use equal weights, unequal ones need sample weighting.

References
----------
.. [1] McMahan et al. 2017, section 2: f(w) = Σ_k (n_k/n) F_k(w); e.g. shards
   of 600, 300 and 100 with losses 0.2, 0.5, 0.9 give 0.36, against about
   0.533 for the plain mean.
.. [2] P. Goyal et al., "Accurate, Large Minibatch SGD: Training ImageNet in
   1 Hour", arXiv:1706.02677, 2017, section 3, Remark 3 (normalise the
   per-worker loss by the total minibatch size kn, not the per-worker n).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from costmodel._json import real
from costmodel.errors import InputError
from costmodel.references import GOYAL_2017, MCMAHAN_2017, Cited
from costmodel.training._common import parse_counts, parse_numbers, parse_vectors, reals
from costmodel.units import format_exact

__all__ = [
    "CITED",
    "WeightedGradient",
    "WeightedLoss",
    "sample_weights",
    "weighted_gradient",
    "weighted_loss",
]

CITED = (GOYAL_2017,)

_SOURCES = (MCMAHAN_2017.at("section 2: f(w) = Σ_k (n_k/n) F_k(w) over shards of unequal size n_k"),
            GOYAL_2017.at("section 3, Remark 3: normalise by the total minibatch size kn"))

_BASES = {
    "sizes": "n_k / N: the samples of each shard over all N (the full-data objective)",
    "batches": "b_k / Σb: the samples each worker contributes to this mini-batch step",
    "weights": "given weights (they sum to 1)",
}


def sample_weights(*, sizes: Any = None, batches: Any = None,
                   weights: Any = None) -> tuple[str, tuple[int, ...] | None, tuple[Fraction, ...]]:
    """The weights of a sample-weighted mean, from exactly one of *sizes*, *batches* or *weights*.

    Returns
    -------
    (basis, counts, weights)
        *basis* names the option used; *counts* are the sample counts (``None``
        for given weights); *weights* sum to 1 exactly.

    Raises
    ------
    InputError
        When none or several are given, a count is not a positive whole
        number, or given weights are negative or do not sum to 1.

    Examples
    --------
    >>> sample_weights(sizes="600,300,100")
    ('sizes', (600, 300, 100), (Fraction(3, 5), Fraction(3, 10), Fraction(1, 10)))
    >>> sample_weights(weights="0.5,0.3,0.1")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
        ...
    costmodel.errors.InputError: weights (1/2, 3/10, 1/10) sum to 9/10, not 1; give weights that sum to 1, ...
    """
    given = {k: v for k, v in (("sizes", sizes), ("batches", batches), ("weights", weights)) if v is not None}
    if len(given) != 1:
        which = " and ".join(f"{k}=" for k in given) + " given" if given else "no weights given"
        raise InputError(f"{which}; give exactly one of sizes= (samples per shard), batches= "
                         "(samples per worker in this step) or weights= (summing to 1)")
    ((basis, value),) = given.items()
    if basis == "weights":
        ws = parse_numbers(value, what="weights", example="0.6,0.3,0.1")
        for i, w in enumerate(ws):
            if w < 0:
                raise InputError(f"weight {i} is {format_exact(w)}, negative; "
                                 "weights must be >= 0 and sum to 1")
        total = sum(ws, Fraction(0))
        if total != 1:
            shown = ", ".join(format_exact(w) for w in ws) if len(ws) <= 8 else f"{len(ws)} weights"
            raise InputError(f"weights ({shown}) sum to {format_exact(total)}, not 1; give weights that sum "
                             "to 1, or give sizes= and let costmodel normalise them")
        return basis, None, ws
    counts = parse_counts(value, what=basis, example="600,300,100" if basis == "sizes" else "32,32,64")
    total_count = sum(counts)
    return basis, counts, tuple(Fraction(c, total_count) for c in counts)


def _basis_fields(basis: str, counts: tuple[int, ...] | None) -> dict[str, object]:
    """The JSON fields that say what the weights come from."""
    return {"basis": basis, "weights_from": _BASES[basis],
            "counts": None if counts is None else list(counts),
            "total_count": None if counts is None else sum(counts)}


def _check_lengths(n_values: int, n_weights: int, *, values: str, basis: str) -> None:
    if n_values != n_weights:
        raise InputError(f"{n_values} {values} but {n_weights} {basis}; give the same number of each, "
                         "one per worker")


@dataclass(frozen=True, slots=True, kw_only=True)
class WeightedLoss:
    """The sample-weighted global loss against the plain mean of the local losses.

    Attributes
    ----------
    basis : str
        ``"sizes"``, ``"batches"`` or ``"weights"``: where the weights come from.
    counts : tuple of int or None
        Samples per worker (``None`` when weights were given).
    losses, weights : tuple of Fraction
        Local mean losses and their weights (summing to 1).
    weighted, unweighted : Fraction
        Σ w_k L_k and (1/m) Σ L_k.
    """

    basis: str
    counts: tuple[int, ...] | None
    losses: tuple[Fraction, ...]
    weights: tuple[Fraction, ...]
    weighted: Fraction
    unweighted: Fraction
    sources: tuple[Cited, ...] = _SOURCES
    notes: tuple[str, ...] = ()

    @property
    def difference(self) -> Fraction:
        """unweighted − weighted."""
        return self.unweighted - self.weighted

    def to_dict(self) -> dict[str, object]:
        return {
            **_basis_fields(self.basis, self.counts),
            "losses": reals(self.losses),
            "weights": reals(self.weights),
            "weighted": real(self.weighted),
            "unweighted": real(self.unweighted),
            "difference": real(self.difference),
            "weights_exact": [format_exact(w) for w in self.weights],
            "weighted_exact": format_exact(self.weighted),
            "unweighted_exact": format_exact(self.unweighted),
            "formula": "L = Σ_k w_k·L_k; plain mean (1/m)·Σ_k L_k",
            "sources": [s.to_dict() for s in self.sources],
            "notes": list(self.notes),
        }


def _notes(basis: str, weights: Sequence[Fraction], *, what: str) -> tuple[str, ...]:
    equal = len(set(weights)) == 1
    notes = [f"weights: {_BASES[basis]}"]
    if equal:
        notes.append(f"equal weights: the weighted and plain mean {what} agree")
    elif basis == "sizes":
        notes.append("the plain mean gives the smallest shard the same influence as the largest; the "
                     f"sample-weighted mean is the full-data objective's {what}")
    elif basis == "batches":
        notes.append("unequal mini-batches need sample weighting; whether the step estimates the full-data "
                     "objective depends on the sampling scheme")
    return tuple(notes)


def weighted_loss(*, losses: Any, sizes: Any = None, batches: Any = None,
                  weights: Any = None) -> WeightedLoss:
    """The sample-weighted mean of local mean losses, against their plain mean.

    Parameters
    ----------
    losses : str or sequence of numbers
        Each worker's mean loss over its samples (``"0.2,0.5,0.9"``); exact decimals.
    sizes, batches : str or sequence of int, optional
        Samples per worker: the whole shard (*sizes*) or this step's local
        mini-batch (*batches*).  Counts take multipliers (``60k``).
    weights : str or sequence of numbers, optional
        Explicit weights, which must be >= 0 and sum to exactly 1.
        Give exactly one of *sizes*, *batches* and *weights*.

    Returns
    -------
    WeightedLoss

    Raises
    ------
    InputError
        For lists of different lengths, counts that are not positive whole
        numbers, weights that do not sum to 1, or none or several of
        *sizes*/*batches*/*weights*.

    References
    ----------
    .. [1] McMahan et al. 2017, section 2 (the sample-weighted objective).

    Examples
    --------
    >>> r = weighted_loss(sizes="600,300,100", losses="0.2,0.5,0.9")
    >>> r.weighted, r.unweighted, r.weights
    (Fraction(9, 25), Fraction(8, 15), (Fraction(3, 5), Fraction(3, 10), Fraction(1, 10)))
    """
    basis, counts, ws = sample_weights(sizes=sizes, batches=batches, weights=weights)
    ls = parse_numbers(losses, what="losses")
    _check_lengths(len(ls), len(ws), values="losses", basis=basis)
    weighted = sum((w * x for w, x in zip(ws, ls, strict=True)), Fraction(0))
    unweighted = sum(ls, Fraction(0)) / len(ls)
    return WeightedLoss(basis=basis, counts=counts, losses=ls, weights=ws, weighted=weighted,
                        unweighted=unweighted, notes=_notes(basis, ws, what="loss"))


@dataclass(frozen=True, slots=True, kw_only=True)
class WeightedGradient:
    """Local mean gradients combined by samples, against their plain mean (vectors, exact)."""

    basis: str
    counts: tuple[int, ...] | None
    gradients: tuple[tuple[Fraction, ...], ...]
    weights: tuple[Fraction, ...]
    weighted: tuple[Fraction, ...]
    unweighted: tuple[Fraction, ...]
    sources: tuple[Cited, ...] = _SOURCES
    notes: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, object]:
        return {
            **_basis_fields(self.basis, self.counts),
            "gradients": [reals(g) for g in self.gradients],
            "weights": reals(self.weights),
            "weighted": reals(self.weighted),
            "unweighted": reals(self.unweighted),
            "weights_exact": [format_exact(w) for w in self.weights],
            "weighted_exact": [format_exact(x) for x in self.weighted],
            "unweighted_exact": [format_exact(x) for x in self.unweighted],
            "formula": "g = Σ_k w_k·g_k; plain mean (1/m)·Σ_k g_k",
            "sources": [s.to_dict() for s in self.sources],
            "notes": list(self.notes),
        }


def weighted_gradient(*, gradients: Any, sizes: Any = None, batches: Any = None,
                      weights: Any = None) -> WeightedGradient:
    """Combine local mean gradients weighted by the samples behind each, against their plain mean.

    Parameters
    ----------
    gradients : str or sequence of vectors
        One mean gradient per worker, all of one length: ``"1,0;2,1;4,-1"``
        (``;`` between workers), or ``"0.1;0.3"`` for scalars.
    sizes, batches, weights
        As for :func:`weighted_loss`: give exactly one.  For a synchronous
        mini-batch step use *batches*, the samples each worker used in it.

    Returns
    -------
    WeightedGradient

    Raises
    ------
    InputError
        As :func:`weighted_loss`, and for gradients of different lengths.

    Notes
    -----
    The identity holds for gradients evaluated at one common parameter
    vector; averaging gradients taken at different local models does not in
    general give the gradient at any one model (seed section 1).

    Examples
    --------
    >>> g = weighted_gradient(gradients="1,0;2,1;4,-1", batches="32,32,64")
    >>> g.weighted, g.unweighted
    ((Fraction(11, 4), Fraction(-1, 4)), (Fraction(7, 3), Fraction(0, 1)))
    >>> weighted_gradient(gradients="1,0;2,1;4,-1", batches="32,32,32").weights
    (Fraction(1, 3), Fraction(1, 3), Fraction(1, 3))
    """
    basis, counts, ws = sample_weights(sizes=sizes, batches=batches, weights=weights)
    gs = parse_vectors(gradients, what="gradients", example="1,0;2,1;4,-1")
    _check_lengths(len(gs), len(ws), values="gradients", basis=basis)
    width = len(gs[0])
    weighted = tuple(sum((w * g[i] for w, g in zip(ws, gs, strict=True)), Fraction(0)) for i in range(width))
    unweighted = tuple(sum((g[i] for g in gs), Fraction(0)) / len(gs) for i in range(width))
    notes = (*_notes(basis, ws, what="gradient"),
             "combine gradients evaluated at one common model: averaging gradients taken at different local "
             "models does not in general give the gradient at any one model")
    return WeightedGradient(basis=basis, counts=counts, gradients=gs, weights=ws, weighted=weighted,
                            unweighted=unweighted, notes=notes)
