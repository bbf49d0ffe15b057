"""The sources costmodel's formulas and presets come from.

Each :class:`Citation` has a short key; records point to one with
:meth:`Citation.at`, adding a locator (a section, a table, a source file).
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["CITATIONS", "Citation", "Cited"]


@dataclass(frozen=True, slots=True, kw_only=True)
class Citation:
    """A publication, specification or source file cited by costmodel."""

    key: str
    authors: str
    title: str
    venue: str
    year: int
    url: str = ""

    def at(self, locator: str) -> Cited:
        """Cite a particular place in this source."""
        return Cited(citation=self, locator=locator)

    def __str__(self) -> str:
        return f"{self.authors} ({self.year}). {self.title}. {self.venue}."


@dataclass(frozen=True, slots=True)
class Cited:
    """A :class:`Citation` with a locator inside it."""

    citation: Citation
    locator: str

    def __str__(self) -> str:
        return f"{self.citation} {self.locator}"

    def to_dict(self) -> dict[str, str]:
        return {"key": self.citation.key, "reference": str(self.citation), "locator": self.locator}


THAKUR_2005 = Citation(
    key="thakur2005",
    authors="R. Thakur, R. Rabenseifner, W. Gropp",
    title="Optimization of Collective Communication Operations in MPICH",
    venue="International Journal of High Performance Computing Applications 19(1):49-66",
    year=2005,
    url="https://doi.org/10.1177/1094342005051521",
)
CHAN_2007 = Citation(
    key="chan2007",
    authors="E. Chan, M. Heimlich, A. Purkayastha, R. van de Geijn",
    title="Collective communication: theory, practice, and experience",
    venue="Concurrency and Computation: Practice and Experience 19(13):1749-1783",
    year=2007,
    url="https://doi.org/10.1002/cpe.1206",
)
PATARASUK_2009 = Citation(
    key="patarasuk2009",
    authors="P. Patarasuk, X. Yuan",
    title="Bandwidth optimal all-reduce algorithms for clusters of workstations",
    venue="Journal of Parallel and Distributed Computing 69(2):117-124",
    year=2009,
    url="https://doi.org/10.1016/j.jpdc.2008.09.002",
)
SANDERS_2009 = Citation(
    key="sanders2009",
    authors="P. Sanders, J. Speck, J. L. Träff",
    title="Two-tree algorithms for full bandwidth broadcast, reduction and scan",
    venue="Parallel Computing 35(12):581-594",
    year=2009,
    url="https://doi.org/10.1016/j.parco.2009.09.001",
)
BRUCK_1997 = Citation(
    key="bruck1997",
    authors="J. Bruck, C.-T. Ho, S. Kipnis, E. Upfal, D. Weathersby",
    title="Efficient algorithms for all-to-all communications in multiport message-passing systems",
    venue="IEEE Transactions on Parallel and Distributed Systems 8(11):1143-1156",
    year=1997,
    url="https://doi.org/10.1109/71.642949",
)
RABENSEIFNER_2004 = Citation(
    key="rabenseifner2004",
    authors="R. Rabenseifner",
    title="Optimization of collective reduction operations",
    venue="Computational Science - ICCS 2004, LNCS 3036:1-9",
    year=2004,
    url="https://doi.org/10.1007/978-3-540-24685-5_1",
)
SEED_DSGD = Citation(
    key="seed-dsgd",
    authors="costmodel seed texts",
    title="Distributed SGD and All-Reduce",
    venue="shared/seeds/distributed-sgd-and-allreduce.txt",
    year=2026,
)
SEED_PATTERNS = Citation(
    key="seed-patterns",
    authors="costmodel seed texts",
    title="Collective Communication & Distributed Training Patterns",
    venue="shared/seeds/collective-communication-patterns.txt",
    year=2026,
)
IEEE_8023 = Citation(
    key="ieee802.3",
    authors="IEEE",
    title="IEEE Standard for Ethernet (802.3), 100 Gb/s clauses",
    venue="IEEE Std 802.3",
    year=2022,
)
IBTA_SPEC = Citation(
    key="ibta",
    authors="InfiniBand Trade Association",
    title="InfiniBand Architecture Specification, Volume 2 (HDR 4x = 200 Gb/s, NDR 4x = 400 Gb/s)",
    venue="InfiniBand Trade Association",
    year=2022,
)
NVIDIA_H100 = Citation(
    key="nvidia-h100",
    authors="NVIDIA",
    title="NVIDIA H100 Tensor Core GPU datasheet (fourth-generation NVLink: 900 GB/s total)",
    venue="NVIDIA Corporation",
    year=2023,
)
SERGEEV_2018 = Citation(
    key="sergeev2018",
    authors="A. Sergeev, M. Del Balso",
    title="Horovod: fast and easy distributed deep learning in TensorFlow",
    venue="arXiv:1802.05799",
    year=2018,
    url="https://arxiv.org/abs/1802.05799",
)
NCCL = Citation(
    key="nccl",
    authors="NVIDIA",
    title="NCCL: the NVIDIA Collective Communications Library, user guide",
    venue="NVIDIA Corporation, https://github.com/NVIDIA/nccl",
    year=2023,
    url="https://docs.nvidia.com/deeplearning/nccl/user-guide/docs/",
)
MPICH_SMP = Citation(
    key="mpich-smp",
    authors="MPICH developers, Argonne National Laboratory",
    title="MPICH: SMP-aware all-reduce, MPIR_Allreduce_intra_smp",
    venue="MPICH 3.3 and later, src/mpi/coll/allreduce/allreduce_intra_smp.c",
    year=2018,
    url="https://github.com/pmodels/mpich",
)
LEE_2020 = Citation(
    key="lee2020",
    authors="J. Lee, I. Hwang, S. Shah, M. Cho",
    title="FlexReduce: Flexible All-reduce for Distributed Deep Learning on Asymmetric Network Topology",
    venue="57th ACM/IEEE Design Automation Conference (DAC)",
    year=2020,
)
WAN_2020 = Citation(
    key="wan2020",
    authors="X. Wan, H. Zhang, H. Wang, S. Hu, J. Zhang, K. Chen",
    title="RAT - Resilient Allreduce Tree for Distributed Machine Learning",
    venue="4th Asia-Pacific Workshop on Networking (APNet '20), 52-57",
    year=2020,
    url="https://doi.org/10.1145/3411029.3411037",
)

CITATIONS: dict[str, Citation] = {
    c.key: c
    for c in (
        THAKUR_2005, CHAN_2007, PATARASUK_2009, SANDERS_2009, BRUCK_1997, RABENSEIFNER_2004,
        SEED_DSGD, SEED_PATTERNS, IEEE_8023, IBTA_SPEC, NVIDIA_H100, SERGEEV_2018, NCCL, MPICH_SMP,
        LEE_2020, WAN_2020,
    )
}
