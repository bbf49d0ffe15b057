"""The sources of the consensus package: graphs, mixing weights, spectra and D-SGD.

They are defined in :mod:`costmodel.references`; :data:`CITED` lists the ones
this package cites.
"""

from __future__ import annotations

from costmodel.references import (
    BATAGELJ_2005,
    ERICSSON_1980,
    GRAY_2006,
    KOLOSKOVA_2020,
    LIAN_2017,
    MOHAR_1991,
    NIVEN_1956,
    OLSHEVSKY_2017,
    PAIGE_1980,
    PARLETT_1998,
    SENETA_2006,
    STEGER_1999,
    XIAO_2004,
    XIAO_2005,
    YING_2021,
    Citation,
)

__all__ = [
    "BATAGELJ_2005",
    "CITED",
    "ERICSSON_1980",
    "GRAY_2006",
    "KOLOSKOVA_2020",
    "LIAN_2017",
    "MOHAR_1991",
    "NIVEN_1956",
    "OLSHEVSKY_2017",
    "PAIGE_1980",
    "PARLETT_1998",
    "SENETA_2006",
    "STEGER_1999",
    "XIAO_2004",
    "XIAO_2005",
    "YING_2021",
]


CITED: tuple[Citation, ...] = (
    XIAO_2004,
    XIAO_2005,
    OLSHEVSKY_2017,
    YING_2021,
    LIAN_2017,
    KOLOSKOVA_2020,  # gossip against all-reduce (the worked examples)
    GRAY_2006,
    NIVEN_1956,
    STEGER_1999,
    BATAGELJ_2005,
    PARLETT_1998,
    PAIGE_1980,
    ERICSSON_1980,
    MOHAR_1991,
    SENETA_2006,
)
"""Every citation of the consensus package (to move into :mod:`costmodel.references`)."""
