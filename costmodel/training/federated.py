"""Federated averaging: the server's weighted mean of client models, with partial participation.

After local training, client k (holding |D_k| samples) returns θ_k; the server
sets θ = Σ_k (|D_k| / |D|) · θ_k.  When some clients do not answer, the
server aggregates whoever responded: each answering client's weight is
renormalised over the answering clients, |D_k| / Σ_{j answered} |D_j|.
Clients are numbered from 0.

References
----------
.. [1] H. B. McMahan, E. Moore, D. Ramage, S. Hampson, B. Agüera y Arcas,
   "Communication-Efficient Learning of Deep Networks from Decentralized
   Data", AISTATS 2017, Algorithm 1 (FederatedAveraging).
.. [2] The same paper, section 2: a fraction C of the clients each round;
   the server averages over the clients that report.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from costmodel.errors import InputError
from costmodel.references import MCMAHAN_2017, Cited
from costmodel.training._common import parse_counts, parse_indices, parse_vectors, reals
from costmodel.units import format_exact

__all__ = ["CITED", "FedAvgRound", "fedavg"]

CITED = (MCMAHAN_2017,)


@dataclass(frozen=True, slots=True, kw_only=True)
class FedAvgRound:
    """One FedAvg aggregation: per-client weights, the new global model, and the plain mean.

    Attributes
    ----------
    sizes : tuple of int
        |D_k| for every client, answering or not.
    models : tuple of vectors
        θ_k for every client (a dropped client's entry is not used).
    participants, dropped : tuple of int
        0-based indices of the clients that answered and of those that did not.
    weights : tuple of Fraction
        The aggregation weight of every client: |D_k| / Σ_{answered} |D_j|, 0 if dropped.
    full_weights : tuple of Fraction
        The weights had every client answered, |D_k| / |D|.
    global_model : tuple of Fraction
        Σ_k weight_k · θ_k.
    unweighted_mean : tuple of Fraction
        The plain mean of the answering clients' models.
    """

    sizes: tuple[int, ...]
    models: tuple[tuple[Fraction, ...], ...]
    participants: tuple[int, ...]
    dropped: tuple[int, ...]
    weights: tuple[Fraction, ...]
    full_weights: tuple[Fraction, ...]
    global_model: tuple[Fraction, ...]
    unweighted_mean: tuple[Fraction, ...]
    sources: tuple[Cited, ...] = (MCMAHAN_2017.at("Algorithm 1 (FederatedAveraging): the server averages the "
                                                  "models of the clients that report, weighted by n_k"),)
    notes: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, object]:
        return {
            "clients": len(self.sizes),
            "sizes": list(self.sizes),
            "participants": list(self.participants),
            "dropped": list(self.dropped),
            "index_base": 0,
            "samples_answered": sum(self.sizes[k] for k in self.participants),
            "models": [reals(m) for m in self.models],
            "weights": reals(self.weights),
            "full_weights": reals(self.full_weights),
            "global_model": reals(self.global_model),
            "unweighted_mean": reals(self.unweighted_mean),
            "weights_exact": [format_exact(w) for w in self.weights],
            "global_model_exact": [format_exact(x) for x in self.global_model],
            "unweighted_mean_exact": [format_exact(x) for x in self.unweighted_mean],
            "formula": "θ = Σ_{k answered} |D_k| / Σ_{j answered} |D_j| · θ_k",
            "sources": [s.to_dict() for s in self.sources],
            "notes": list(self.notes),
        }


def fedavg(models: Any, *, sizes: Any, dropped: Any = None) -> FedAvgRound:
    """Aggregate client models as FedAvg does: θ = Σ |D_k|/|D| · θ_k over the clients that answered.

    Parameters
    ----------
    models : str or sequence of vectors
        Each client's model after local training, ``"1,0;2,1;4,-1"`` (``;``
        between clients, ``,`` between parameters), exact decimals.
    sizes : str or sequence of int
        |D_k|, the samples each client holds (``"100,300,600"``).
    dropped : str, int or sequence of int, optional
        0-based indices of clients that did not answer (``"1"`` or ``"0,2"``).

    Returns
    -------
    FedAvgRound

    Raises
    ------
    InputError
        For different numbers of models and sizes, vectors of different
        lengths, sizes that are not positive whole numbers, a dropped index
        out of range or repeated, or every client dropped.

    References
    ----------
    .. [1] McMahan et al., AISTATS 2017, Algorithm 1.

    Examples
    --------
    >>> r = fedavg("1,0;2,1;4,-1", sizes="100,300,600")
    >>> r.global_model, r.unweighted_mean
    ((Fraction(31, 10), Fraction(-3, 10)), (Fraction(7, 3), Fraction(0, 1)))
    >>> fedavg("1,0;2,1;4,-1", sizes="100,300,600", dropped=1).weights
    (Fraction(1, 7), Fraction(0, 1), Fraction(6, 7))
    """
    ns = parse_counts(sizes, what="sizes", example="100,300,600")
    thetas = parse_vectors(models, what="models", example="1,0;2,1;4,-1")
    if len(thetas) != len(ns):
        raise InputError(f"{len(thetas)} models but {len(ns)} sizes; give one model and one size per client")
    out = parse_indices(dropped, n=len(ns), what="dropped clients")
    answered = tuple(k for k in range(len(ns)) if k not in out)
    if not answered:
        raise InputError(f"every client is dropped ({', '.join(map(str, out))}); at least one must answer")
    total = sum(ns[k] for k in answered)
    weights = tuple(Fraction(ns[k], total) if k in answered else Fraction(0) for k in range(len(ns)))
    everyone = sum(ns)
    full = tuple(Fraction(n, everyone) for n in ns)
    width = len(thetas[0])
    global_model = tuple(sum((weights[k] * thetas[k][i] for k in answered), Fraction(0))
                         for i in range(width))
    plain = tuple(sum((thetas[k][i] for k in answered), Fraction(0)) / len(answered) for i in range(width))
    notes = ["clients are numbered from 0"]
    if out:
        names = ", ".join(map(str, out))
        notes.append(f"client{'s' if len(out) > 1 else ''} {names} did not answer: weights renormalised over "
                     f"the {len(answered)} that did (|D_k| / {total} instead of |D_k| / {everyone}); "
                     "the dropped models are not used")
    if len({ns[k] for k in answered}) == 1:
        notes.append("equal client sizes: the weighted and plain means agree")
    return FedAvgRound(sizes=ns, models=thetas, participants=answered, dropped=out, weights=weights,
                       full_weights=full, global_model=global_model, unweighted_mean=plain,
                       notes=tuple(notes))
