"""Worked examples on collective algorithms: rounds, bytes, α–β times, crossovers, bus bandwidth.

Every number comes from the library: the formula registry
(``costmodel.collectives``) through :meth:`Work.cost`, the explicit schedules
(``costmodel.schedules``), :func:`costmodel.bound`, :func:`costmodel.crossover`
and :mod:`costmodel.collectives.busbw`.  Sources are Thakur, Rabenseifner &
Gropp 2005 (the α–β costs of the classic algorithms), Patarasuk & Yuan 2009
(the ring), nccl-tests' performance notes, and the references of the records used.

The examples:

- ``allreduce-sum``: what a sum all-reduce leaves on every worker;
- ``ring-bytes``: rounds and bytes of ring all-reduce;
- ``ring-vs-naive``: ring against a naive root, and the bandwidth lower bound;
- ``four-formulas``: ring, tree, recursive doubling and Rabenseifner times;
- ``tree-levels``, ``recursive-doubling-bytes``, ``recursive-halving-bytes``,
  ``rabenseifner-vs-ring``: the schedules, round by round;
- ``choose-by-size``, ``ring-calculation``, ``startups-decide``, ``crossover-rd-rab``,
  ``ring-vs-rabenseifner``: choosing an algorithm by message size;
- ``crossover-pair``: the crossover of any two all-reduce algorithms;
- ``bus-bandwidth``, ``model-busbw``: nccl-tests' algbw and busbw, measured and modelled.
"""

from __future__ import annotations

from fractions import Fraction
from typing import Any

from costmodel.errors import InputError
from costmodel.examples import example
from costmodel.examples.kinds import (
    COUNT,
    FORMULA,
    INVERSE_RATE,
    NAME,
    NUMBER,
    NUMBERS,
    RATE,
    SIZE,
    TIME,
    show_exact,
)
from costmodel.examples.work import Given, Work

P = Given("p", "workers", COUNT, 4, "p")
N = Given("n", "tensor size", SIZE, "100 MB", "n")
ALPHA = Given("alpha", "start-up latency", TIME, "5 us", "α")
BETA = Given("beta", "time per byte", INVERSE_RATE, "0.08 ns/B", "β")

_NAMES = {"ring": "ring", "recursive-doubling": "recursive doubling", "rabenseifner": "Rabenseifner",
          "tree": "tree", "naive": "naive root"}


def _size(x: Any) -> str:
    """A size in its decimal unit only (``66.67 MB``), for use inside an expression."""
    return SIZE.term(x).split(" = ")[0]


def _rate(x: Any) -> str:
    """A rate in bytes per second only (``12.5 GB/s``), for use inside an expression."""
    return RATE.term(x).split(" (")[0]


def _whole(x: Any) -> Any:
    """A count as a student writes it: exact counts as ints, a slip's irrational count rounded.

    Counts are graded exactly, so a count computed with log₂ read as ln (2 ln 1024
    = 13.86 levels) is recorded as the whole number a student would write (14).
    """
    if isinstance(x, float):
        return round(x)
    return int(x) if Fraction(x).denominator == 1 else x


def _power_of_two(p: int) -> bool:
    return p >= 1 and p & (p - 1) == 0


# --------------------------------------------------------------------------------------------------


@example("allreduce-sum", title="What a sum all-reduce leaves on every worker",
         source="Patarasuk & Yuan 2009 (the ring schedule, run on the contributions)",
         topic="rounds-and-bytes",
         givens=[Given("x", "each worker's contribution", NUMBERS, "1, 2, 3", "x")], answer="sum")
