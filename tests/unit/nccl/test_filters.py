"""NCCL_ALGO / NCCL_PROTO strings read as NCCL's parseList."""

from __future__ import annotations

import pytest

from costmodel.errors import InputError
from costmodel.nccl import CONSTANTS
from costmodel.nccl.filters import parse_list

V30, V21 = CONSTANTS["2.30"], CONSTANTS["2.21"]
ALGOS = V30.algorithms


@pytest.mark.parametrize(("text", "allreduce", "broadcast"), [
    ("ring,tree", (1, 1, 0, 0, 0, 0, 0), (1, 1, 0, 0, 0, 0, 0)),
    ("RING", (0, 1, 0, 0, 0, 0, 0), (0, 1, 0, 0, 0, 0, 0)),
    ("^nvls,nvlstree", (1, 1, 1, 1, 0, 0, 1), (1, 1, 1, 1, 0, 0, 1)),
    ("allreduce:tree", (1, 0, 0, 0, 0, 0, 0), (1, 1, 1, 1, 1, 1, 1)),
    ("ring;allreduce:tree;broadcast:^ring", (1, 0, 0, 0, 0, 0, 0), (1, 0, 1, 1, 1, 1, 1)),
    ("ring, tree ;", (1, 1, 0, 0, 0, 0, 0), (1, 1, 0, 0, 0, 0, 0)),
])
def test_good_algo_lists(text, allreduce, broadcast):
    table = parse_list(text, ALGOS, V30)
    assert table[V30.functions.index("AllReduce")] == allreduce
    assert table[V30.functions.index("Broadcast")] == broadcast


def test_proto_defaults_keep_ll128_automatic_unless_named():
    assert parse_list("allreduce:LL", V30.protocols, V30, defaults=(1, 2, 1))[0] == (1, 2, 1)
    assert parse_list("^LL", V30.protocols, V30, defaults=(1, 2, 1))[0] == (0, 1, 1)


def test_2_21_reads_one_list():
    assert parse_list("^tree", V21.algorithms, V21)[4] == (0, 1, 1, 1, 1, 1)


@pytest.mark.parametrize(("text", "constants", "message"), [
    ("rign", V30, 'unrecognized element token "rign" when parsing "rign"'),
    ("allreduce:ring,pat2", V30, 'unrecognized element token "pat2"'),
    ("allredcue:ring", V30, 'unrecognized prefix token "allredcue"'),
    ("ring;tree", V30, "all entries except the first must have a prefix"),
    ("", V30, "is empty"),
    (";", V30, "is empty"),
    ("allreduce:", V30, "no names"),
    ("a:b:c", V30, 'too many ":"'),
    ("allreduce:ring", V21, "NCCL 2.21 reads no function prefix"),
    ("pat", V21, 'unrecognized element token "pat"'),
    ("x" * 2000, V30, "too long"),
])
def test_bad_lists_are_one_line_errors(text, constants, message):
    with pytest.raises(InputError) as info:
        parse_list(text, constants.algorithms, constants)
    assert message in str(info.value) and "\n" not in str(info.value)
