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
KIELMANN_2000 = Citation(
    key="kielmann2000",
    authors="T. Kielmann, H. E. Bal, K. Verstoep",
    title="Fast measurement of LogP parameters for message passing platforms",
    venue="IPDPS 2000 Workshops, LNCS 1800:1176-1183",
    year=2000,
    url="https://doi.org/10.1007/3-540-45591-4_162",
)
MOLKA_2009 = Citation(
    key="molka2009",
    authors="D. Molka, D. Hackenberg, R. Schöne, M. S. Müller",
    title="Memory performance and cache coherency effects on an Intel Nehalem multiprocessor system",
    venue="PACT 2009, pp. 261-270",
    year=2009,
    url="https://doi.org/10.1109/PACT.2009.22",
)
WESOLOWSKY_1981 = Citation(
    key="wesolowsky1981",
    authors="G. O. Wesolowsky",
    title="A new descent algorithm for the least absolute value regression problem",
    venue="Communications in Statistics - Simulation and Computation 10(5):479-491",
    year=1981,
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
TRAFF_2020 = Citation(
    key="traff2020",
    authors="J. L. Träff, S. Hunold",
    title="Decomposing MPI Collectives for Exploiting Multi-lane Communication",
    venue="IEEE International Conference on Cluster Computing (CLUSTER 2020), 270-280",
    year=2020,
    url="https://doi.org/10.1109/CLUSTER49012.2020.00037",
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
NVIDIA_A100 = Citation(
    key="nvidia-a100",
    authors="NVIDIA",
    title="NVIDIA A100 Tensor Core GPU datasheet (third-generation NVLink: 600 GB/s total)",
    venue="NVIDIA Corporation",
    year=2021,
)
NVIDIA_H100 = Citation(
    key="nvidia-h100",
    authors="NVIDIA",
    title="NVIDIA H100 Tensor Core GPU datasheet (fourth-generation NVLink: 900 GB/s total)",
    venue="NVIDIA Corporation",
    year=2023,
)
NVIDIA_GEMM_GUIDE = Citation(
    key="nvidia-gemm-guide",
    authors="NVIDIA",
    title="Matrix Multiplication Background User's Guide (DU-09799-001): tile and wave quantization",
    venue="NVIDIA Deep Learning Performance Documentation",
    year=2023,
    url="https://docs.nvidia.com/deeplearning/performance/dl-performance-matrix-multiplication/index.html",
)
WILLIAMS_2009 = Citation(
    key="williams2009",
    authors="S. Williams, A. Waterman, D. Patterson",
    title="Roofline: An Insightful Visual Performance Model for Multicore Architectures",
    venue="Communications of the ACM 52(4)",
    year=2009,
    url="https://doi.org/10.1145/1498765.1498785",
)
DAO_2023 = Citation(
    key="dao2023",
    authors="T. Dao",
    title="FlashAttention-2: Faster Attention with Better Parallelism and Work Partitioning",
    venue="arXiv:2307.08691 (ICLR 2024)",
    year=2023,
    url="https://arxiv.org/abs/2307.08691",
)
MICIKEVICIUS_2018 = Citation(
    key="micikevicius2018",
    authors="P. Micikevicius, S. Narang, J. Alben, G. Diamos, E. Elsen, D. Garcia, B. Ginsburg, M. Houston, "
            "O. Kuchaiev, G. Venkatesh, H. Wu",
    title="Mixed Precision Training",
    venue="ICLR 2018 (arXiv:1710.03740)",
    year=2018,
    url="https://arxiv.org/abs/1710.03740",
)
SUPERBENCH = Citation(
    key="superbench",
    authors="Microsoft",
    title="SuperBench: nccl-tests all_reduce_perf, all_gather_perf and reduce_scatter_perf on 8x "
          "A100-SXM4-40GB "
          "(NVSwitch), test fixture output",
    venue="github.com/microsoft/superbenchmark, "
          "tests/benchmarks/micro_benchmarks/test_nccl_bw_performance.py",
    year=2021,
    url="https://github.com/microsoft/superbenchmark",
)
ABCI_BENCHMARK = Citation(
    key="abci-benchmark",
    authors="AIST ABCI",
    title="ABCI 2.0 benchmark results: nccl-tests all_reduce_perf on 2 nodes x 8 A100-SXM4-40GB, InfiniBand "
          "HDR",
    venue="github.com/aistabci/abci2.0benchmark, allreduce/inter_anode",
    year=2021,
    url="https://github.com/aistabci/abci2.0benchmark",
)
NCCL_TESTS_119 = Citation(
    key="nccl-tests-119",
    authors="NVIDIA/nccl-tests issue 119",
    title="Evaluation of NCCL test result: 3 nodes x 8 A100 SXM4 40GB, 4 InfiniBand HDR cards per node",
    venue="github.com/NVIDIA/nccl-tests/issues/119",
    year=2022,
    url="https://github.com/NVIDIA/nccl-tests/issues/119",
)
NCCL_TESTS_309 = Citation(
    key="nccl-tests-309",
    authors="NVIDIA/nccl-tests issue 309",
    title="Acceptable performance of nccl-test on 2 HGX hosts? (2 nodes x 8 H100, 8x ConnectX-7 NDR per "
          "node)",
    venue="github.com/NVIDIA/nccl-tests/issues/309",
    year=2025,
    url="https://github.com/NVIDIA/nccl-tests/issues/309",
)
DGXC_BENCHMARKING = Citation(
    key="dgxc-benchmarking",
    authors="NVIDIA",
    title="DGX Cloud benchmarking recipes: nccl-tests all_reduce_perf sample output, 8x H100 80GB HBM3 "
          "(NVSwitch)",
    venue="github.com/NVIDIA/dgxc-benchmarking, nccl/README.md",
    year=2025,
    url="https://github.com/NVIDIA/dgxc-benchmarking",
)
TORCH_MATMUL_DATABASE = Citation(
    key="torch-matmul-database",
    authors="zzc0721 and contributors",
    title="torch-performance-test-data: torch.mm TFLOPS of square matrices 1024 to 10240 per GPU (best "
          "size), "
          "database.md",
    venue="github.com/zzc0721/torch-performance-test-data",
    year=2025,
    url="https://github.com/zzc0721/torch-performance-test-data",
)
COSTMODEL_H200 = Citation(
    key="costmodel-h200",
    authors="costmodel",
    title="One NVIDIA H200 SXM 141GB (700 W), measured: costmodel calibrate compute with cuDNN attention "
          "(sustained matrix products, memory-bound kernels, cuDNN fused attention) and "
          "benchmarks/gpu_step.py (whole training steps), PyTorch 2.11.0, CUDA 13.0, 2026-12-04",
    venue="costmodel documentation, docs/theory/step-vs-measured.md, 'One H200, measured'",
    year=2026,
)
SHAH_2024 = Citation(
    key="shah2024",
    authors="J. Shah, G. Bikshandi, Y. Zhang, V. Thakkar, P. Ramani, T. Dao",
    title="FlashAttention-3: Fast and Accurate Attention with Asynchrony and Low-precision",
    venue="arXiv:2407.08608 (NeurIPS 2024)",
    year=2024,
    url="https://arxiv.org/abs/2407.08608",
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
    url="https://doi.org/10.1109/DAC18072.2020.9218538",
)
WAN_2020 = Citation(
    key="wan2020",
    authors="X. Wan, H. Zhang, H. Wang, S. Hu, J. Zhang, K. Chen",
    title="RAT - Resilient Allreduce Tree for Distributed Machine Learning",
    venue="4th Asia-Pacific Workshop on Networking (APNet '20), 52-57",
    year=2020,
    url="https://doi.org/10.1145/3411029.3411037",
)

HUANG_2019 = Citation(
    key="huang2019",
    authors="Y. Huang, Y. Cheng, A. Bapna, O. Firat, M. X. Chen, D. Chen, H. Lee, J. Ngiam, Q. V. Le, "
            "Y. Wu, Z. Chen",
    title="GPipe: Efficient Training of Giant Neural Networks using Pipeline Parallelism",
    venue="Advances in Neural Information Processing Systems 32 (NeurIPS 2019)",
    year=2019,
    url="https://arxiv.org/abs/1811.06965",
)

NARAYANAN_2021_FLUSH = Citation(
    key="narayanan2021flush",
    authors="D. Narayanan, A. Phanishayee, K. Shi, X. Chen, M. Zaharia",
    title="Memory-Efficient Pipeline-Parallel DNN Training",
    venue="Proceedings of the 38th International Conference on Machine Learning (ICML 2021), "
          "PMLR 139:7937-7947",
    year=2021,
    url="https://arxiv.org/abs/2006.09503",
)

NARAYANAN_2021_MEGATRON = Citation(
    key="narayanan2021megatron",
    authors="D. Narayanan, M. Shoeybi, J. Casper, P. LeGresley, M. Patwary, V. Korthikanti, D. Vainbrand, "
            "P. Kashinkunti, J. Bernauer, B. Catanzaro, A. Phanishayee, M. Zaharia",
    title="Efficient Large-Scale Language Model Training on GPU Clusters Using Megatron-LM",
    venue="SC '21: International Conference for High Performance Computing, Networking, Storage "
          "and Analysis",
    year=2021,
    url="https://doi.org/10.1145/3458817.3476209",
)

LAND_1960 = Citation(
    key="land1960",
    authors="A. H. Land, A. G. Doig",
    title="An Automatic Method of Solving Discrete Programming Problems",
    venue="Econometrica 28(3), 497-520",
    year=1960,
    url="https://doi.org/10.2307/1910129",
)

QI_2024 = Citation(
    key="qi2024",
    authors="P. Qi, X. Wan, G. Huang, M. Lin",
    title="Zero Bubble Pipeline Parallelism",
    venue="The Twelfth International Conference on Learning Representations (ICLR 2024)",
    year=2024,
    url="https://arxiv.org/abs/2401.10241",
)

GOYAL_2017 = Citation(
    key="goyal2017",
    authors="P. Goyal, P. Dollár, R. Girshick, P. Noordhuis, L. Wesolowski, A. Kyrola, A. Tulloch, "
            "Y. Jia, K. He",
    title="Accurate, Large Minibatch SGD: Training ImageNet in 1 Hour",
    venue="arXiv:1706.02677",
    year=2017,
    url="https://arxiv.org/abs/1706.02677",
)

MCMAHAN_2017 = Citation(
    key="mcmahan2017",
    authors="H. B. McMahan, E. Moore, D. Ramage, S. Hampson, B. Agüera y Arcas",
    title="Communication-Efficient Learning of Deep Networks from Decentralized Data",
    venue="Proceedings of the 20th International Conference on Artificial Intelligence and Statistics "
          "(AISTATS), PMLR 54:1273-1282",
    year=2017,
    url="https://proceedings.mlr.press/v54/mcmahan17a.html",
)

RAJBHANDARI_2020 = Citation(
    key="rajbhandari2020",
    authors="S. Rajbhandari, J. Rasley, O. Ruwase, Y. He",
    title="ZeRO: Memory Optimizations Toward Training Trillion Parameter Models",
    venue="SC20: International Conference for High Performance Computing, Networking, Storage and Analysis",
    year=2020,
    url="https://doi.org/10.1109/SC41405.2020.00024",
)

KORTHIKANTI_2022 = Citation(
    key="korthikanti2022",
    authors="V. Korthikanti, J. Casper, S. Lym, L. McAfee, M. Andersch, M. Shoeybi, B. Catanzaro",
    title="Reducing Activation Recomputation in Large Transformer Models",
    venue="arXiv:2205.05198 (Proceedings of Machine Learning and Systems 5, 2023)",
    year=2022,
    url="https://arxiv.org/abs/2205.05198",
)

LI_2014 = Citation(
    key="li2014",
    authors="M. Li, D. G. Andersen, J. W. Park, A. J. Smola, A. Ahmed, V. Josifovski, J. Long, "
            "E. J. Shekita, B.-Y. Su",
    title="Scaling Distributed Machine Learning with the Parameter Server",
    venue="11th USENIX Symposium on Operating Systems Design and Implementation (OSDI), 583-598",
    year=2014,
    url="https://www.usenix.org/conference/osdi14/technical-sessions/presentation/li_mu",
)

DEAN_2012 = Citation(
    key="dean2012",
    authors="J. Dean, G. Corrado, R. Monga, K. Chen, M. Devin, Q. V. Le, M. Mao, M. Ranzato, A. Senior, "
            "P. Tucker, K. Yang, A. Y. Ng",
    title="Large Scale Distributed Deep Networks",
    venue="Advances in Neural Information Processing Systems 25 (NIPS), 1223-1231",
    year=2012,
)

SHOEYBI_2019 = Citation(
    key="shoeybi2019",
    authors="M. Shoeybi, M. Patwary, R. Puri, P. LeGresley, J. Casper, B. Catanzaro",
    title="Megatron-LM: Training Multi-Billion Parameter Language Models Using Model Parallelism",
    venue="arXiv:1909.08053",
    year=2019,
    url="https://arxiv.org/abs/1909.08053",
)

FEDUS_2022 = Citation(
    key="fedus2022",
    authors="W. Fedus, B. Zoph, N. Shazeer",
    title="Switch Transformers: Scaling to Trillion Parameter Models with Simple and Efficient Sparsity",
    venue="Journal of Machine Learning Research 23(120):1-39",
    year=2022,
    url="https://jmlr.org/papers/v23/21-0998.html",
)

LEPIKHIN_2021 = Citation(
    key="lepikhin2021",
    authors="D. Lepikhin, H. Lee, Y. Xu, D. Chen, O. Firat, Y. Huang, M. Krikun, N. Shazeer, Z. Chen",
    title="GShard: Scaling Giant Models with Conditional Computation and Automatic Sharding",
    venue="International Conference on Learning Representations (ICLR)",
    year=2021,
    url="https://arxiv.org/abs/2006.16668",
)

JIANG_2024 = Citation(
    key="jiang2024",
    authors="A. Q. Jiang, A. Sablayrolles, A. Roux, A. Mensch, B. Savary, C. Bamford et al.",
    title="Mixtral of Experts",
    venue="arXiv:2401.04088",
    year=2024,
    url="https://arxiv.org/abs/2401.04088",
)

DAI_2024 = Citation(
    key="dai2024",
    authors="D. Dai, C. Deng, C. Zhao, R. X. Xu, H. Gao, D. Chen, J. Li, W. Zeng, X. Yu, Y. Wu et al.",
    title="DeepSeekMoE: Towards Ultimate Expert Specialization in Mixture-of-Experts Language Models",
    venue="Proceedings of the 62nd Annual Meeting of the ACL (Volume 1), 1280-1297 (arXiv:2401.06066)",
    year=2024,
    url="https://arxiv.org/abs/2401.06066",
)

HO_2013 = Citation(
    key="ho2013",
    authors="Q. Ho, J. Cipar, H. Cui, J. K. Kim, S. Lee, P. B. Gibbons, G. A. Gibson, G. R. Ganger, "
            "E. P. Xing",
    title="More Effective Distributed ML via a Stale Synchronous Parallel Parameter Server",
    venue="Advances in Neural Information Processing Systems 26 (NIPS)",
    year=2013,
)

MITLIAGKAS_2016 = Citation(
    key="mitliagkas2016",
    authors="I. Mitliagkas, C. Zhang, S. Hadjis, C. Ré",
    title="Asynchrony begets Momentum, with an Application to Deep Learning",
    venue="54th Annual Allerton Conference on Communication, Control, and Computing, 997-1004",
    year=2016,
    url="https://doi.org/10.1109/ALLERTON.2016.7852343",
)

AJI_2017 = Citation(
    key="aji2017",
    authors="A. F. Aji, K. Heafield",
    title="Sparse Communication for Distributed Gradient Descent",
    venue="Proceedings of the 2017 Conference on Empirical Methods in Natural Language Processing "
          "(EMNLP), 440-445",
    year=2017,
    url="https://aclanthology.org/D17-1045",
)

LIN_2018 = Citation(
    key="lin2018",
    authors="Y. Lin, S. Han, H. Mao, Y. Wang, W. J. Dally",
    title="Deep Gradient Compression: Reducing the Communication Bandwidth for Distributed Training",
    venue="International Conference on Learning Representations (ICLR)",
    year=2018,
    url="https://arxiv.org/abs/1712.01887",
)

SEIDE_2014 = Citation(
    key="seide2014",
    authors="F. Seide, H. Fu, J. Droppo, G. Li, D. Yu",
    title="1-Bit Stochastic Gradient Descent and its Application to Data-Parallel Distributed "
          "Training of Speech DNNs",
    venue="Interspeech 2014, 1058-1062",
    year=2014,
)

KARIMIREDDY_2019 = Citation(
    key="karimireddy2019",
    authors="S. P. Karimireddy, Q. Rebjock, S. U. Stich, M. Jaggi",
    title="Error Feedback Fixes SignSGD and other Gradient Compression Schemes",
    venue="Proceedings of the 36th International Conference on Machine Learning (ICML), PMLR 97:3252-3261",
    year=2019,
    url="https://proceedings.mlr.press/v97/karimireddy19a.html",
)

TANG_2021 = Citation(
    key="tang2021",
    authors="H. Tang, S. Gan, A. A. Awan, S. Rajbhandari, C. Li, X. Lian, J. Liu, C. Zhang, Y. He",
    title="1-bit Adam: Communication Efficient Large-Scale Training with Adam's Convergence Speed",
    venue="Proceedings of the 38th International Conference on Machine Learning (ICML), PMLR 139:10118-10129",
    year=2021,
    url="https://proceedings.mlr.press/v139/tang21a.html",
)

BERNSTEIN_2018 = Citation(
    key="bernstein2018",
    authors="J. Bernstein, Y.-X. Wang, K. Azizzadenesheli, A. Anandkumar",
    title="signSGD: Compressed Optimisation for Non-Convex Problems",
    venue="Proceedings of the 35th International Conference on Machine Learning (ICML), PMLR 80:560-569",
    year=2018,
    url="https://proceedings.mlr.press/v80/bernstein18a.html",
)

XIAO_2004 = Citation(
    key="xiao2004",
    authors="L. Xiao, S. Boyd",
    title="Fast linear iterations for distributed averaging",
    venue="Systems & Control Letters 53(1):65-78",
    year=2004,
    url="https://doi.org/10.1016/j.sysconle.2004.02.022",
)

XIAO_2005 = Citation(
    key="xiao2005",
    authors="L. Xiao, S. Boyd, S. Lall",
    title="A scheme for robust distributed sensor fusion based on average consensus",
    venue="Fourth International Symposium on Information Processing in Sensor Networks (IPSN 2005), 63-70",
    year=2005,
    url="https://doi.org/10.1109/IPSN.2005.1440896",
)

OLSHEVSKY_2017 = Citation(
    key="olshevsky2017",
    authors="A. Olshevsky",
    title="Linear time average consensus and distributed optimization on fixed graphs",
    venue="SIAM Journal on Control and Optimization 55(6):3990-4014",
    year=2017,
    url="https://doi.org/10.1137/16M1076629",
)

YING_2021 = Citation(
    key="ying2021",
    authors="B. Ying, K. Yuan, Y. Chen, H. Hu, P. Pan, W. Yin",
    title="Exponential Graph is Provably Efficient for Decentralized Deep Training",
    venue="Advances in Neural Information Processing Systems 34 (NeurIPS 2021); arXiv:2110.13363",
    year=2021,
    url="https://arxiv.org/abs/2110.13363",
)

LIAN_2017 = Citation(
    key="lian2017",
    authors="X. Lian, C. Zhang, H. Zhang, C.-J. Hsieh, W. Zhang, J. Liu",
    title="Can Decentralized Algorithms Outperform Centralized Algorithms? A Case Study for "
          "Decentralized Parallel Stochastic Gradient Descent",
    venue="Advances in Neural Information Processing Systems 30 (NIPS 2017); arXiv:1705.09056",
    year=2017,
    url="https://arxiv.org/abs/1705.09056",
)

KOLOSKOVA_2020 = Citation(
    key="koloskova2020",
    authors="A. Koloskova, N. Loizou, S. Boreiri, M. Jaggi, S. U. Stich",
    title="A Unified Theory of Decentralized SGD with Changing Topology and Local Updates",
    venue="Proceedings of the 37th International Conference on Machine Learning (ICML), PMLR 119:5381-5393",
    year=2020,
    url="https://arxiv.org/abs/2003.10422",
)

GRAY_2006 = Citation(
    key="gray2006",
    authors="R. M. Gray",
    title="Toeplitz and Circulant Matrices: A Review",
    venue="Foundations and Trends in Communications and Information Theory 2(3):155-239",
    year=2006,
    url="https://doi.org/10.1561/0100000006",
)

NIVEN_1956 = Citation(
    key="niven1956",
    authors="I. Niven",
    title="Irrational Numbers (Carus Mathematical Monographs 11)",
    venue="Mathematical Association of America",
    year=1956,
)

STEGER_1999 = Citation(
    key="steger1999",
    authors="A. Steger, N. C. Wormald",
    title="Generating random regular graphs quickly",
    venue="Combinatorics, Probability and Computing 8(4):377-396",
    year=1999,
    url="https://doi.org/10.1017/S0963548399003867",
)

BATAGELJ_2005 = Citation(
    key="batagelj2005",
    authors="V. Batagelj, U. Brandes",
    title="Efficient generation of large random networks",
    venue="Physical Review E 71(3):036113",
    year=2005,
    url="https://doi.org/10.1103/PhysRevE.71.036113",
)

PARLETT_1998 = Citation(
    key="parlett1998",
    authors="B. N. Parlett",
    title="The Symmetric Eigenvalue Problem (Classics in Applied Mathematics 20)",
    venue="SIAM, Philadelphia",
    year=1998,
    url="https://doi.org/10.1137/1.9781611971163",
)

PAIGE_1980 = Citation(
    key="paige1980",
    authors="C. C. Paige",
    title="Accuracy and effectiveness of the Lanczos algorithm for the symmetric eigenproblem",
    venue="Linear Algebra and its Applications 34:235-258",
    year=1980,
    url="https://doi.org/10.1016/0024-3795(80)90167-6",
)

ERICSSON_1980 = Citation(
    key="ericsson1980",
    authors="T. Ericsson, A. Ruhe",
    title="The spectral transformation Lanczos method for the numerical solution of large sparse "
          "generalized symmetric eigenvalue problems",
    venue="Mathematics of Computation 35(152):1251-1268",
    year=1980,
    url="https://doi.org/10.1090/S0025-5718-1980-0583502-2",
)

MOHAR_1991 = Citation(
    key="mohar1991",
    authors="B. Mohar",
    title="Eigenvalues, diameter, and mean distance in graphs",
    venue="Graphs and Combinatorics 7(1):53-64",
    year=1991,
    url="https://doi.org/10.1007/BF01789463",
)

SENETA_2006 = Citation(
    key="seneta2006",
    authors="E. Seneta",
    title="Non-negative Matrices and Markov Chains",
    venue="Springer Series in Statistics, revised printing of the 2nd edition",
    year=2006,
    url="https://doi.org/10.1007/0-387-32792-4",
)

CHOWDHERY_2022 = Citation(
    key="chowdhery2022",
    authors="A. Chowdhery, S. Narang, J. Devlin et al.",
    title="PaLM: Scaling Language Modeling with Pathways",
    venue="arXiv:2204.02311 (JMLR 24(240):1-113, 2023)",
    year=2022,
    url="https://arxiv.org/abs/2204.02311",
)
KAPLAN_2020 = Citation(
    key="kaplan2020",
    authors="J. Kaplan, S. McCandlish, T. Henighan et al.",
    title="Scaling Laws for Neural Language Models",
    venue="arXiv:2001.08361",
    year=2020,
    url="https://arxiv.org/abs/2001.08361",
)
SMITH_2022 = Citation(
    key="smith2022",
    authors="S. Smith, M. Patwary, B. Norick et al.",
    title="Using DeepSpeed and Megatron to Train Megatron-Turing NLG 530B, A Large-Scale Generative "
          "Language Model",
    venue="arXiv:2201.11990",
    year=2022,
    url="https://arxiv.org/abs/2201.11990",
)
MEGATRON_LM = Citation(
    key="megatronlm",
    authors="NVIDIA",
    title="Megatron-LM and Megatron-Core (source code)",
    venue="NVIDIA Corporation, https://github.com/NVIDIA/Megatron-LM",
    year=2025,
    url="https://github.com/NVIDIA/Megatron-LM",
)
PYTORCH_DDP = Citation(
    key="li2020ddp",
    authors="S. Li, Y. Zhao, R. Varma, O. Salpekar, P. Noordhuis, T. Li, A. Paszke, J. Smith, B. Vaughan, "
            "P. Damania, S. Chintala",
    title="PyTorch Distributed: Experiences on Accelerating Data Parallel Training (and the PyTorch source "
          "code, https://github.com/pytorch/pytorch)",
    venue="Proceedings of the VLDB Endowment 13(12):3005-3018",
    year=2020,
    url="https://doi.org/10.14778/3415478.3415530",
)
DEEPSPEED = Citation(
    key="deepspeed",
    authors="Microsoft",
    title="DeepSpeed (source code)",
    venue="Microsoft Corporation, https://github.com/deepspeedai/DeepSpeed",
    year=2025,
    url="https://github.com/deepspeedai/DeepSpeed",
)
ISAEV_2023 = Citation(
    key="isaev2023calculon",
    authors="M. Isaev, N. McDonald, L. Dennison, R. Vuduc",
    title="Calculon: a Methodology and Tool for High-Level Codesign of Systems and Large Language Models "
          "(and its source code, https://github.com/calculon-ai/calculon)",
    venue="SC '23: Proceedings of the International Conference for High Performance Computing, Networking, "
          "Storage and Analysis",
    year=2023,
    url="https://doi.org/10.1145/3581784.3607102",
)
ZHAO_2023 = Citation(
    key="zhao2023fsdp",
    authors="Y. Zhao, A. Gu, R. Varma, L. Luo, C.-C. Huang, M. Xu, L. Wright, H. Shojanazeri, M. Ott, "
            "S. Shleifer, A. Desmaison, C. Balioglu, P. Damania, B. Nguyen, G. Chauhan, Y. Hao, A. Mathews, "
            "S. Li",
    title="PyTorch FSDP: Experiences on Scaling Fully Sharded Data Parallel (and the PyTorch source code)",
    venue="Proceedings of the VLDB Endowment 16(12):3848-3860",
    year=2023,
    url="https://doi.org/10.14778/3611540.3611569",
)

# -- GPU presets (costmodel/gpus/presets/*.toml): datasheets, measurements, kernel configurations ------
NVIDIA_AMPERE_WP = Citation(
    key="nvidia-ampere-whitepaper",
    authors="NVIDIA",
    title="NVIDIA A100 Tensor Core GPU Architecture (whitepaper)",
    venue="NVIDIA Corporation",
    year=2020,
    url="https://images.nvidia.com/aem-dam/en-zz/Solutions/data-center/nvidia-ampere-architecture-whitepaper.pdf",
)
NVIDIA_HOPPER_WP = Citation(
    key="nvidia-hopper-whitepaper",
    authors="NVIDIA",
    title="NVIDIA H100 Tensor Core GPU Architecture (whitepaper)",
    venue="NVIDIA Corporation",
    year=2022,
    url="https://resources.nvidia.com/en-us-hopper-architecture/nvidia-h100-tensor-c",
)
NVIDIA_H200 = Citation(
    key="nvidia-h200",
    authors="NVIDIA",
    title="NVIDIA H200 Tensor Core GPU datasheet",
    venue="NVIDIA Corporation",
    year=2024,
    url="https://www.nvidia.com/en-us/data-center/h200/",
)
NVIDIA_ADA_WP = Citation(
    key="nvidia-ada-whitepaper",
    authors="NVIDIA",
    title="NVIDIA Ada GPU Architecture (whitepaper), appendix: GeForce RTX 4090 specifications",
    venue="NVIDIA Corporation",
    year=2023,
    url="https://images.nvidia.com/aem-dam/Solutions/geforce/ada/nvidia-ada-gpu-architecture.pdf",
)
NVIDIA_DGX_A100 = Citation(
    key="nvidia-dgx-a100",
    authors="NVIDIA",
    title="NVIDIA DGX A100 datasheet",
    venue="NVIDIA Corporation",
    year=2020,
    url="https://www.nvidia.com/en-us/data-center/dgx-a100/",
)
NVIDIA_DGX_H100 = Citation(
    key="nvidia-dgx-h100",
    authors="NVIDIA",
    title="NVIDIA DGX H100 datasheet",
    venue="NVIDIA Corporation",
    year=2023,
    url="https://www.nvidia.com/en-us/data-center/dgx-h100/",
)
NVIDIA_DGX_H200 = Citation(
    key="nvidia-dgx-h200",
    authors="NVIDIA",
    title="NVIDIA DGX H200 datasheet",
    venue="NVIDIA Corporation",
    year=2024,
    url="https://www.nvidia.com/en-us/data-center/dgx-h200/",
)
NVIDIA_DGX_B200 = Citation(
    key="nvidia-dgx-b200",
    authors="NVIDIA",
    title="NVIDIA DGX B200 datasheet",
    venue="NVIDIA Corporation",
    year=2024,
    url="https://resources.nvidia.com/en-us-dgx-systems/dgx-b200-datasheet",
)
NVIDIA_CUTLASS = Citation(
    key="nvidia-cutlass",
    authors="NVIDIA",
    title="CUTLASS: CUDA Templates for Linear Algebra Subroutines (source code: "
          "python/cutlass_library/generator.py, the kernel configurations of the CUTLASS library)",
    venue="NVIDIA Corporation, https://github.com/NVIDIA/cutlass",
    year=2025,
    url="https://github.com/NVIDIA/cutlass",
)
AMD_MI300X = Citation(
    key="amd-mi300x",
    authors="AMD",
    title="AMD Instinct MI300X accelerator data sheet and product specifications",
    venue="Advanced Micro Devices",
    year=2023,
    url="https://www.amd.com/en/products/accelerators/instinct/mi300/mi300x.html",
)
AMD_HIPBLASLT = Citation(
    key="amd-hipblaslt",
    authors="AMD",
    title="hipBLASLt (source code: the Tensile kernel logic files for gfx942, MI300)",
    venue="Advanced Micro Devices, https://github.com/ROCm/hipBLASLt",
    year=2025,
    url="https://github.com/ROCm/hipBLASLt",
)
AZURE_ND_MI300X = Citation(
    key="azure-nd-mi300x-v5",
    authors="Microsoft",
    title="ND MI300X v5 size series (Azure virtual machines documentation): 8 MI300X, "
          "400 Gb/s InfiniBand per GPU",
    venue="Microsoft Learn",
    year=2024,
    url="https://learn.microsoft.com/en-us/azure/virtual-machines/sizes/gpu-accelerated/ndmi300xv5-series",
)
BEKMAN_MLE = Citation(
    key="bekman-ml-engineering",
    authors="S. Bekman",
    title="Machine Learning Engineering Open Book (compute/accelerator/README.md: the Maximum Achievable "
          "Matmul FLOPS (MAMF) comparison table, the TFLOPS, memory and clock tables)",
    venue="https://github.com/stas00/ml-engineering",
    year=2026,
    url="https://github.com/stas00/ml-engineering/blob/master/compute/accelerator/README.md",
)
ERNST_GPU_BENCHES = Citation(
    key="rrze-gpu-benches",
    authors="D. Ernst (NHR@FAU, RRZE-HPC)",
    title="gpu-benches: GPU micro benchmarks and their result files (gpu-stream, gpu-roofline, "
          "gpu-small-kernels)",
    venue="https://github.com/RRZE-HPC/gpu-benches",
    year=2025,
    url="https://github.com/RRZE-HPC/gpu-benches",
)
NCCL_TESTS_307 = Citation(
    key="nccl-tests-307",
    authors="NVIDIA/nccl-tests users",
    title="NVIDIA/nccl-tests issue 307: NCCL_DEBUG=INFO output of one node of 8 GeForce RTX 4090 on PCIe",
    venue="GitHub, https://github.com/NVIDIA/nccl-tests/issues/307",
    year=2025,
    url="https://github.com/NVIDIA/nccl-tests/issues/307",
)
PCI_SIG_4 = Citation(
    key="pcie4",
    authors="PCI-SIG",
    title="PCI Express Base Specification, Revision 4.0 (16 GT/s per lane, 128b/130b encoding)",
    venue="PCI-SIG",
    year=2017,
)
IEEE_8023AN = Citation(
    key="ieee802.3an",
    authors="IEEE",
    title="IEEE Std 802.3an-2006: physical layer parameters for 10 Gb/s operation, type 10GBASE-T",
    venue="IEEE Std 802.3an",
    year=2006,
)

TORCHRUN = Citation(
    key="torchrun",
    authors="PyTorch contributors",
    title="torchrun (Elastic Launch): environment variables set for each worker (RANK, WORLD_SIZE, "
          "LOCAL_RANK, LOCAL_WORLD_SIZE, MASTER_ADDR, MASTER_PORT; its master port defaults to 29500)",
    venue="PyTorch documentation, torch.distributed.run",
    year=2024,
    url="https://pytorch.org/docs/stable/elastic/run.html",
)
SLURM_SRUN = Citation(
    key="slurm-srun",
    authors="SchedMD",
    title="srun(1), output environment variables: SLURM_PROCID, SLURM_NTASKS, SLURM_LOCALID, SLURM_NODEID, "
          "SLURM_STEP_ID, SLURM_STEP_TASKS_PER_NODE, SLURM_TASKS_PER_NODE, SLURM_NTASKS_PER_NODE",
    venue="Slurm Workload Manager documentation",
    year=2024,
    url="https://slurm.schedmd.com/srun.html",
)
OPEN_MPI_ENV = Citation(
    key="open-mpi-env",
    authors="The Open MPI Project",
    title="Environment variables set for MPI applications: OMPI_COMM_WORLD_SIZE, OMPI_COMM_WORLD_RANK, "
          "OMPI_COMM_WORLD_LOCAL_SIZE, OMPI_COMM_WORLD_LOCAL_RANK",
    venue="Open MPI 5.0 documentation, section 11.1",
    year=2024,
    url="https://docs.open-mpi.org/en/v5.0.x/tuning-apps/environment-var.html",
)
MVAPICH2_GUIDE = Citation(
    key="mvapich2-guide",
    authors="MVAPICH Team, Network-Based Computing Laboratory, The Ohio State University",
    title="MVAPICH2 2.3.7 User Guide (MV2_COMM_WORLD_LOCAL_RANK to choose a GPU before MPI_Init; "
          "mpirun_rsh's mpispawn, src/pm/mpirun/mpispawn.c, sets MV2_COMM_WORLD_RANK, _SIZE, _LOCAL_RANK and "
          "_LOCAL_SIZE)",
    venue="mvapich.cse.ohio-state.edu",
    year=2022,
    url="https://mvapich.cse.ohio-state.edu/static/media/mvapich/mvapich2-userguide.html",
)
INTEL_MPI_HYDRA_ENV = Citation(
    key="intel-mpi-hydra-env",
    authors="Intel",
    title="Intel MPI Library Developer Reference for Linux OS: Environment Variables Not Propagated by Hydra "
          "(PMI_RANK, PMI_SIZE, MPI_LOCALRANKID, MPI_LOCALNRANKS: Hydra sets them for each process)",
    venue="Intel MPI Library 2021.16 documentation",
    year=2025,
    url="https://www.intel.com/content/www/us/en/docs/mpi-library/developer-reference-linux/2021-16/"
        "environment-variables-not-propagated-by-hydra.html",
)
ALCF_POLARIS_GPUS = Citation(
    key="alcf-polaris-gpus",
    authors="Argonne Leadership Computing Facility",
    title="Using GPUs on Polaris Compute Nodes: binding MPI ranks to GPUs with PMI_LOCAL_RANK and PMI_RANK, "
          "set by Cray MPICH's mpiexec",
    venue="ALCF user guides",
    year=2024,
    url="https://docs.alcf.anl.gov/polaris/running-jobs/using-gpus/",
)

HPE_PALS_MPIEXEC = Citation(
    key="hpe-pals-mpiexec",
    authors="Hewlett Packard Enterprise",
    title="mpiexec(1), HPE Cray Parallel Application Launch Service (PALS): environment variables set "
          "for each rank (PALS_RANKID, PALS_NODEID, PALS_LOCAL_RANKID, PALS_LOCAL_SIZE; no world size, "
          "which Cray MPICH gives as PMI_SIZE)",
    venue="HPE Cray Programming Environment / PALS documentation",
    year=2023,
    url="https://cpe.ext.hpe.com/docs/latest/pals/man/mpiexec.1.html",
)
ALCF_AURORA_JOBS = Citation(
    key="alcf-aurora-jobs",
    authors="Argonne Leadership Computing Facility",
    title="Running Jobs on Aurora: binding ranks to GPU tiles with PALS_LOCAL_RANKID, set by mpiexec (PALS)",
    venue="ALCF user guides",
    year=2025,
    url="https://docs.alcf.anl.gov/aurora/running-jobs-aurora/",
)

HYNDMAN_FAN_1996 = Citation(
    key="hyndman1996",
    authors="R. J. Hyndman, Y. Fan",
    title="Sample quantiles in statistical packages",
    venue="The American Statistician 50(4):361-365",
    year=1996,
    url="https://doi.org/10.2307/2684934",
)
NCCL_TESTS = Citation(
    key="nccl-tests",
    authors="NVIDIA",
    title="nccl-tests: performance tests for NCCL (README: out-of-place and in-place column groups, "
          "-N (run_cycles) to run the sweep several times, -w warm-up and -n timed iterations)",
    venue="github.com/NVIDIA/nccl-tests",
    year=2024,
    url="https://github.com/NVIDIA/nccl-tests",
)

BROWN_2020 = Citation(
    key="brown2020",
    authors="T. B. Brown, B. Mann, N. Ryder et al.",
    title="Language Models are Few-Shot Learners",
    venue="NeurIPS 2020 (arXiv:2005.14165)",
    year=2020,
    url="https://arxiv.org/abs/2005.14165",
)
DUBEY_2024 = Citation(
    key="dubey2024",
    authors="A. Dubey, A. Jauhri, A. Pandey et al. (Llama Team, AI @ Meta)",
    title="The Llama 3 Herd of Models",
    venue="arXiv:2407.21783",
    year=2024,
    url="https://arxiv.org/abs/2407.21783",
)
LIU_2023_RING = Citation(
    key="liu2023ring",
    authors="H. Liu, M. Zaharia, P. Abbeel",
    title="Ring Attention with Blockwise Transformers for Near-Infinite Context",
    venue="arXiv:2310.01889 (ICLR 2024)",
    year=2023,
    url="https://arxiv.org/abs/2310.01889",
)
JIANG_2023 = Citation(
    key="jiang2023",
    authors="A. Q. Jiang, A. Sablayrolles, A. Mensch, C. Bamford, D. S. Chaplot, D. de las Casas et al.",
    title="Mistral 7B",
    venue="arXiv:2310.06825",
    year=2023,
    url="https://arxiv.org/abs/2310.06825",
)
GEMMA_2024 = Citation(
    key="gemma2024",
    authors="Gemma Team, Google DeepMind",
    title="Gemma 2: Improving Open Language Models at a Practical Size",
    venue="arXiv:2408.00118",
    year=2024,
    url="https://arxiv.org/abs/2408.00118",
)
GEMMA_2025 = Citation(
    key="gemma2025",
    authors="Gemma Team, Google DeepMind",
    title="Gemma 3 Technical Report",
    venue="arXiv:2503.19786",
    year=2025,
    url="https://arxiv.org/abs/2503.19786",
)
TORCHTITAN = Citation(
    key="torchtitan",
    authors="W. Liang, T. Liu, L. Wright, W. Constable, A. Gu, C.-C. Huang et al.",
    title="TorchTitan: One-stop PyTorch native solution for production ready LLM pre-training",
    venue="arXiv:2410.06511 (ICLR 2025); code: https://github.com/pytorch/torchtitan",
    year=2024,
    url="https://arxiv.org/abs/2410.06511",
)
DEEPSEEK_V2 = Citation(
    key="deepseekv2",
    authors="DeepSeek-AI (A. Liu, B. Feng, B. Wang, B. Wang, B. Liu, C. Zhao, C. Deng, C. Ruan et al.)",
    title="DeepSeek-V2: A Strong, Economical, and Efficient Mixture-of-Experts Language Model",
    venue="arXiv:2405.04434",
    year=2024,
    url="https://arxiv.org/abs/2405.04434",
)
DEEPSEEK_V3 = Citation(
    key="deepseekv3",
    authors="DeepSeek-AI (A. Liu, B. Feng, B. Xue, B. Wang, B. Wu, C. Lu, C. Zhao, C. Deng et al.)",
    title="DeepSeek-V3 Technical Report",
    venue="arXiv:2412.19437",
    year=2024,
    url="https://arxiv.org/abs/2412.19437",
)
HF_TRANSFORMERS = Citation(
    key="hftransformers",
    authors="Hugging Face",
    title="Transformers: model configurations (PretrainedConfig, LlamaConfig, MixtralConfig) and the "
          "config.json files of the published models",
    venue="Hugging Face, https://github.com/huggingface/transformers",
    year=2024,
    url="https://huggingface.co/docs/transformers/main_classes/configuration",
)

ABADI_2016 = Citation(
    key="abadi2016",
    authors="M. Abadi, A. Chu, I. Goodfellow, H. B. McMahan, I. Mironov, K. Talwar, L. Zhang",
    title="Deep Learning with Differential Privacy",
    venue="Proceedings of the 2016 ACM SIGSAC Conference on Computer and Communications Security (CCS), "
          "pp. 308-318",
    year=2016,
    url="https://doi.org/10.1145/2976749.2978318",
)
MIRONOV_2017 = Citation(
    key="mironov2017",
    authors="I. Mironov",
    title="Rényi Differential Privacy",
    venue="IEEE 30th Computer Security Foundations Symposium (CSF), pp. 263-275",
    year=2017,
    url="https://arxiv.org/abs/1702.07476",
)
MIRONOV_2019 = Citation(
    key="mironov2019",
    authors="I. Mironov, K. Talwar, L. Zhang",
    title="Rényi Differential Privacy of the Sampled Gaussian Mechanism",
    venue="arXiv:1908.10530",
    year=2019,
    url="https://arxiv.org/abs/1908.10530",
)
BALLE_2020 = Citation(
    key="balle2020",
    authors="B. Balle, G. Barthe, M. Gaboardi, J. Hsu, T. Sato",
    title="Hypothesis Testing Interpretations and Rényi Differential Privacy",
    venue="Proceedings of the 23rd International Conference on Artificial Intelligence and Statistics "
          "(AISTATS), PMLR 108:2496-2506",
    year=2020,
    url="https://arxiv.org/abs/1905.09982",
)
MCMAHAN_2018 = Citation(
    key="mcmahan2018",
    authors="H. B. McMahan, D. Ramage, K. Talwar, L. Zhang",
    title="Learning Differentially Private Recurrent Language Models",
    venue="International Conference on Learning Representations (ICLR)",
    year=2018,
    url="https://arxiv.org/abs/1710.06963",
)
DP_ACCOUNTING = Citation(
    key="dp-accounting",
    authors="Google",
    title="dp_accounting: the RDP privacy accountant (python/dp_accounting/dp_accounting/rdp/"
          "rdp_privacy_accountant.py)",
    venue="github.com/google/differential-privacy, commit b5b0286e",
    year=2026,
    url="https://github.com/google/differential-privacy/blob/main/python/dp_accounting/dp_accounting/rdp/"
        "rdp_privacy_accountant.py",
)

KARIMIREDDY_2020 = Citation(
    key="karimireddy2020",
    authors="S. P. Karimireddy, S. Kale, M. Mohri, S. J. Reddi, S. U. Stich, A. T. Suresh",
    title="SCAFFOLD: Stochastic Controlled Averaging for Federated Learning",
    venue="Proceedings of the 37th International Conference on Machine Learning (ICML), PMLR 119:5132-5143",
    year=2020,
    url="https://proceedings.mlr.press/v119/karimireddy20a.html",
)
LI_2020_FEDPROX = Citation(
    key="li2020fedprox",
    authors="T. Li, A. K. Sahu, M. Zaheer, M. Sanjabi, A. Talwalkar, V. Smith",
    title="Federated Optimization in Heterogeneous Networks",
    venue="Proceedings of Machine Learning and Systems (MLSys) 2:429-450",
    year=2020,
    url="https://arxiv.org/abs/1812.06127",
)
WANG_2020_FEDNOVA = Citation(
    key="wang2020fednova",
    authors="J. Wang, Q. Liu, H. Liang, G. Joshi, H. V. Poor",
    title="Tackling the Objective Inconsistency Problem in Heterogeneous Federated Optimization",
    venue="Advances in Neural Information Processing Systems 33 (NeurIPS)",
    year=2020,
    url="https://arxiv.org/abs/2007.07481",
)
REISIZADEH_2020 = Citation(
    key="reisizadeh2020",
    authors="A. Reisizadeh, A. Mokhtari, H. Hassani, A. Jadbabaie, R. Pedarsani",
    title="FedPAQ: A Communication-Efficient Federated Learning Method with Periodic Averaging and "
          "Quantization",
    venue="Proceedings of the 23rd International Conference on Artificial Intelligence and Statistics "
          "(AISTATS), PMLR 108:2021-2031",
    year=2020,
    url="https://proceedings.mlr.press/v108/reisizadeh20a.html",
)
ARNOLD_2008 = Citation(
    key="arnold2008",
    authors="B. C. Arnold, N. Balakrishnan, H. N. Nagaraja",
    title="A First Course in Order Statistics",
    venue="SIAM Classics in Applied Mathematics 54",
    year=2008,
    url="https://doi.org/10.1137/1.9780898719062",
)

CITATIONS: dict[str, Citation] = {
    c.key: c
    for c in (
        THAKUR_2005, CHAN_2007, KIELMANN_2000, WESOLOWSKY_1981, MOLKA_2009, PATARASUK_2009, SANDERS_2009,
        BRUCK_1997, RABENSEIFNER_2004,
        TRAFF_2020, IEEE_8023, IBTA_SPEC, NVIDIA_A100, NVIDIA_H100, SERGEEV_2018, NCCL, MPICH_SMP,
        LEE_2020, WAN_2020,
        HUANG_2019, NARAYANAN_2021_FLUSH, NARAYANAN_2021_MEGATRON, QI_2024,
        LAND_1960, GOYAL_2017,
        MCMAHAN_2017,
        RAJBHANDARI_2020, KORTHIKANTI_2022,
        LI_2014, DEAN_2012, SHOEYBI_2019, FEDUS_2022, LEPIKHIN_2021, HO_2013, MITLIAGKAS_2016,
        AJI_2017, LIN_2018, SEIDE_2014, KARIMIREDDY_2019, TANG_2021, DEEPSPEED, BERNSTEIN_2018,
        XIAO_2004, XIAO_2005, OLSHEVSKY_2017, YING_2021, LIAN_2017, KOLOSKOVA_2020, GRAY_2006, NIVEN_1956,
        STEGER_1999, BATAGELJ_2005, PARLETT_1998, PAIGE_1980, ERICSSON_1980, MOHAR_1991, SENETA_2006,
        CHOWDHERY_2022, KAPLAN_2020, SMITH_2022, MEGATRON_LM, PYTORCH_DDP, ISAEV_2023, ZHAO_2023,
        NVIDIA_GEMM_GUIDE, WILLIAMS_2009,
        DAO_2023, MICIKEVICIUS_2018, SUPERBENCH, ABCI_BENCHMARK, NCCL_TESTS_119, NCCL_TESTS_309,
        DGXC_BENCHMARKING, TORCH_MATMUL_DATABASE, SHAH_2024, COSTMODEL_H200,
        NVIDIA_AMPERE_WP, NVIDIA_HOPPER_WP, NVIDIA_H200, NVIDIA_ADA_WP, NVIDIA_DGX_A100, NVIDIA_DGX_H100,
        NVIDIA_DGX_H200, NVIDIA_DGX_B200, NVIDIA_CUTLASS, AMD_MI300X, AMD_HIPBLASLT, AZURE_ND_MI300X,
        BEKMAN_MLE, ERNST_GPU_BENCHES, NCCL_TESTS_307, PCI_SIG_4, IEEE_8023AN,
        TORCHRUN, SLURM_SRUN, OPEN_MPI_ENV, MVAPICH2_GUIDE, INTEL_MPI_HYDRA_ENV, ALCF_POLARIS_GPUS,
        HPE_PALS_MPIEXEC, ALCF_AURORA_JOBS,
        HYNDMAN_FAN_1996, NCCL_TESTS,
        BROWN_2020, DUBEY_2024, JIANG_2024, DAI_2024, LIU_2023_RING, HF_TRANSFORMERS,
        JIANG_2023, GEMMA_2024, GEMMA_2025, TORCHTITAN, DEEPSEEK_V2, DEEPSEEK_V3,
        ABADI_2016, MIRONOV_2017, MIRONOV_2019, BALLE_2020, MCMAHAN_2018, DP_ACCOUNTING,
        KARIMIREDDY_2020, LI_2020_FEDPROX, WANG_2020_FEDNOVA, REISIZADEH_2020, ARNOLD_2008,
    )
}