def allreduce_sum(w: Work) -> None:
    """Run the ring all-reduce schedule on the contributions: every worker ends with their sum.

    Source: all-reduce is an element-wise reduction left on every participant;
    the schedule is the ring of Patarasuk & Yuan 2009
    (``costmodel.schedules.ring``), executed here on exact numbers.
    """
    from costmodel.schedules import build

    (x,) = w.values("x")
    p = len(x)
    if p < 2:
        raise InputError("an all-reduce needs at least two workers: give two or more contributions")
    w.step("Workers", "one per contribution", p, COUNT)
    # the tensor is cut into p chunks; every chunk of worker k starts as its contribution x_k
    data = [[Fraction(v)] * p for v in x]
    steps = 0
    for s in build("ring_allreduce", "allreduce", p=p).steps():
        before = [row[:] for row in data]
        for group in s:
            for t in group.transfers():
                for c in t.chunks:
                    received = before[t.src][c]
                    data[t.dst][c] = data[t.dst][c] + received if t.op == "reduce" else received
        steps += 1
    w.step("Ring schedule run: reduce-scatter, then all-gather (chunks copied, not added again)",
           "2(p − 1) steps", steps, COUNT)
    for k, row in enumerate(data):
        w.step(f"Worker {k} holds", "every chunk", ", ".join(show_exact(v) for v in row))
    held = {v for row in data for v in row}
    total = sum(x, Fraction(0))
    w.check("the ring schedule's postcondition: the sum everywhere", held, {total})
    w.answer("rounds", "steps of the ring schedule", steps, COUNT, "2(p − 1)")
    w.answer("same", "whether every worker holds the same result (yes/no)", "yes" if len(held) == 1 else "no",
             NAME)
    result = w.answer("sum", "value every worker holds", held.pop(), NUMBER,
                      " + ".join(show_exact(v) for v in x))
    w.answer("mean", "mean contribution", result / p, NUMBER, f"sum / p = {show_exact(result)} / {p}")


@example("ring-bytes", title="Ring all-reduce: rounds and bytes each worker sends",
         source="Patarasuk & Yuan 2009 (ring all-reduce: reduce-scatter, then all-gather)",
         topic="rounds-and-bytes",
         givens=[P, N], answer="sent", slips=("own-chunk",))
def ring_bytes(w: Work) -> None:
    """Ring all-reduce = reduce-scatter + all-gather, each p − 1 rounds of one n/p chunk.

    Source: Patarasuk & Yuan 2009 (bandwidth-optimal ring).
    """
    p, n = w.values("p", "n")
    c = w.cost("allreduce", "ring", p=p, n=n, alpha=0, beta=0, show=False)
    chunk = w.answer("chunk", "chunk size", Fraction(n) / p, SIZE, "n/p")
    # the slip: every chunk, the worker's own included, counted as sent: p rounds a phase, not p − 1
    phase = p if w.slipped("own-chunk") else p - 1
    w.step("Reduce-scatter: rounds (each worker starts with its own chunk)", "p − 1", phase, COUNT)
    w.answer("phase-rounds", "rounds of each phase", phase, COUNT, "p − 1")
    w.step("All-gather: rounds (received chunks are copied, not added again)", "p − 1", phase, COUNT)
    rounds = w.answer("rounds", "rounds in all", 2 * phase, COUNT, "2(p − 1)")
    sent = w.answer("sent", "bytes each worker sends", rounds * chunk, SIZE,
                    f"2(p − 1)·n/p = {rounds} × {_size(chunk)}")
    w.check("ring all-reduce rounds and bytes", (rounds, sent), (c.rounds, c.bytes_sent))
    w.answer("received", "bytes each worker receives", sent, SIZE, "the same as it sends")


@example("ring-vs-naive", title="Ring all-reduce against a naive root, and the lower bound",
         source="Patarasuk & Yuan 2009 (bandwidth-optimal ring); Thakur et al. 2005 (α–β model of a root)",
         topic="alpha-beta",
         givens=[P, N, Given("bandwidth", "usable bandwidth", RATE, "12.5 GB/s", "B"),
                 Given("alpha", "start-up latency", TIME, "0 s", "α")],
         answer="ratio", slips=("alpha-only", "beta-only"))
def ring_vs_naive(w: Work) -> None:
    """The ring spreads 2(p − 1)/p·n over every link; a naive root receives and resends (p − 1) full tensors.

    Source: Thakur et al. 2005 (α–β model; the root's 2(p − 1)nβ, p times the ring's);
    the ring meets the bandwidth lower bound 2(p − 1)/p·nβ (Chan et al. 2007).
    """
    from costmodel.collectives.evaluate import bound
    from costmodel.params import LinkParams

    p, n, bandwidth, alpha = w.values("p", "n", "bandwidth", "alpha")
    beta = w.step("Time per byte", f"β = 1/B = 1/({_rate(bandwidth)})", 1 / bandwidth, INVERSE_RATE)
    ring = w.cost("allreduce", "ring", p=p, n=n, alpha=alpha, beta=beta, label="ring")
    w.answer("ring-sent", "bytes each ring worker sends", ring.bytes_sent, SIZE, "2(p − 1)/p·n")
    naive = w.cost("allreduce", "naive", p=p, n=n, alpha=alpha, beta=beta, label="naive root")
    w.answer("root-bytes", "bytes through the root (received, then sent)", 2 * naive.bytes_sent, SIZE,
             f"2(p − 1)·n = {2 * (p - 1)} × {_size(n)}")
    w.answer("ring", "ring all-reduce time", ring.time_s, TIME)
    w.answer("naive", "naive root time", naive.time_s, TIME)
    w.answer("ratio", "naive time over ring time", naive.time_s / ring.time_s, NUMBER,
             f"{TIME.term(naive.time_s)} / {TIME.term(ring.time_s)}")
    lower = bound("allreduce", p=p, n=n, link=LinkParams(alpha_s=alpha, beta_s_per_byte=beta))
    w.step("Lower bound of any all-reduce", lower.formula, lower.time_s, TIME)
    w.answer("bound", "lower bound on the all-reduce time", lower.time_s, TIME)
    w.answer("bound-ratio", "ring time over the lower bound", ring.time_s / lower.time_s, NUMBER)


