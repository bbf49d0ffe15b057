"""The evaluation layer shared by every collective: inputs, constraints, extras, results."""

from __future__ import annotations

from fractions import Fraction

import pytest

from costmodel import ConstraintError, InputError, UnknownNameError, bound, compare, cost, resolve
from costmodel.collectives._record import Algorithm, Constraint
from costmodel.collectives.evaluate import applicable, check_ranks, linear_terms, time_at
from costmodel.references import THAKUR_2005
from tests.unit.collectives._support import ALPHA, BETA, LINK, N, terms

F = Fraction

BAD_RANKS = [1, 0, -4, True, False, 2.5, 16.0, "16", None, F(16), 2**40 + 1]


@pytest.mark.parametrize("p", BAD_RANKS, ids=repr)
def test_bad_rank_counts_are_input_errors(p: object) -> None:
    with pytest.raises(InputError, match=r"p="):
        cost("allreduce", "ring", p=p, n=N, link=LINK)  # type: ignore[arg-type]
    with pytest.raises(InputError):
        compare("allreduce", None, p=p, n=N, link=LINK)  # type: ignore[arg-type]
    with pytest.raises(InputError):
        bound("allreduce", p=p, n=N, link=LINK)  # type: ignore[arg-type]


def test_the_smallest_and_largest_rank_counts() -> None:
    assert check_ranks(2) == 2
    assert check_ranks(2**40) == 2**40
    # ring at p = 2**40: 2(2^40 - 1) start-ups
    assert terms("allreduce", "ring", 2**40).alpha == 2 * (2**40 - 1)


@pytest.mark.parametrize("n", [-1, F(-1, 2), "-3 B", "12KB", "lots"], ids=repr)
def test_bad_sizes_are_input_errors(n: object) -> None:
    with pytest.raises(InputError):
        cost("allreduce", "ring", p=4, n=n, link=LINK)


@pytest.mark.parametrize(("n", "size"), [("8KiB", 8192), ("1.5 MB", 1_500_000), (7, 7), (F(7, 2), F(7, 2)),
                                         ("1", 1)])
def test_sizes_may_carry_units(n: object, size: Fraction) -> None:
    # ring: 2(p-1)/p·n bytes; at p = 4: 3n/2
    assert cost("allreduce", "ring", p=4, n=n, link=LINK).bytes_sent_per_rank == F(3, 2) * size


def test_sizes_below_one_byte_are_refused() -> None:
    for n in (0, "0B", F(1, 2), "0.999B"):
        with pytest.raises(InputError, match="at least 1 B"):
            cost("allreduce", "ring", p=4, n=n, link=LINK)


def test_unknown_names() -> None:
    with pytest.raises(UnknownNameError, match="did you mean 'ring'"):
        cost("allreduce", "rign", p=4, n=N, link=LINK)
    with pytest.raises(UnknownNameError, match="did you mean 'allreduce'"):
        cost("allreduse", "ring", p=4, n=N, link=LINK)
    with pytest.raises(UnknownNameError):
        compare("allreduce", ["ring", "nope"], p=4, n=N, link=LINK)


# -- constraints -------------------------------------------------------------------------------

REFUSING = Algorithm(
    collective="allreduce",
    name="refusing",
    summary="a test record whose constraint has no adaptation",
    latency=lambda p, n, m: m.lg(p),
    bandwidth=lambda p, n, m: m.lg(p) * n,
    compute=lambda p, n, m: 0,
    rounds=lambda p, n, m: m.lg(p),
    bytes_sent=lambda p, n, m: n,
    constraints=(Constraint("power-of-two p", lambda q: q & (q - 1) == 0, otherwise=None),),
    source=THAKUR_2005.at("nowhere"),
)


def test_a_constraint_without_adaptation_is_refused() -> None:
    with pytest.raises(ConstraintError, match=r"'refusing' for allreduce needs power-of-two p") as info:
        applicable(REFUSING, 12)
    assert info.value.algorithm == "refusing"
    assert info.value.constraint == "power-of-two p"
    assert info.value.value == 12
    with pytest.raises(ConstraintError):
        cost("allreduce", REFUSING, p=12, n=N, link=LINK)
    # a ConstraintError is an InputError
    with pytest.raises(InputError):
        cost("allreduce", REFUSING, p=6, n=N, link=LINK)


def test_a_record_object_can_be_costed_directly() -> None:
    result = cost("allreduce", REFUSING, p=16, n=N, link=LINK)
    # log2 16 = 4 start-ups and 4n bytes
    assert (result.latency_s, result.bandwidth_s) == (4 * ALPHA, 4 * N * BETA)
    assert applicable(REFUSING, 16) == (REFUSING, ())


# -- extra parameters ------------------------------------------------------------------------


def test_blocks_are_validated() -> None:
    # blocks of n/(2k) ≥ 1 byte: at n = 100 at most 50
    assert cost("allreduce", "dbt", p=8, n=100, link=LINK, extra={"blocks": 50}).parameters == {"blocks": 50}
    with pytest.raises(InputError, match="blocks=51"):
        cost("allreduce", "dbt", p=8, n=100, link=LINK, extra={"blocks": 51})
    with pytest.raises(InputError, match="blocks=0"):
        cost("allreduce", "dbt", p=8, n=100, link=LINK, extra={"blocks": 0})


def test_compare_refuses_a_parameter_no_chosen_algorithm_has() -> None:
    with pytest.raises(InputError, match="'segments' is not a parameter"):
        compare("allreduce", ["ring", "rab"], p=8, n=N, link=LINK, extra={"segments": 4})
    with pytest.raises(InputError, match="pipelined-chain"):
        compare("broadcast", ["binomial"], p=8, n=N, link=LINK, extra={"segments": 4})


def test_cost_refuses_a_parameter_the_algorithm_does_not_have() -> None:
    with pytest.raises(InputError):
        cost("broadcast", "pipelined-chain", p=8, n=N, link=LINK, extra={"segment": 4})


def test_linear_terms() -> None:
    ring = resolve("allreduce", "ring")
    # ring at p = 8: 14α + 7/4·nβ (+ 7/8·nγ): A = 14α, B = 7/4 β + 7/8 γ
    a, b = linear_terms(ring, 8, LINK)
    assert a == 14 * ALPHA
    assert b == F(7, 4) * BETA + F(7, 8) * LINK.gamma_s_per_byte
    assert time_at(ring, 8, N, LINK) == a + b * N


def test_linear_terms_of_a_tuned_algorithm() -> None:
    chain = resolve("broadcast", "chain")
    assert linear_terms(chain, 8, LINK) is None
    # with k fixed at 4: 10α + 10/4·nβ
    assert linear_terms(chain, 8, LINK, {"segments": 4}) == (10 * ALPHA, F(10, 4) * BETA)


# -- results -----------------------------------------------------------------------------------


def test_result_fields() -> None:
    result = cost("allreduce", "ring", p=4, n=N, link=LINK)
    assert result.time_s == result.latency_s + result.bandwidth_s + result.compute_s
    assert result.formula == "2(p − 1)·α + 2(p − 1)/p·n·β + (p − 1)/p·n·γ"
    data = result.to_dict()
    assert data["rounds"] == 6
    assert data["algorithm"] == "ring"
    assert data["time_s"] == pytest.approx(float(result.time_s))
    assert isinstance(data["bytes_sent_per_rank"], float)
    assert data["parameters"] == {}
