"""Communication volume of training patterns: parameter servers, tensor and expert parallelism, staleness.

* **Parameter server** (one step of synchronous data parallelism, model of n
  bytes, N workers, S server shards): every worker pushes n bytes of
  gradients and pulls n bytes of parameters, so the servers receive N·n and
  send N·n bytes per step, N·n/S each: the hot spot.  A ring all-reduce
  instead sends 2(N − 1)/N · n bytes per worker, spread evenly.
* **Tensor parallelism** (Megatron-LM): each transformer block all-reduces
  the activations (b·s·h elements) twice in the forward pass (after the
  attention and the MLP) and twice in the backward pass.
* **Expert parallelism** (mixture of experts): each MoE layer runs two
  all-to-alls in the forward pass, dispatch and combine, each moving a GPU's
  routed tokens (tokens · top-k · h elements, times the capacity factor c
  when each expert's block is padded to c·k·T/E tokens); with uniform routing
  over experts spread evenly on G GPUs, a fraction (G − 1)/G of it leaves the
  GPU.  The backward pass repeats both.
* **Staleness**: BSP reads are never stale; SSP with bound s lets the fastest
  worker be at most s clocks ahead of the slowest; ASP has no bound, and with
  N equal-speed workers the expected staleness is N − 1 updates.

Times use the α–β model through :func:`costmodel.collectives.evaluate.cost`.

References
----------
.. [1] M. Li et al., "Scaling Distributed Machine Learning with the Parameter
   Server", OSDI 2014; J. Dean et al., "Large Scale Distributed Deep
   Networks", NIPS 2012 (Downpour SGD).
.. [2] M. Shoeybi et al., "Megatron-LM: Training Multi-Billion Parameter
   Language Models Using Model Parallelism", arXiv:1909.08053, 2019,
   section 3 and Figure 4.
.. [3] W. Fedus, B. Zoph, N. Shazeer, "Switch Transformers", JMLR 23(120),
   2022; D. Lepikhin et al., "GShard", ICLR 2021.
.. [4] Q. Ho et al., "More Effective Distributed ML via a Stale Synchronous
   Parallel Parameter Server", NIPS 2013; I. Mitliagkas, C. Zhang,
   S. Hadjis, C. Ré, "Asynchrony begets Momentum, with an Application to
   Deep Learning", Allerton 2016.
.. [5] J. Dean et al., "Large Scale Distributed Deep Networks", NIPS 2012.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from costmodel._json import real
from costmodel.collectives.result import AlgorithmCost
from costmodel.errors import InputError
from costmodel.exact import parse_number
from costmodel.params import LinkParams
from costmodel.references import (
    DEAN_2012,
    FEDUS_2022,
    HO_2013,
    LEPIKHIN_2021,
    LI_2014,
    MITLIAGKAS_2016,
    SHOEYBI_2019,
    Cited,
)
from costmodel.training._common import optional_link, positive_int
from costmodel.training.counts import Dtype, parse_count, parse_dtype
from costmodel.units import parse_size

__all__ = [
    "CITED",
    "MoETraffic",
    "PSTraffic",
    "Staleness",
    "TensorParallelTraffic",
    "moe_traffic",
    "ps_traffic",
    "staleness",
    "tensor_parallel_traffic",
]

CITED = (LI_2014, DEAN_2012, SHOEYBI_2019, FEDUS_2022, LEPIKHIN_2021, HO_2013, MITLIAGKAS_2016)

_FREE = LinkParams(alpha_s=Fraction(0), beta_s_per_byte=Fraction(0), source="bytes only")


def _ring(collective: str, p: int, n: Fraction, link: LinkParams | None,
          algorithm: str = "ring") -> AlgorithmCost:
    from costmodel.collectives.evaluate import cost

    return cost(collective, algorithm, p=p, n=n, link=link or _FREE)


def _cost_dict(c: AlgorithmCost, link: LinkParams | None) -> dict[str, object]:
    out = {"algorithm": c.algorithm, "rounds": c.rounds, "bytes_sent_per_rank": real(c.bytes_sent_per_rank),
           "formula": c.formula}
    out["time_s"] = None if link is None else real(c.time_s)
    return out


def _link_fields(link: LinkParams | None) -> dict[str, object]:
    if link is None:
        return {"alpha_s": None, "beta_s_per_byte": None, "gamma_s_per_byte": None, "link_source": None}
    return link.result_fields()


# -- parameter server -----------------------------------------------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True)
class PSTraffic:
    """Bytes per synchronous step at a (sharded) parameter server, against a ring all-reduce."""

    workers: int
    servers: int
    model_bytes: Fraction
    link: LinkParams | None
    ring: AlgorithmCost
    ps_time_s: Fraction | None
    sources: tuple[Cited, ...]
    notes: tuple[str, ...] = ()

    @property
    def server_bytes_in(self) -> Fraction:
        """Bytes each server receives per step: N pushes of its n/S shard."""
        return self.workers * self.model_bytes / self.servers

    @property
    def server_bytes_out(self) -> Fraction:
        """Bytes each server sends per step: N pulls of its n/S shard."""
        return self.workers * self.model_bytes / self.servers

    @property
    def ring_bytes_sent_per_worker(self) -> Fraction:
        return self.ring.bytes_sent_per_rank

    @property
    def hot_spot_ratio(self) -> Fraction:
        """Bytes into one server over bytes sent by one ring worker: N²/(2S(N − 1))."""
        return self.server_bytes_in / self.ring_bytes_sent_per_worker

    def to_dict(self) -> dict[str, object]:
        return {
            "workers": self.workers, "servers": self.servers, "model_bytes": real(self.model_bytes),
            "server_bytes_in": real(self.server_bytes_in), "server_bytes_out": real(self.server_bytes_out),
            "servers_bytes_in_total": real(self.workers * self.model_bytes),
            "servers_bytes_out_total": real(self.workers * self.model_bytes),
            "worker_bytes_out": real(self.model_bytes), "worker_bytes_in": real(self.model_bytes),
            "ring_bytes_sent_per_worker": real(self.ring_bytes_sent_per_worker),
            "ring_bytes_received_per_worker": real(self.ring_bytes_sent_per_worker),
            "hot_spot_ratio": real(self.hot_spot_ratio),
            **_link_fields(self.link),
            "ps_time_s": None if self.ps_time_s is None else real(self.ps_time_s),
            "ring_time_s": None if self.link is None else real(self.ring.time_s),
            "ring": _cost_dict(self.ring, self.link),
            "formula": "per server: N·n/S in and N·n/S out; ring: 2(N − 1)/N·n sent per worker",
            "sources": [s.to_dict() for s in self.sources],
            "notes": list(self.notes),
        }


def ps_traffic(n: Any, *, workers: int, servers: int = 1, link: LinkParams | None = None, alpha: Any = None,
               beta: Any = None, bandwidth: Any = None, profile: Any = None) -> PSTraffic:
    """Per-step traffic at a parameter server (N pushes and N pulls of the model) against a ring all-reduce.

    Parameters
    ----------
    n : int, Fraction or str
        Model (and gradient) size in bytes, ``"400MB"``.
    workers : int
        N, workers pushing gradients and pulling parameters every step (≥ 2).
    servers : int, default 1
        S, server shards; each holds n/S bytes of the model.
    link, alpha, beta, bandwidth, profile : optional
        A link for times (α defaults to 0 when only a rate is given).

    Returns
    -------
    PSTraffic

    Raises
    ------
    InputError
        For fewer than 2 workers, a non-positive server count, or a bad size or link.

    Notes
    -----
    Times, when a link is given: the server receives its N pushes one after
    another (one port), then sends the N pulls, servers working in parallel:
    2·max(N·(α + (n/S)·β), S·α + n·β); the second term is a worker's own S
    messages.  The ring all-reduce is :func:`~costmodel.collectives.evaluate.cost`'s.

    References
    ----------
    .. [1] Li et al., OSDI 2014 (parameter server architecture).

    Examples
    --------
    >>> t = ps_traffic("400MB", workers=16)
    >>> t.server_bytes_in, t.ring_bytes_sent_per_worker  # 16 × 400 MB; 2 · 15/16 · 400 MB
    (Fraction(6400000000, 1), Fraction(750000000, 1))
    """
    size = parse_size(n, allow_zero=False)
    big_n = positive_int(workers, what="workers", hint="give the number of workers, e.g. workers=16")
    if big_n < 2:
        raise InputError(f"workers={big_n} is too few; "
                         "a parameter server and an all-reduce need at least 2 workers")
    s = positive_int(servers, what="servers", hint="give the number of server shards, e.g. servers=4")
    used = optional_link(link=link, alpha=alpha, beta=beta, bandwidth=bandwidth, profile=profile)
    ring = _ring("allreduce", big_n, size, used)
    ps_time = None
    if used is not None:
        a, b = used.alpha_s, used.beta_s_per_byte
        ps_time = 2 * max(big_n * (a + size / s * b), s * a + size * b)
    notes = ["per step of synchronous data parallelism: each worker pushes n bytes of gradients and pulls n "
             "bytes of parameters; the servers receive N pushes and send N pulls"]
    if s > 1:
        notes.append(f"sharded over {s} servers: each holds n/{s} of the model and handles N·n/{s} each way")
    notes.append("ring all-reduce: every worker sends and receives 2(N − 1)/N·n, no hot spot")
    sources = (LI_2014.at("section 3 (architecture: workers push and pull, server groups)"),)
    return PSTraffic(workers=big_n, servers=s, model_bytes=size, link=used, ring=ring, ps_time_s=ps_time,
                     sources=sources, notes=tuple(notes))


# -- tensor parallelism ---------------------------------------------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True)
class TensorParallelTraffic:
    """All-reduces and bytes of Megatron tensor parallelism per transformer block."""

    batch: int
    seq: int
    hidden: int
    tp: int
    dtype: Dtype
    layers: int
    allreduce: AlgorithmCost
    link: LinkParams | None
    sources: tuple[Cited, ...]
    notes: tuple[str, ...] = ()

    allreduces_forward = 2
    allreduces_backward = 2

    @property
    def allreduce_bytes(self) -> int:
        """n of each all-reduce: the b·s·h activation tensor."""
        return self.batch * self.seq * self.hidden * self.dtype.bytes_per_element

    @property
    def allreduces_per_block(self) -> int:
        return self.allreduces_forward + self.allreduces_backward

    def to_dict(self) -> dict[str, object]:
        per = self.allreduce.bytes_sent_per_rank
        time = None if self.link is None else self.allreduce.time_s
        k = self.allreduces_per_block

        def t(x: int) -> int | float | None:
            return None if time is None else real(x * time)

        return {
            "batch": self.batch, "seq": self.seq, "hidden": self.hidden, "tp": self.tp,
            "dtype": self.dtype.name,
            "layers": self.layers,
            "allreduce_bytes": self.allreduce_bytes,
            "allreduces_forward_per_block": self.allreduces_forward,
            "allreduces_backward_per_block": self.allreduces_backward,
            "allreduces_per_block": k,
            "bytes_sent_per_rank_per_allreduce": real(per),
            "bytes_sent_per_rank_per_block": real(k * per),
            "bytes_sent_per_rank_per_step": real(self.layers * k * per),
            **_link_fields(self.link),
            "allreduce_time_s": t(1),
            "block_forward_time_s": t(self.allreduces_forward),
            "block_time_s": t(k),
            "step_time_s": t(self.layers * k),
            "allreduce": _cost_dict(self.allreduce, self.link),
            "formula": "n = b·s·h·bytes; 2 all-reduces forward + 2 backward per block",
            "sources": [s.to_dict() for s in self.sources],
            "notes": list(self.notes),
        }


def tensor_parallel_traffic(*, batch: Any, seq: Any, hidden: Any, tp: int, dtype: Any = "bf16",
                            layers: int = 1, algorithm: str = "ring", link: LinkParams | None = None,
                            alpha: Any = None, beta: Any = None, bandwidth: Any = None,
                            profile: Any = None) -> TensorParallelTraffic:
    """Megatron tensor parallelism: 4 all-reduces of the b·s·h activations per transformer block.

    Parameters
    ----------
    batch, seq, hidden : int or str
        b (micro-batch), s (sequence length), h (hidden size).
    tp : int
        t, the tensor-parallel group size (≥ 2); the all-reduces run over it.
    dtype : str, default "bf16"
        Activation data type.
    layers : int, default 1
        Transformer blocks, for the per-step totals.
    algorithm : str, default "ring"
        The all-reduce algorithm (any registered name or alias).
    link, alpha, beta, bandwidth, profile : optional
        A link for times (α defaults to 0 when only a rate is given).

    Returns
    -------
    TensorParallelTraffic

    Raises
    ------
    InputError
        For t < 2, non-positive sizes, an unknown dtype or algorithm.

    References
    ----------
    .. [1] Shoeybi et al., arXiv:1909.08053, section 3, Figure 4: two
       all-reduces in the forward pass and two in the backward pass of a
       transformer layer.

    Examples
    --------
    >>> tp = tensor_parallel_traffic(batch=1, seq=2048, hidden=12288, tp=8)
    >>> tp.allreduce_bytes, tp.allreduce.bytes_sent_per_rank  # 2048·12288·2 B; 2·7/8 of it
    (50331648, Fraction(88080384, 1))
    """
    b, s, h = parse_count(batch), parse_count(seq), parse_count(hidden)
    t = positive_int(tp, what="tp", hint="give the tensor-parallel size, e.g. tp=8")
    if t < 2:
        raise InputError(f"tp={t} needs no tensor-parallel communication; give tp=2 or more")
    kind = parse_dtype(dtype)
    blocks = positive_int(layers, what="layers", hint="give the number of transformer blocks")
    used = optional_link(link=link, alpha=alpha, beta=beta, bandwidth=bandwidth, profile=profile)
    n = b * s * h * kind.bytes_per_element
    c = _ring("allreduce", t, Fraction(n), used, algorithm)
    notes = ("Megatron-LM splits the attention and the MLP so that each needs one all-reduce in the forward "
             "pass (g) and one in the backward pass (f): 2 + 2 per block, each of the b·s·h activations",
             "counting the forward pass only gives attention + MLP = 2 per block",
             "with sequence parallelism each all-reduce becomes a reduce-scatter plus an all-gather: the "
             "same bytes (Korthikanti et al. 2022)")
    sources = (SHOEYBI_2019.at("section 3, Figure 4"),)
    return TensorParallelTraffic(batch=b, seq=s, hidden=h, tp=t, dtype=kind, layers=blocks, allreduce=c,
                                 link=used, sources=sources, notes=notes)


# -- expert parallelism ---------------------------------------------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True)
class MoETraffic:
    """All-to-all volume of one mixture-of-experts layer under uniform routing."""

    tokens: int
    hidden: int
    experts: int
    ep: int
    top_k: int
    dtype: Dtype
    alltoall: AlgorithmCost
    link: LinkParams | None
    sources: tuple[Cited, ...]
    notes: tuple[str, ...] = ()
    capacity_factor: Fraction = Fraction(1)

    alltoalls_forward = 2
    alltoalls_backward = 2

    @property
    def send_buffer_bytes(self) -> Fraction:
        """n of each all-to-all: a GPU's routed tokens, c · tokens · top-k · h elements (c the capacity
        factor: each expert's block padded to c·k·T/E tokens)."""
        return self.capacity_factor * self.tokens * self.top_k * self.hidden * self.dtype.bytes_per_element

    @property
    def fraction_leaving(self) -> Fraction:
        """(G − 1)/G: the share of routed tokens whose expert lives on another GPU."""
        return Fraction(self.ep - 1, self.ep)

    @property
    def bytes_leaving_per_alltoall(self) -> Fraction:
        return self.fraction_leaving * self.send_buffer_bytes

    def to_dict(self) -> dict[str, object]:
        leaving = self.bytes_leaving_per_alltoall
        time = None if self.link is None else self.alltoall.time_s

        def t(x: int) -> int | float | None:
            return None if time is None else real(x * time)

        return {
            "tokens": self.tokens, "hidden": self.hidden, "experts": self.experts, "ep": self.ep,
            "top_k": self.top_k, "dtype": self.dtype.name, "capacity_factor": real(self.capacity_factor),
            "send_buffer_bytes": real(self.send_buffer_bytes),
            "fraction_leaving": real(self.fraction_leaving),
            "bytes_leaving_per_alltoall": real(leaving),
            "alltoalls_forward_per_layer": self.alltoalls_forward,
            "alltoalls_backward_per_layer": self.alltoalls_backward,
            "bytes_leaving_per_layer_forward": real(self.alltoalls_forward * leaving),
            "bytes_leaving_per_layer_step": real(
                (self.alltoalls_forward + self.alltoalls_backward) * leaving),
            **_link_fields(self.link),
            "alltoall_time_s": t(1),
            "layer_forward_time_s": t(self.alltoalls_forward),
            "layer_step_time_s": t(self.alltoalls_forward + self.alltoalls_backward),
            "alltoall": _cost_dict(self.alltoall, self.link),
            "formula": "n = c·tokens·k·h·bytes per all-to-all; (G − 1)/G·n leaves the GPU; 2 per layer "
                       "forward (dispatch, combine), 2 more backward",
            "sources": [s.to_dict() for s in self.sources],
            "notes": list(self.notes),
        }