# --------------------------------------------------------------------------------------------------


@example("four-formulas", title="The four all-reduce cost formulas",
         source="Thakur et al. 2005 (ring, binomial tree, recursive doubling, Rabenseifner)",
         topic="alpha-beta",
         givens=[Given("p", "workers", COUNT, 16, "p"), Given("n", "message size", SIZE, "8 KiB", "n"),
                 ALPHA, BETA],
         answer="best", slips=("log-base", "p-for-log-p", "alpha-only", "beta-only"))
def four_formulas(w: Work) -> None:
    """Evaluate the four α–β costs (Thakur et al. 2005) term by term; the smallest wins.

    Source: Thakur, Rabenseifner & Gropp 2005 (ring, recursive doubling,
    Rabenseifner); the basic unpipelined binomial tree of reduce + broadcast.
    """
    p, n, alpha, beta = w.values("p", "n", "alpha", "beta")
    times = {}
    for algorithm in ("ring", "tree", "recursive-doubling", "rabenseifner"):
        times[algorithm] = w.cost("allreduce", algorithm, p=p, n=n, alpha=alpha, beta=beta,
                                  label=_NAMES[algorithm]).time_s
    for algorithm, time_s in times.items():
        w.answer(algorithm, f"{_NAMES[algorithm]} time", time_s, TIME)
    w.answer("best", "fastest algorithm", min(times, key=lambda k: times[k]), NAME)


# --------------------------------------------------------------------------------------------------


@example("tree-levels", title="Tree levels against ring rounds",
         source="Thakur et al. 2005 (binomial trees); Patarasuk & Yuan 2009 (ring)",
         topic="rounds-and-bytes", givens=[Given("p", "workers", COUNT, 1024, "p")], answer="tree-rounds",
         slips=("log-base", "p-for-log-p"))
def tree_levels(w: Work) -> None:
    """A binomial tree reduces up ⌈log₂p⌉ levels and broadcasts down as many; a ring takes 2(p − 1) rounds.

    Source: Thakur, Rabenseifner & Gropp 2005 (binomial tree).
    """
    (p,) = w.values("p")
    depth = _whole(w.clg(p))
    tree = w.cost("allreduce", "tree", p=p, n=1, alpha=0, beta=0, show=False)
    ring = w.cost("allreduce", "ring", p=p, n=1, alpha=0, beta=0, show=False)
    w.answer("depth", "tree depth", depth, COUNT, f"⌈log₂ {p}⌉")
    levels = w.answer("tree-rounds", "tree levels (reduce up, then broadcast down)", _whole(tree.rounds),
                      COUNT, f"2⌈log₂p⌉ = 2 × {show_exact(depth)}")
    rounds = w.answer("ring-rounds", "ring rounds", _whole(ring.rounds), COUNT, f"2(p − 1) = 2 × {p - 1}")
    w.answer("ratio", "ring rounds per tree level", Fraction(rounds, levels), NUMBER, f"{rounds} / {levels}")


@example("recursive-doubling-bytes", title="Recursive doubling: exchanges and bytes sent",
         source="Thakur et al. 2005 (recursive doubling)", topic="rounds-and-bytes",
         givens=[Given("p", "workers", COUNT, 8, "p"), Given("n", "tensor size", SIZE, "64 MB", "n")],
         answer="sent", slips=("log-base", "p-for-log-p"))
