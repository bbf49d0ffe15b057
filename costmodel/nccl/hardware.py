"""The hardware NCCL's model runs on, as a user describes it: a preset's name, or the few explicit numbers.

The command line's hardware options (``costmodel nccl allreduce --preset dgx-h100`` or ``--arch 90
--channels 16 --bw-intra 20 --bw-inter 12``) and a calibration manifest's ``[[log]]`` tables
(``preset = "dgx-h100"`` or ``arch = 90``, ``channels = 16``, ...) describe the same thing with the same
names; :class:`Hardware` holds either and :meth:`Hardware.system` builds the
:class:`~costmodel.nccl.system.System` once, with the same rules for both:

* a preset describes the whole machine, so explicit numbers beside it are refused (never silently
  dropped or mixed in), but for ``net_latency``: the latency a network plugin reports (NCCL's
  ``latencyInter``) belongs to the network a node is cabled to, not to the node (AWS's EFA through
  aws-ofi-nccl beside InfiniBand), and is added to the preset's across nodes;
* without a preset, ``arch``, ``channels`` and ``bw_intra`` are needed, and ``bw_inter`` on more than
  one node (a network is never assumed to be as fast as the links inside a node), and there the graphs
  are those NCCL's search makes of such links (:meth:`System.explicit`);
* with a preset and no node count, the ranks fill whole nodes of the preset's ``gpus_per_node``;
* a preset whose node spans hosts (``hosts_per_node`` above 1: one NVLink domain across hosts, which
  NCCL counts as one node) counts nodes as NVLink domains, never as hosts: a log's hosts do not
  count its nodes (:meth:`Hardware.node_hosts`), and a node count is the domains the ranks fill;
  explicit numbers say the same with ``hosts_per_node`` (a rack of GB300s over 18 hosts), a node
  count then given where the domains are several.

What the explicit numbers assume is :meth:`System.explicit`'s to say.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, fields
from fractions import Fraction
from typing import Any

from costmodel.errors import InputError
from costmodel.nccl.presets import load_preset
from costmodel.nccl.system import System, parse_arch

__all__ = ["Hardware"]

_NEEDED = ("arch", "channels", "bw_intra")
"""What explicit hardware must give."""


@dataclass(frozen=True)
class Hardware:
    """A machine for NCCL's model: *preset* (a preset's name or file), or the explicit numbers
    (None: not given).  *intra* (``nvlink`` or ``pcie``), *net_latency* (µs), *cpu*, *nvls* and
    *collnet* have defaults; see :meth:`System.explicit` for what each means.  *hosts_per_node*: the
    hosts one node of the explicit hardware spans (one NVLink domain over several hosts, Multi-Node
    NVLink), which NCCL counts as one node.
    """

    preset: str | None = None
    arch: str | int | None = None
    channels: int | None = None
    bw_intra: Fraction | None = None
    bw_inter: Fraction | None = None
    intra: str = "nvlink"
    net_latency: Fraction = Fraction(0)
    cpu: str = "intel"
    nvls: bool = False
    collnet: bool = False
    hosts_per_node: int = 1

    @classmethod
    def of(cls, mapping: Mapping[str, Any]) -> Hardware:
        """The hardware a mapping's keys describe (a manifest's ``[[log]]`` table); other keys are
        ignored, numbers are read exactly."""
        from costmodel.exact import parse_number

        given = {f.name: mapping[f.name] for f in fields(cls) if f.name in mapping}
        for key in ("bw_intra", "bw_inter", "net_latency"):
            if key in given:
                given[key] = parse_number(given[key], what=key)
        return cls(**given)

    def node_hosts(self) -> int:
        """The hosts one node spans: the preset's, else *hosts_per_node* (1: a node is a host)."""
        if self.preset is None:
            return self.hosts_per_node
        return int(load_preset(self.preset).get("hosts_per_node", 1))

    def given(self) -> list[str]:
        """The explicit settings given (other than their defaults), in declaration order."""
        return [f.name for f in fields(self)
                if f.name != "preset" and getattr(self, f.name) != f.default]

    def system(self, *, ranks: int | None, nodes: int | None = None) -> System:
        """The :class:`~costmodel.nccl.system.System` for *ranks* GPUs on *nodes* nodes.

        Raises
        ------
        InputError
            No rank count; a preset with explicit numbers beside it; explicit hardware that lacks
            ``arch``, ``channels`` or ``bw_intra``, or ``bw_inter`` on several nodes.

        Examples
        --------
        >>> Hardware(arch=80, channels=12, bw_intra=Fraction(20)).system(ranks=8).nodes
        1
        >>> Hardware(arch=80, channels=12, bw_intra=Fraction(20)).system(ranks=16, nodes=2)
        Traceback (most recent call last):
            ...
        costmodel.errors.InputError: 2 nodes need bw_inter=GBPS (GB/s per channel across nodes)
        """
        if ranks is None:
            raise InputError("no rank count given; pass ranks=R (GPUs in the communicator)")
        if self.preset is not None:
            extra = [k for k in self.given() if k != "net_latency"]
            if extra:
                raise InputError(f"preset= describes the hardware; drop {', '.join(f'{k}=' for k in extra)} "
                                 "(or drop preset= and describe the hardware with them)")
            mapping = load_preset(self.preset)
            gpus, hosts = mapping["gpus_per_node"], mapping.get("hosts_per_node", 1)
            domains = -(-ranks // gpus)
            if nodes is not None and hosts > 1 and nodes != domains:
                raise InputError(
                    f"nodes={nodes}: a node of preset {mapping['name']!r} is one NVLink domain of {gpus} "
                    f"GPUs over {hosts} hosts, which NCCL counts as one node, so {ranks} ranks are on "
                    f"{domains}; drop nodes= (or give nodes={domains})")
            if nodes is None:
                nodes = domains if hosts > 1 else ranks // gpus if ranks > gpus and ranks % gpus == 0 else 1
            system = System.from_preset(mapping, ranks=ranks, nodes=nodes)
            return system.with_net_latency(self.net_latency) if self.net_latency and nodes > 1 else system
        missing = [k for k in _NEEDED if getattr(self, k) is None]
        if missing:
            some = len(missing) < len(_NEEDED)
            raise InputError(("the hardware is not complete: pass " if some else
                              "no hardware given: pass preset=NAME (see costmodel nccl presets) or ")
                             + ", ".join(f"{k}=" for k in missing)
                             + (" (and bw_inter= on several nodes)" if "bw_intra" in missing else ""))
        assert self.arch is not None and self.channels is not None and self.bw_intra is not None
        if isinstance(self.hosts_per_node, bool) or not isinstance(self.hosts_per_node, int) \
                or self.hosts_per_node < 1:
            raise InputError(f"hosts_per_node={self.hosts_per_node!r} is not a whole number of hosts, at "
                             "least 1")
        nodes = 1 if nodes is None else nodes
        bw_inter = self.bw_inter
        if bw_inter is None:
            if nodes > 1:
                raise InputError(f"{nodes} nodes need bw_inter=GBPS (GB/s per channel across nodes)")
            bw_inter = self.bw_intra
        return System.explicit(arch=parse_arch(str(self.arch)), ranks=ranks, nodes=nodes,
                               channels=self.channels, bw_intra=self.bw_intra, bw_inter=bw_inter,
                               intra=self.intra, net_latency=self.net_latency, cpu=self.cpu, nvls=self.nvls,
                               collnet=self.collnet)
