"""The sample-weighted loss and gradient, and FedAvg aggregation (exact values worked out by hand)."""

from __future__ import annotations

import json
from fractions import Fraction

import pytest
from hypothesis import given
from hypothesis import strategies as st

from costmodel.errors import InputError
from costmodel.training import fedavg, sample_weights, weighted_gradient, weighted_loss


def test_weighted_loss_fields():
    r = weighted_loss(sizes=[600, 300, 100], losses=[0.2, 0.5, 0.9])
    # 0.6·0.2 + 0.3·0.5 + 0.1·0.9 = 0.12 + 0.15 + 0.09 = 0.36; (0.2 + 0.5 + 0.9)/3 = 1.6/3 = 8/15
    assert r.weighted == Fraction(9, 25)
    assert r.unweighted == Fraction(8, 15)
    assert r.difference == Fraction(8, 15) - Fraction(9, 25)
    assert (r.basis, r.counts) == ("sizes", (600, 300, 100))
    d = r.to_dict()
    assert (d["weighted"], d["weights"], d["total_count"]) == (0.36, [0.6, 0.3, 0.1], 1000)
    assert (d["weighted_exact"], d["unweighted_exact"], d["weights_exact"]) == ("9/25", "8/15",
                                                                                ["3/5", "3/10", "1/10"])
    assert json.dumps(d, allow_nan=False)


def test_explicit_weights_summing_to_one():
    r = weighted_loss(weights="0.6,0.3,0.1", losses="0.2,0.5,0.9")
    assert r.weighted == Fraction(9, 25)
    assert r.counts is None
    assert r.to_dict()["total_count"] is None


def test_equal_batches_give_equal_weights():
    r = weighted_loss(batches="32,32,32", losses="0.2,0.5,0.9")
    assert r.weights == (Fraction(1, 3),) * 3
    assert r.weighted == r.unweighted
    assert any("agree" in n for n in r.notes)


def test_weighted_gradient_unequal_batches():
    g = weighted_gradient(gradients="1,0;2,1;4,-1", batches="32,32,64")
    # weights 1/4, 1/4, 1/2: x = 1/4 + 2/4 + 4/2 = 11/4; y = 0 + 1/4 − 1/2 = −1/4
    assert g.weights == (Fraction(1, 4), Fraction(1, 4), Fraction(1, 2))
    assert g.weighted == (Fraction(11, 4), Fraction(-1, 4))
    assert g.unweighted == (Fraction(7, 3), Fraction(0))
    d = g.to_dict()
    assert d["weighted"] == [2.75, -0.25]
    assert d["weighted_exact"] == ["11/4", "-1/4"]


def test_weighted_gradient_scalars():
    g = weighted_gradient(gradients="0.1;0.3", sizes="1,3")
    assert g.weighted == (Fraction(1, 4) * Fraction(1, 10) + Fraction(3, 4) * Fraction(3, 10),)


@pytest.mark.parametrize(("kwargs", "fragment"), [
    ({"losses": "0.2,0.5,0.9"}, "no weights given"),
    ({"losses": "0.2,0.5,0.9", "sizes": "1,2,3", "batches": "1,2,3"}, "sizes= and batches= given"),
    ({"losses": "0.2,0.5,0.9", "sizes": "600,300"}, "3 losses but 2 sizes"),
    ({"losses": "0.2,0.5", "sizes": "600,300,100"}, "2 losses but 3 sizes"),
    ({"losses": "0.2,0.5,0.9", "sizes": "600,-300,100"}, "'-300' is negative"),
    ({"losses": "0.2,0.5,0.9", "sizes": "600,0,100"}, "'0' is zero"),
    ({"losses": "0.2,0.5,0.9", "sizes": "600,30.5,100"}, "not a whole number"),
    ({"losses": "0.2,0.5,0.9", "weights": "0.5,0.3,0.1"}, "sum to 9/10, not 1"),
    ({"losses": "0.2,0.5,0.9", "weights": "1.2,-0.3,0.1"}, "weight 1 is -3/10, negative"),
    ({"losses": "0.2,zero,0.9", "sizes": "1,2,3"}, "item 1 of the losses"),
])
def test_bad_loss_input(kwargs, fragment):
    with pytest.raises(InputError, match=fragment):
        weighted_loss(**kwargs)


def test_bad_gradient_input():
    with pytest.raises(InputError, match="vector 1 of the gradients has 1 component"):
        weighted_gradient(gradients="1,0;2", batches="1,1")
    with pytest.raises(InputError, match="2 gradients but 3 batches"):
        weighted_gradient(gradients="1,0;2,1", batches="1,1,1")


@given(st.lists(st.integers(min_value=1, max_value=10**6), min_size=1, max_size=8))
def test_sample_weights_sum_to_one(counts):
    _, _, ws = sample_weights(sizes=counts)
    assert sum(ws) == 1
    assert all(w > 0 for w in ws)


def test_fedavg_full_participation():
    r = fedavg("1,0;2,1;4,-1", sizes="100,300,600")
    # 0.1·(1, 0) + 0.3·(2, 1) + 0.6·(4, −1) = (0.1 + 0.6 + 2.4, 0.3 − 0.6) = (3.1, −0.3)
    assert r.weights == (Fraction(1, 10), Fraction(3, 10), Fraction(3, 5))
    assert r.global_model == (Fraction(31, 10), Fraction(-3, 10))
    assert r.unweighted_mean == (Fraction(7, 3), Fraction(0))
    assert (r.participants, r.dropped) == ((0, 1, 2), ())
    d = r.to_dict()
    assert d["global_model"] == [3.1, -0.3]
    assert d["index_base"] == 0


def test_fedavg_with_a_dropped_client():
    r = fedavg([[1, 0], [2, 1], [4, -1]], sizes=[100, 300, 600], dropped=[1])
    # answering: 100 and 600 samples, weights 1/7 and 6/7: (1/7 + 24/7, −6/7) = (25/7, −6/7)
    assert r.weights == (Fraction(1, 7), Fraction(0), Fraction(6, 7))
    assert r.full_weights == (Fraction(1, 10), Fraction(3, 10), Fraction(3, 5))
    assert r.global_model == (Fraction(25, 7), Fraction(-6, 7))
    assert r.unweighted_mean == (Fraction(5, 2), Fraction(-1, 2))
    assert r.to_dict()["samples_answered"] == 700
    assert any("renormalised" in n for n in r.notes)


@pytest.mark.parametrize(("kwargs", "fragment"), [
    ({"models": "1,0;2,1;4,-1", "sizes": "100,300,600", "dropped": "3"}, "3 is out of range"),
    ({"models": "1,0;2,1;4,-1", "sizes": "100,300,600", "dropped": "0,1,2"}, "every client is dropped"),
    ({"models": "1,0;2,1", "sizes": "100,300,600"}, "2 models but 3 sizes"),
    ({"models": "1,0;2,1,3;4,-1", "sizes": "100,300,600"}, "has 3 components"),
    ({"models": "1,0;2,1;4,-1", "sizes": "100,-300,600"}, "is negative"),
])
def test_bad_fedavg_input(kwargs, fragment):
    models = kwargs.pop("models")
    with pytest.raises(InputError, match=fragment):
        fedavg(models, **kwargs)