def recursive_doubling_bytes(w: Work) -> None:
    """log₂p exchanges of the whole tensor with the partner rank XOR 2^i.

    Source: Thakur, Rabenseifner & Gropp 2005 (recursive doubling).
    """
    p, n = w.values("p", "n")
    if _power_of_two(p) and w.slip is None:
        partners = ", ".join(f"XOR {2**i}" for i in range(p.bit_length() - 1))
        w.step("Partners, one exchange each", partners)
    c = w.cost("allreduce", "recursive-doubling", p=p, n=n, alpha=0, beta=0, show=False)
    w.answer("rounds", "exchanges", _whole(c.rounds), COUNT, f"log₂ {p}")
    w.answer("multiple", "bytes sent as a multiple of n", c.bytes_sent / n, NUMBER, "log₂p")
    w.answer("sent", "bytes each worker sends", c.bytes_sent, SIZE,
             f"log₂p·n = {show_exact(c.rounds)} × {_size(n)}")


@example("recursive-halving-bytes", title="Recursive halving reduce-scatter: bytes sent",
         source="Thakur et al. 2005 (recursive halving)", topic="rounds-and-bytes",
         givens=[Given("p", "workers", COUNT, 8, "p"), Given("n", "tensor size", SIZE, "64 MB", "n")],
         answer="sent", slips=("log-base", "p-for-log-p", "own-chunk"))
def recursive_halving_bytes(w: Work) -> None:
    """The active buffer halves every round: n/2 + n/4 + … + n/p = (p − 1)/p·n in log₂p rounds.

    Source: Thakur, Rabenseifner & Gropp 2005 (recursive halving).
    """
    p, n = w.values("p", "n")
    c = w.cost("reduce-scatter", "recursive-halving", p=p, n=n, alpha=0, beta=0, show=False)
    sent = c.bytes_sent
    if _power_of_two(p):
        halves = [Fraction(n) / 2**i for i in range(1, p.bit_length())]
        w.step("Sent per round", " + ".join(_size(h) for h in halves), sum(halves), SIZE)
        w.check("bytes sent, round by round", sum(halves), sent)
    if w.slipped("own-chunk"):  # the chunk the worker keeps counted as sent too: n in all
        sent += Fraction(n) / p
    w.answer("rounds", "rounds", _whole(c.rounds), COUNT, f"log₂ {p}")
    w.answer("fraction", "bytes sent as a fraction of n", sent / n, NUMBER, "(p − 1)/p")
    w.answer("sent", "bytes each worker sends", sent, SIZE,
             f"(p − 1)/p·n = {show_exact(sent / n)} × {_size(n)}")


@example("rabenseifner-vs-ring", title="Rabenseifner against the ring: same bytes, fewer rounds",
         source="Thakur et al. 2005 (Rabenseifner's algorithm); Rabenseifner 2004",
         topic="rounds-and-bytes",
         givens=[Given("p", "workers", COUNT, 8, "p"), Given("n", "tensor size", SIZE, "64 MB", "n")],
         answer="rab-rounds", slips=("log-base", "p-for-log-p", "own-chunk"))
def rabenseifner_vs_ring(w: Work) -> None:
    """Recursive-halving reduce-scatter + recursive-doubling all-gather, against the ring's two phases.

    Source: Thakur, Rabenseifner & Gropp 2005 (Rabenseifner's algorithm).
    """
    p, n = w.values("p", "n")
    own = w.slipped("own-chunk")
    rs = w.cost("reduce-scatter", "recursive-halving", p=p, n=n, alpha=0, beta=0, show=False)
    ag = w.cost("allgather", "recursive-doubling", p=p, n=n, alpha=0, beta=0, show=False)
    half = Fraction(n) if own else rs.bytes_sent  # the slip: the own chunk sent too, n a phase
    sent = f"sending (p − 1)/p·n = {_size(half)}"
    w.step(f"Reduce-scatter by recursive halving, {sent}: rounds", "log₂p", _whole(rs.rounds), COUNT)
    w.step(f"All-gather by recursive doubling, {sent}: rounds", "log₂p", _whole(ag.rounds), COUNT)
    rab = w.cost("allreduce", "rabenseifner", p=p, n=n, alpha=0, beta=0, show=False)
    w.check("Rabenseifner = reduce-scatter + all-gather", (rab.rounds, rab.bytes_sent),
            (rs.rounds + ag.rounds, rs.bytes_sent + ag.bytes_sent))
    rab_rounds = w.answer("rab-rounds", "Rabenseifner rounds", _whole(rab.rounds), COUNT, "2 log₂p")
    w.answer("rab-sent", "bytes each worker sends (Rabenseifner)", 2 * half, SIZE, "2(p − 1)/p·n")
    ring = w.cost("allreduce", "ring", p=p, n=n, alpha=0, beta=0, show=False)
    ring_rounds = 2 * p if own else _whole(ring.rounds)
    w.answer("ring-rounds", "ring rounds", ring_rounds, COUNT, "2(p − 1)")
    w.answer("ring-sent", "bytes each worker sends (ring)", 2 * Fraction(n) if own else ring.bytes_sent, SIZE,
             "2(p − 1)/p·n")
    w.answer("rounds-saved", "rounds Rabenseifner saves", ring_rounds - rab_rounds, NUMBER,
             f"{ring_rounds} − {rab_rounds}")