def moe_traffic(*, tokens: Any, hidden: Any, experts: int, ep: int | None = None, top_k: int = 1,
                dtype: Any = "bf16", capacity_factor: Any = None, algorithm: str = "pairwise",
                link: LinkParams | None = None, alpha: Any = None, beta: Any = None, bandwidth: Any = None,
                profile: Any = None) -> MoETraffic:
    """All-to-all bytes of one MoE layer: dispatch and combine, uniform routing over the experts.

    Parameters
    ----------
    tokens : int or str
        Tokens on each GPU in the layer's input (micro-batch × sequence).
    hidden : int or str
        h, the model's hidden size.
    experts : int
        E, experts in the layer.
    ep : int, optional
        G, GPUs of the expert-parallel group, holding E/G experts each
        (default E: one expert per GPU); G must divide E.
    top_k : int, default 1
        Experts each token is routed to (1 for Switch, 2 for GShard/Mixtral).
    dtype : str, default "bf16"
    capacity_factor : number, optional
        c > 0: each expert takes a block of c·k·T/E tokens (Fedus et al. 2022, equation (3)), padded
        when fewer are routed to it, so each all-to-all carries c times the routed tokens; default 1
        (no padding, nothing dropped).
    algorithm : str, default "pairwise"
        The all-to-all algorithm, for times.
    link, alpha, beta, bandwidth, profile : optional
        A link for times (α defaults to 0 when only a rate is given).

    Returns
    -------
    MoETraffic

    Raises
    ------
    InputError
        For G < 2, G not dividing E, top-k above E, non-positive sizes.

    Notes
    -----
    The model: every token picks its k experts uniformly at random (a
    perfectly balanced router), so a fraction (G − 1)/G of a GPU's routed
    tokens goes to other GPUs and as many come back in the combine.  With a
    capacity factor c the dispatch buffers are sized for c·k·T/E tokens per
    expert and sent whole, padding included (Megatron-Core's token dispatcher
    with ``moe_pad_expert_input_to_capacity``; the step model's send buffer),
    so every byte count is c times that of c = 1.

    References
    ----------
    .. [1] Fedus et al., JMLR 2022 (dispatch and combine; the expert capacity,
       equation (3)); Lepikhin et al., ICLR 2021.

    Examples
    --------
    >>> m = moe_traffic(tokens=4096, hidden=4096, experts=8)
    >>> m.send_buffer_bytes, m.fraction_leaving  # 4096·4096·2 B; 7/8 leaves
    (Fraction(33554432, 1), Fraction(7, 8))
    >>> moe_traffic(tokens=4096, hidden=4096, experts=8, top_k=2, capacity_factor="1.25").send_buffer_bytes
    Fraction(83886080, 1)
    """
    t = parse_count(tokens)
    h = parse_count(hidden)
    e = positive_int(experts, what="experts", hint="give the number of experts, e.g. experts=8")
    g = e if ep is None else positive_int(ep, what="ep", hint="give the expert-parallel GPUs, e.g. ep=8")
    if g < 2:
        raise InputError(f"ep={g} keeps every expert on one GPU; expert parallelism needs ep=2 or more "
                         "(default: one GPU per expert)")
    if e % g:
        raise InputError(f"ep={g} does not divide the {e} experts; spread the experts evenly, E/G per GPU")
    k = positive_int(top_k, what="top_k", hint="give the experts per token, e.g. top_k=2")
    if k > e:
        raise InputError(f"top_k={k} is more than the {e} experts; a token picks at most E experts")
    kind = parse_dtype(dtype)
    cf = _capacity(capacity_factor)
    used = optional_link(link=link, alpha=alpha, beta=beta, bandwidth=bandwidth, profile=profile)
    n = cf * t * k * h * kind.bytes_per_element
    c = _ring("alltoall", g, n, used, algorithm)
    padding = ("capacity factor 1, nothing dropped or padded" if cf == 1 else
               f"capacity factor {real(cf)}: each expert's block sized for c·k·T/E tokens and sent padded")
    notes = (f"uniform routing: each token's {k} expert{'s' if k > 1 else ''} are chosen uniformly among "
             f"{e}, {e // g} per GPU on {g} GPUs, so (G − 1)/G = {g - 1}/{g} of the routed tokens leave the "
             f"GPU ({padding})",
             "2 all-to-alls per MoE layer in the forward pass (dispatch to the experts, combine back) and 2 "
             "in the backward pass")
    sources = (FEDUS_2022.at("Switch layer, expert parallelism: dispatch and combine; equation (3), the "
                             "expert capacity"),
               LEPIKHIN_2021.at("MoE layer: dispatch and combine all-to-alls"))
    return MoETraffic(tokens=t, hidden=h, experts=e, ep=g, top_k=k, dtype=kind, alltoall=c, link=used,
                      sources=sources, notes=notes, capacity_factor=cf)


