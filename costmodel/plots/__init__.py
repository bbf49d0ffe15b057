"""Plots people would rather look at: the data of each plot, and drawing it to PNG or SVG.

Each plot has a data function, which computes (pure, no matplotlib), and a
``draw_*`` function, which draws that data to a ``.png`` or ``.svg`` file,
refusing other suffixes and, unless ``force=True``, an existing file:

=====================  =========================  ===========================================
data                   drawing                    what it shows
=====================  =========================  ===========================================
:func:`time_plot`      :func:`draw_time_plot`     time against size, log–log, every crossover
:func:`region_map`     :func:`draw_region_map`    the cheapest algorithm over (p, n)
:func:`time_breakdown` :func:`draw_breakdown`     α, β and γ shares, stacked bars
:func:`consensus_plot` :func:`draw_consensus_plot` disagreement by round, with ρ^r·d₀
:func:`pipeline_plot`  :func:`draw_pipeline_plot` Gantt charts of pipeline schedules
:func:`calibration_plot` :func:`draw_calibration_plot` a log against its fitted model
:func:`nccl_plot`      :func:`draw_nccl_plot`     NCCL's model: every entry, its choice
:func:`step_chart`     :func:`draw_step_chart`    a training step's compute and communication
:func:`~costmodel.step.sweep_step` :func:`draw_step_sweep` step time and MFU against one knob
:func:`~costmodel.step.planner.plan` :func:`draw_plan_frontier` step time against memory per GPU, the front
:func:`~costmodel.training.synchrony.simulate_sync` :func:`draw_staleness_plot` staleness histogram per rule
:func:`~costmodel.training.synchrony.ssp_sweep` :func:`draw_ssp_sweep` updates/s against SSP's bound s
=====================  =========================  ===========================================

Every data result has ``to_dict()`` (JSON-native, SI units) and ``title``.
matplotlib is imported only by the drawing functions; without it they raise
:class:`~costmodel.errors.MissingDependency` naming the ``plot`` extra.

>>> from costmodel.params import LinkParams
>>> from costmodel.params import combine_link
>>> link = combine_link(alpha="5us", beta="0.08ns/B")
>>> time_plot("allreduce", ["rd", "rab"], p=16, link=link).crossovers[0].label
'rd × rab: 117.6 kB'
"""

from __future__ import annotations

from costmodel.plots._figure import SUFFIXES, check_output
from costmodel.plots.breakdown import Breakdown, BreakdownBar, draw_breakdown, time_breakdown
from costmodel.plots.calibration import calibration_plot, calibration_title, draw_calibration_plot
from costmodel.plots.consensus import ConsensusCurve, ConsensusPlot, consensus_plot, draw_consensus_plot
from costmodel.plots.nccl import NcclPlot, NcclSeries, NcclSwitch, draw_nccl_plot, nccl_plot
from costmodel.plots.pipeline import GanttBar, PipelinePanel, PipelinePlot, draw_pipeline_plot, pipeline_plot
from costmodel.plots.plan import draw_plan_frontier
from costmodel.plots.regions import RegionMap, draw_region_map, region_map
from costmodel.plots.sizes import CrossoverMark, Series, TimePlot, draw_time_plot, time_plot
from costmodel.plots.step import StepBar, StepChart, draw_step_chart, draw_step_sweep, step_chart
from costmodel.plots.synchrony import draw_ssp_sweep, draw_staleness_plot

__all__ = [
    "SUFFIXES",
    "Breakdown",
    "BreakdownBar",
    "ConsensusCurve",
    "ConsensusPlot",
    "CrossoverMark",
    "GanttBar",
    "NcclPlot",
    "NcclSeries",
    "NcclSwitch",
    "PipelinePanel",
    "PipelinePlot",
    "RegionMap",
    "Series",
    "StepBar",
    "StepChart",
    "TimePlot",
    "calibration_plot",
    "calibration_title",
    "check_output",
    "consensus_plot",
    "draw_breakdown",
    "draw_calibration_plot",
    "draw_consensus_plot",
    "draw_nccl_plot",
    "draw_pipeline_plot",
    "draw_plan_frontier",
    "draw_region_map",
    "draw_ssp_sweep",
    "draw_staleness_plot",
    "draw_step_chart",
    "draw_step_sweep",
    "draw_time_plot",
    "nccl_plot",
    "pipeline_plot",
    "region_map",
    "step_chart",
    "time_breakdown",
    "time_plot",
]