# --------------------------------------------------------------------------------------------------


@example("choose-by-size", title="Choose an all-reduce algorithm by message size",
         source="Thakur et al. 2005 (choosing the algorithm by message size)", topic="alpha-beta",
         givens=[Given("p", "workers", COUNT, 16, "p"), Given("n", "message size", SIZE, "8 KiB", "n"),
                 ALPHA, BETA],
         answer="best", slips=("log-base", "p-for-log-p", "alpha-only", "beta-only"))
def choose_by_size(w: Work) -> None:
    """Time of ring, recursive doubling and Rabenseifner all-reduce; the fastest wins.

    Source: Thakur, Rabenseifner & Gropp 2005, the α–β costs of MPICH's all-reduce algorithms.
    """
    p, n, alpha, beta = w.values("p", "n", "alpha", "beta")
    times = {}
    for name, algorithm in (("ring", "ring"), ("recursive doubling", "recursive-doubling"),
                            ("Rabenseifner", "rabenseifner")):
        times[name] = w.cost("allreduce", algorithm, p=p, n=n, alpha=alpha, beta=beta, label=name).time_s
    best = min(times, key=lambda k: times[k])
    w.answer("ring", "ring all-reduce time", times["ring"], TIME)
    w.answer("recursive-doubling", "recursive doubling time", times["recursive doubling"], TIME)
    w.answer("rabenseifner", "Rabenseifner time", times["Rabenseifner"], TIME)
    w.answer("best", "fastest algorithm", best.lower().replace(" ", "-"), NAME)


@example("ring-calculation", title="The ring's start-ups and payload, term by term",
         source="Thakur et al. 2005 (α–β model); Patarasuk & Yuan 2009 (ring)", topic="alpha-beta",
         givens=[Given("p", "workers", COUNT, 16, "p"), Given("n", "message size", SIZE, "8 KiB", "n"),
                 ALPHA, BETA],
         answer="total", slips=("alpha-only", "beta-only", "own-chunk"))
def ring_calculation(w: Work) -> None:
    """Ring all-reduce: 2(p − 1) start-ups of α and 2(p − 1)/p·n bytes at β each.

    Source: Patarasuk & Yuan 2009 (the ring's cost).
    """
    p, n, alpha, beta = w.values("p", "n", "alpha", "beta")
    c = w.cost("allreduce", "ring", p=p, n=n, alpha=alpha, beta=beta, show=False)
    if w.slipped("own-chunk"):  # the slip: p rounds a phase, each worker's own chunk sent too
        startups, sent = 2 * p, 2 * Fraction(n)
    else:
        startups, sent = _whole(c.rounds), c.bytes_sent
    a, b = w.link(alpha, beta)
    w.answer("startups", "start-ups", startups, COUNT, f"2(p − 1) = 2 × {p - 1}")
    latency = w.answer("latency", "start-up time", startups * a, TIME, f"{startups} × {TIME.term(alpha)}")
    w.answer("sent", "bytes each worker sends", sent, SIZE,
             f"2(p − 1)/p·n = 2 × {p - 1}/{p} × {show_exact(n)} B")
    payload = w.answer("payload", "payload time", sent * b, TIME,
                       f"{_size(sent)} × {INVERSE_RATE.term(beta)}")
    w.check("ring start-ups and payload", (latency, payload), (c.latency_s, c.bandwidth_s))
    w.answer("total", "ring all-reduce time", latency + payload, TIME, "start-ups + payload")


@example("startups-decide", title="Why recursive doubling wins a small message",
         source="Thakur et al. 2005 (recursive doubling for short messages)", topic="alpha-beta",
         givens=[Given("p", "workers", COUNT, 16, "p"), Given("n", "message size", SIZE, "8 KiB", "n"),
                 ALPHA, BETA],
         answer="dominant", slips=("log-base", "p-for-log-p", "alpha-only", "beta-only"))