def _capacity(value: Any) -> Fraction:
    """A capacity factor read: 1 for ``None``, else a number > 0."""
    if value is None:
        return Fraction(1)
    shown = str(value).strip()  # "1.25", 5/4: as written
    try:
        factor = parse_number(value, what="capacity factor")
    except InputError as exc:
        raise InputError(f"capacity_factor={shown}: {exc}") from None
    if factor <= 0:
        raise InputError(f"capacity_factor={shown} is not positive; give the tokens an expert takes over "
                         "its fair share k·T/E, e.g. capacity_factor=1.25 (Switch Transformers)")
    return factor


# -- staleness ------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True)
class Staleness:
    """How stale the parameters a worker reads can be under BSP, SSP (bound s) and ASP."""

    workers: int
    bound: int | None
    sources: tuple[Cited, ...]
    notes: tuple[str, ...] = ()

    @property
    def asp_expected_staleness(self) -> int:
        """N − 1 updates, for N equal-speed workers."""
        return self.workers - 1

    @property
    def ssp_max_unseen_updates(self) -> int | None:
        """Updates a read may miss under SSP: the last s clocks of the N − 1 other workers."""
        return None if self.bound is None else self.bound * (self.workers - 1)

    def to_dict(self) -> dict[str, object]:
        return {
            "workers": self.workers,
            "bound": self.bound,
            "bsp_staleness": 0,
            "ssp_max_staleness": self.bound,
            "ssp_max_clock_gap": self.bound,
            "ssp_max_unseen_updates": self.ssp_max_unseen_updates,
            "asp_max_staleness": None,
            "asp_expected_staleness": self.asp_expected_staleness,
            "sources": [s.to_dict() for s in self.sources],
            "notes": list(self.notes),
        }