def startups_decide(w: Work) -> None:
    """Count the start-ups of recursive doubling (log₂p) and the ring (2(p − 1)); compare α and β terms.

    Source: Thakur, Rabenseifner & Gropp 2005.
    """
    p, n, alpha, beta = w.values("p", "n", "alpha", "beta")
    rd = w.cost("allreduce", "recursive-doubling", p=p, n=n, alpha=alpha, beta=beta,
                label="recursive doubling")
    ring = w.cost("allreduce", "ring", p=p, n=n, alpha=alpha, beta=beta, label="ring")
    w.answer("rd-startups", "recursive doubling exchanges", _whole(rd.rounds), COUNT, f"log₂ {p}")
    w.answer("ring-startups", "ring start-ups", _whole(ring.rounds), COUNT, f"2(p − 1) = 2 × {p - 1}")
    w.answer("rd-latency-share", "share of recursive doubling's time spent on start-ups",
             rd.latency_s / rd.time_s, NUMBER,
             f"{TIME.term(rd.latency_s)} / {TIME.term(rd.time_s)}")
    w.answer("best", "faster algorithm", "recursive-doubling" if rd.time_s < ring.time_s else "ring", NAME)
    w.answer("dominant", "larger term of recursive doubling's time (latency/bandwidth)",
             "latency" if rd.latency_s > rd.bandwidth_s else "bandwidth", NAME,
             f"{TIME.term(rd.latency_s)} against {TIME.term(rd.bandwidth_s)}")


@example("crossover-rd-rab", title="Crossover of recursive doubling and Rabenseifner",
         source="Thakur et al. 2005 (switching algorithms by message size)", topic="crossovers",
         givens=[Given("p", "workers", COUNT, 16, "p"), ALPHA, BETA],
         answer="crossover", slips=("log-base", "p-for-log-p"))
def crossover_rd_rab(w: Work) -> None:
    """Equate lg p·α + lg p·n·β with 2 lg p·α + 2(p−1)/p·n·β and solve for n.

    Source: Thakur, Rabenseifner & Gropp 2005 (both costs); solved exactly.
    """
    p, alpha, beta = w.values("p", "alpha", "beta")
    lg = w.lg(p)
    w.step("Recursive doubling", "log₂p·α + log₂p·n·β", None)
    w.step("Rabenseifner", "2 log₂p·α + 2(p − 1)/p·n·β", None)
    w.step("log₂ p", f"log₂ {p}", lg, None)
    extra_alpha = w.step("Extra start-ups of Rabenseifner", "log₂p·α", lg * alpha, TIME)
    saved = lg - Fraction(2 * (p - 1), p)
    w.step("Bytes-per-n saved by Rabenseifner", f"log₂p − 2(p − 1)/p = {show_exact(saved)}", saved, None)
    n = extra_alpha / (saved * beta)
    w.answer("crossover", "crossover size", n, SIZE,
             f"n* = log₂p·α / ((log₂p − 2(p − 1)/p)·β) = {show_exact(lg)}α / ({show_exact(saved)}·β)")


@example("ring-vs-rabenseifner", title="Ring against Rabenseifner at scale",
         source="Thakur et al. 2005; Rabenseifner 2004", topic="alpha-beta",
         givens=[Given("p", "workers", COUNT, 1024, "p"), Given("n", "message size", SIZE, "64 MiB", "n"),
                 ALPHA, BETA],
         answer="ring", slips=("log-base", "p-for-log-p", "alpha-only", "beta-only"))
def ring_vs_rabenseifner(w: Work) -> None:
    """Both move 2(p − 1)/p·n; the ring pays 2(p − 1) start-ups, Rabenseifner 2 log₂p.

    Source: Thakur, Rabenseifner & Gropp 2005.
    """
    p, n, alpha, beta = w.values("p", "n", "alpha", "beta")
    ring = w.cost("allreduce", "ring", p=p, n=n, alpha=alpha, beta=beta, label="ring")
    rab = w.cost("allreduce", "rabenseifner", p=p, n=n, alpha=alpha, beta=beta, label="Rabenseifner")
    w.answer("ring", "ring all-reduce time", ring.time_s, TIME)
    w.answer("rabenseifner", "Rabenseifner time", rab.time_s, TIME)
    w.answer("ring-latency", "the ring's start-up time", ring.latency_s, TIME)
    w.answer("difference", "time Rabenseifner saves", ring.time_s - rab.time_s, TIME,
             "(2(p − 1) − 2 log₂p)·α")
    w.answer("best", "faster algorithm", "rabenseifner" if rab.time_s < ring.time_s else "ring", NAME)


@example("crossover-pair", title="Crossover size of two all-reduce algorithms",
         source="Thakur et al. 2005 (switching algorithms by message size), for any two algorithms",
         topic="crossovers",
         givens=[Given("a", "first algorithm", NAME, "recursive-doubling", "A"),
                 Given("b", "second algorithm", NAME, "ring", "B"),
                 Given("p", "workers", COUNT, 16, "p"), ALPHA, BETA],
         answer="crossover", slips=("log-base", "p-for-log-p"))
def crossover_pair(w: Work) -> None:
    """Write each cost as A + B·n, equate them and solve: n* = (A₂ − A₁)/(B₁ − B₂).

    Source: the α–β costs of Thakur, Rabenseifner & Gropp 2005; solved exactly by
    :func:`costmodel.crossover` (the example checks its own working against it).
    """
    from costmodel.collectives._registry import resolve
    from costmodel.crossovers import crossover
    from costmodel.params import LinkParams

    a, b, p, alpha, beta = w.values("a", "b", "p", "alpha", "beta")
    names = [resolve("allreduce", x).name for x in (a, b)]
    if any(resolve("allreduce", x).extra for x in (a, b)):
        raise InputError(f"choose algorithms without tuned parameters: {', '.join(_NAMES)}")
    if names[0] == names[1]:
        raise InputError(f"{a!r} and {b!r} are the same algorithm; choose two different ones")
    lines = []
    for name in names:
        fixed = w.cost("allreduce", name, p=p, n=0, alpha=alpha, beta=beta, show=False).time_s
        per_byte = w.cost("allreduce", name, p=p, n=1, alpha=alpha, beta=beta, show=False).time_s - fixed
        label = _NAMES.get(name, name)
        w.step(f"{label}: start-up part A (n = 0)", "", fixed, TIME)
        w.step(f"{label}: per-byte part B", "", per_byte, INVERSE_RATE)
        lines.append((fixed, per_byte))
    (a1, b1), (a2, b2) = lines
    if b1 == b2 or (a2 - a1) / (b1 - b2) <= 0:
        raise InputError(f"{names[0]} and {names[1]} do not cross at any positive size with these givens")
    n = (a2 - a1) / (b1 - b2)
    if w.slip is None:
        found = crossover("allreduce", names[0], names[1], p=p,
                          link=LinkParams(alpha_s=alpha, beta_s_per_byte=beta))
        w.check("crossover size", [n], [x.n_bytes for x in found.crossovers])
    below, above = (names[0], names[1]) if a1 < a2 else (names[1], names[0])
    w.answer("crossover", "crossover size", n, SIZE, "n* = (A₂ − A₁)/(B₁ − B₂)")
    w.answer("time", "time of both at the crossover", a1 + b1 * n, TIME, "A₁ + B₁·n*")
    w.answer("below", "faster algorithm below the crossover", below, NAME, "fewer start-ups")
    w.answer("above", "faster algorithm above the crossover", above, NAME, "fewer bytes")


# -- bus bandwidth (nccl-tests) -----------------------------------------------------------------------


@example("bus-bandwidth", title="Algorithm and bus bandwidth of a measured collective",
         source="nccl-tests, 'Performance reported by NCCL tests' (algbw = S/t; busbw = algbw × factor)",
         topic="bus-bandwidth",
         givens=[Given("collective", "collective", NAME, "allreduce"), Given("p", "ranks", COUNT, 8, "p"),
                 Given("n", "size", SIZE, "1 GB", "S"), Given("t", "measured time", TIME, "10 ms", "t"),
                 Given("peak", "peak link bandwidth", RATE, "200 GB/s", "B")],
         answer="busbw", slips=("own-chunk",))
def bus_bandwidth(w: Work) -> None:
    """algbw = S/t; busbw = algbw × factor (all-reduce 2(p − 1)/p; reduce-scatter, all-gather,
    all-to-all (p − 1)/p; broadcast, reduce 1), comparable with the link's peak whatever p is.

    Source: NVIDIA nccl-tests, doc/PERFORMANCE.md; :mod:`costmodel.collectives.busbw`.
    """
    from costmodel.collectives.busbw import busbw, time_for_busbw

    collective, p, n, t, peak = w.values("collective", "p", "n", "t", "peak")
    m = busbw(collective, p=p, n=n, time=t)
    w.answer("algbw", "algorithm bandwidth", m.algbw_bytes_per_s, RATE,
             f"S/t = {_size(n)} / {TIME.term(t)}")
    factor = m.factor
    if w.slipped("own-chunk") and m.factor_text != "1":  # the slip: (p − 1)/p left out
        factor = factor * p / (p - 1)
    w.answer("factor", f"bus factor of {m.collective}", factor, NUMBER,
             f"{m.factor_text} at p = {p}")
    bus = w.answer("busbw", "bus bandwidth", m.algbw_bytes_per_s * factor, RATE, "algbw × factor")
    w.check("bus bandwidth", bus, m.busbw_bytes_per_s)
    w.answer("efficiency", "bus bandwidth over the peak", bus / peak, NUMBER,
             f"{_rate(bus)} / {_rate(peak)}")
    ideal = time_for_busbw(collective, p=p, n=n, busbw=peak) * factor / m.factor
    w.answer("ideal-time", "time at the peak bus bandwidth", ideal, TIME, "S·factor / B")