def staleness(*, workers: int, bound: int | None = None) -> Staleness:
    """Staleness under BSP (0), SSP with bound s (at most s clocks) and ASP (unbounded, N − 1 expected).

    Parameters
    ----------
    workers : int
        N, workers sharing the parameters (≥ 1).
    bound : int, optional
        s, the SSP staleness bound in clocks (iterations); 0 is BSP.

    Returns
    -------
    Staleness

    Notes
    -----
    SSP: a worker at clock c may run at most s clocks ahead of the slowest
    worker, and its read is guaranteed to contain every update from clocks up
    to c − s − 1; it may miss at most the s most recent clocks of each other
    worker, s·(N − 1) updates.  ASP: no bound; with N equal-speed workers
    committing in turn (a queue), N − 1 other updates land between a
    worker's read and its own update, the expected staleness of Mitliagkas
    et al. (staleness is geometric with mean N − 1).

    References
    ----------
    .. [1] Ho et al., NIPS 2013, section 2 (bounded staleness).
    .. [2] Mitliagkas et al., Allerton 2016 (E[τ] = N − 1).
    .. [3] Dean et al., NIPS 2012 (Downpour SGD, asynchronous).

    Examples
    --------
    >>> s = staleness(workers=16, bound=3)
    >>> s.asp_expected_staleness, s.ssp_max_unseen_updates
    (15, 45)
    """
    n = positive_int(workers, what="workers", hint="give the number of workers, e.g. workers=16")
    s = None if bound is None else positive_int(bound, what="bound", allow_zero=True,
                                                hint="give the SSP bound in clocks, e.g. 3")
    notes = ["staleness counts the updates (or clocks) applied to the parameters between a worker's read and "
             "its own update",
             "BSP: every worker waits at the barrier, so reads are never stale (0)"]
    if s is not None:
        notes.append(f"SSP with s = {s}: the fastest worker is at most {s} clocks ahead of the slowest; a "
                     f"read at clock c contains every update up to clock c − {s} − 1")
    notes.append(f"ASP: no bound; with {n} equal-speed worker{'s' if n > 1 else ''} "
                 f"the expected staleness is N − 1 = {n - 1} updates")
    sources = (HO_2013.at("section 2"), MITLIAGKAS_2016.at("queueing model of staleness, E[τ] = N − 1"),
               DEAN_2012.at("Downpour SGD"))
    return Staleness(workers=n, bound=s, sources=sources, notes=tuple(notes))