@example("model-busbw", title="Bus bandwidth the α–β model predicts for ring all-reduce",
         source="nccl-tests, 'Performance reported by NCCL tests'; Patarasuk & Yuan 2009 (ring)",
         topic="bus-bandwidth",
         givens=[Given("p", "workers", COUNT, 16, "p"), Given("n", "message size", SIZE, "64 MiB", "n"),
                 ALPHA, BETA],
         answer="busbw", slips=("alpha-only", "beta-only"))
def model_busbw(w: Work) -> None:
    """Time the ring with α–β, then read it as nccl-tests would: busbw → 1/β as the start-ups fade.

    Source: Patarasuk & Yuan 2009 (the ring); NVIDIA nccl-tests, doc/PERFORMANCE.md.
    """
    from costmodel.collectives.busbw import busbw

    p, n, alpha, beta = w.values("p", "n", "alpha", "beta")
    ring = w.cost("allreduce", "ring", p=p, n=n, alpha=alpha, beta=beta, label="ring")
    w.answer("time", "ring all-reduce time", ring.time_s, TIME)
    m = busbw("allreduce", p=p, n=n, time=ring.time_s)
    w.answer("algbw", "algorithm bandwidth", m.algbw_bytes_per_s, RATE,
             f"n/t = {_size(n)} / {TIME.term(ring.time_s)}")
    bus = w.answer("busbw", "bus bandwidth", m.busbw_bytes_per_s, RATE,
                   f"algbw × 2(p − 1)/p = algbw × {show_exact(m.factor)}")
    w.step("Link bandwidth", "1/β", 1 / beta, RATE)
    w.answer("link-fraction", "bus bandwidth over the link bandwidth", bus * beta, NUMBER, "busbw·β")


@example("cost-formula", title="An algorithm's α–β cost, rounds and bytes as formulas",
         source="Thakur et al. 2005 (the α–β formulas of ring, tree, recursive doubling and Rabenseifner)",
         topic="alpha-beta",
         givens=[Given("algorithm", "algorithm", NAME, "ring"),
                 Given("collective", "collective", NAME, "allreduce")],
         answer="time")
def cost_formula(w: Work) -> None:
    """The registry record's own coefficients, evaluated symbolically in p and n (γ set aside).

    Source: the record's citation (``costmodel formula COLLECTIVE ALGORITHM``); Thakur,
    Rabenseifner & Gropp 2005 for the four all-reduce algorithms.
    """
    from costmodel import symbols
    from costmodel.collectives._math import symbolic
    from costmodel.collectives._registry import resolve
    from costmodel.collectives.evaluate import text_formula

    collective, algorithm = w.values("collective", "algorithm")
    algo = resolve(collective, algorithm)
    if algo.extra:
        raise InputError(f"{algo.name} has a free parameter ({algo.extra[0].symbol}); choose an algorithm "
                         "without one for a formula exercise")
    m, p, n = symbolic(), symbols.p, symbols.n
    w.step("The registry's model (with γ, the reduction, per byte)", text_formula(algo))
    w.step("Start-ups on the critical path (× α)", "", str(algo.latency(p, n, m)))
    w.step("Bytes on the critical path (× β)", "", str(algo.bandwidth(p, n, m)))
    time = algo.latency(p, n, m) * symbols.ALPHA + algo.bandwidth(p, n, m) * symbols.BETA
    w.answer("time", "time, with the reduction cost set aside (γ = 0)", time, FORMULA,
             "start-ups·α + bytes·β")
    w.answer("rounds", "rounds", (algo.rounds or algo.latency)(p, n, m), FORMULA)
    w.answer("sent", "bytes each rank sends", algo.bytes_sent(p, n, m), FORMULA)
