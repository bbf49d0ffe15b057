"""One knob of a training step varied over a list of values, everything else fixed.

:func:`sweep_step` calls :func:`~costmodel.step.model.step` once per value of the knob and keeps,
per point, the step time, its breakdown, tokens/s, MFU and scaling efficiency; the best point
does the most work per GPU-second (:func:`throughput`; the first of equals), which is the
fastest step when the knob changes neither the work of a step nor the GPUs (bucket size, links,
ZeRO stage).  A value the step refuses with these other arguments
(pp not dividing the layers, tp not dividing the heads) is skipped with its one-line reason;
only a sweep with no point left is an error.

The knobs are one table, :data:`KNOBS`, derived from the settings of
:class:`~costmodel.step.config.StepConfig` that declare a sweep kind: a knob's name, the :func:`step`
argument it sets and how a value is read.  Values are a list, or text in a small grammar
(:func:`parse_values`):

* ``1,2,4,8``: the values listed;
* ``A..BxF``: A, A·F, A·F², … up to B (F > 1): ``dp=1..64x2`` is 1, 2, 4, …, 64;
* ``A..B+S``: A, A + S, A + 2S, … up to B (S > 0): ``microbatches=4..32+4``; ``A..B`` steps by 1.

Ranges are for the numeric knobs (counts, sizes, efficiency); items and ranges mix:
``bucket-size=1MiB,4MiB..64MiBx4``.  The text is split and each piece read by the knob's parser;
nothing is evaluated.

The dp = 1 step that a point with dp > 1 divides by for its scaling efficiency does not depend
on dp, the bucket size or the data-parallel link; a sweep of one of those prices it once (and passes
its time to :func:`~costmodel.step.model.price_step`), with results equal to pricing it per point.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from costmodel._json import JSONFields, to_json_dict
from costmodel.errors import InputError, UnknownNameError
from costmodel.exact import parse_number
from costmodel.step.config import Setting, StepConfig, settings
from costmodel.step.model import MAX_LAYER_OPERATIONS, StepResult, layer_operations, price_step

__all__ = ["KNOBS", "MAX_POINTS", "MAX_SWEEP_OPERATIONS", "Knob", "StepSweep", "SweepPoint", "format_value",
           "parse_values", "sweep_step", "throughput", "work"]

_REASONS_SHOWN = 3
"""The values whose reasons an error names when no value of a sweep gives a step."""

MAX_POINTS = 1000
"""The most values one sweep takes (a range that would give more is refused)."""


@dataclass(frozen=True, slots=True)
class Knob:
    """A knob of the step: its *name*, the :func:`step` argument it sets and how a value is read.

    *parse* reads one value (text or a Python value) into what the sweep records; *argument* turns
    that into the :func:`step` argument (a profile name into its link, a GPU's name into the GPU).
    *kind* is ``count``, ``size``, ``number`` or ``name`` (the last three: how results show it;
    counts, sizes and numbers take ranges).  *keeps_baseline*: the dp = 1 step is the same for every
    value.  *shape_only*: it matters only for a transformer shape (``shape=``).  Each knob is a setting
    of :class:`~costmodel.step.config.StepConfig` with a sweep kind.
    """

    name: str
    parameter: str
    parse: Callable[[Any, str], Any]
    kind: str
    argument: Callable[[Any], Any] | None = None
    keeps_baseline: bool = False
    shape_only: bool = False


def _knob(parameter: str, setting: Setting) -> Knob:
    name = setting.knob_name(parameter)
    assert name is not None and setting.sweep is not None
    read = setting.read
    if setting.sweep != "name":
        return Knob(name, parameter, read, setting.sweep, keeps_baseline=setting.keeps_baseline,
                    shape_only=setting.shape_only)

    def parse(value: Any, label: str) -> Any:
        shown = value.strip() if isinstance(value, str) else value
        read_value = read(shown, label)
        return read_value if isinstance(read_value, (str, int)) else shown

    def argument(value: Any) -> Any:
        return read(value, parameter)

    return Knob(name, parameter, parse, "name", argument=argument, keeps_baseline=setting.keeps_baseline,
                shape_only=setting.shape_only)


KNOBS: Mapping[str, Knob] = {k.name: k for k in (_knob(p, st) for p, _, st in settings() if st.sweep)}
"""Every knob :func:`sweep_step` varies, by name: the settings of
:class:`~costmodel.step.config.StepConfig` that declare a sweep kind."""


def knob(name: str) -> Knob:
    """The knob called *name* (``_`` read as ``-``), or an error listing the knobs."""
    key = str(name).strip().lower().replace("_", "-")
    if key not in KNOBS:
        raise UnknownNameError("knob", str(name), tuple(KNOBS))
    return KNOBS[key]


def _range(item: str, k: Knob) -> list[Any]:
    """The values of ``A..BxF`` or ``A..B+S`` (``A..B``: step 1), read by the knob's parser."""
    low_text, _, rest = item.partition("..")
    where = f"{k.name}={item!r}"
    if ".." in rest:
        raise InputError(f"{where} has two '..'; a range is A..B, A..BxF or A..B+S")
    op = "x" if "x" in rest else "+" if "+" in rest else None
    high_text, _, by_text = rest.rpartition(op) if op else (rest, None, None)
    low, high = k.parse(low_text, k.name), k.parse(high_text, k.name)
    if high < low:
        raise InputError(f"{where} runs downwards; write the smaller end first, e.g. {high_text}..{low_text}")
    if op == "x":
        if low <= 0:
            raise InputError(f"{where} multiplies from {low_text!r}; a geometric range starts above 0, "
                             "e.g. 1..8x2 (list 0 apart: 0,1..8x2)")
        factor = _factor(by_text or "", where)
        count = 1
        while low * factor ** count <= high and count <= MAX_POINTS:
            count += 1
        values = [low * factor ** i for i in range(min(count, MAX_POINTS + 1))]
    else:
        by = Fraction(1) if op is None else Fraction(k.parse(by_text, k.name))
        if by <= 0:
            raise InputError(f"{where}: the step {by_text!r} is not positive")
        count = int((high - low) / by) + 1
        values = [low + i * by for i in range(min(count, MAX_POINTS + 1))]
    if k.kind == "count":
        if any(Fraction(v).denominator != 1 for v in values):
            raise InputError(f"{where} gives values that are not whole numbers; use a whole step or factor")
        values = [int(v) for v in values]
    return [k.parse(v, k.name) for v in values]


def _factor(text: str, where: str) -> Fraction:
    try:
        factor = parse_number(text.strip(), what="a range factor")
    except InputError as exc:
        raise InputError(f"{where}: {exc}") from None
    if factor <= 1:
        raise InputError(f"{where}: the factor {text!r} is not above 1; e.g. 1..64x2")
    return factor


def parse_values(name: str, values: str | Sequence[Any]) -> tuple[Any, ...]:
    """The values of knob *name*: a list (each read by the knob's parser) or text (see the module notes).

    >>> parse_values("dp", "1..64x2")
    (1, 2, 4, 8, 16, 32, 64)
    >>> parse_values("microbatches", "4..16+4,32")
    (4, 8, 12, 16, 32)
    >>> parse_values("schedule", "gpipe,zb")
    ('gpipe', 'zb-h1')
    """
    k = knob(name)
    if isinstance(values, str):
        items = [v.strip() for v in values.split(",")]
        if not values.strip() or not all(items):
            raise InputError(f"{k.name}={values!r} has an empty value; separate values by single commas, "
                             f"e.g. {_EXAMPLES[k.kind]}")
        out: list[Any] = []
        for item in items:
            if ".." in item:
                if k.kind == "name":
                    raise InputError(f"{k.name}={item!r}: a range needs a numeric knob; list the names")
                out.extend(_range(item, k))
            else:
                out.append(k.parse(item, k.name))
            if len(out) > MAX_POINTS:
                raise InputError(f"{k.name}={values!r} gives more than {MAX_POINTS} values; sweep fewer")
    else:
        if not isinstance(values, Sequence) or not values:
            raise InputError(f"values={values!r} is not a non-empty list of {k.name} values")
        out = [k.parse(v, k.name) for v in values]
    if len(out) > MAX_POINTS:
        raise InputError(f"{len(out)} values of {k.name}; a sweep takes at most {MAX_POINTS}")
    return tuple(out)


_EXAMPLES = {"count": "1,2,4", "size": "1MiB,25MiB", "number": "0.4,0.5", "name": "ib-hdr,roce"}


@dataclass(frozen=True, slots=True, kw_only=True)
class SweepPoint(JSONFields):
    """One value of the knob and its step, or the reason it was *skipped* (then every time is None).

    The times are :class:`~costmodel.step.StepResult`'s parts; :attr:`data_parallel_s` is all the
    data-parallel traffic adds to the pipeline (exposed, slowdown, ZeRO's parameter all-gather, the
    experts' gradient reduction), :attr:`model_parallel_s` the model-parallel communication on the
    busiest device (tensor-, context- and expert-parallel collectives) and the exposed pipeline sends.

    *result* is the whole :class:`~costmodel.step.StepResult` (left out of ``to_dict``: the sweep's
    JSON keeps the numbers, ``costmodel step --json`` a point's timeline).
    """

    value: Any
    skipped: str | None = None
    step_s: Fraction | None = None
    compute_s: Fraction | None = None
    tp_comm_s: Fraction | None = None
    cp_comm_s: Fraction | None = None
    bubble_s: Fraction | None = None
    pp_exposed_s: Fraction | None = None
    dp_exposed_s: Fraction | None = None
    contention_s: Fraction | None = None
    optimizer_s: Fraction | None = None
    param_gather_s: Fraction | None = None
    dp_comm_s: Fraction | None = None
    ep_comm_s: Fraction | None = None
    expert_dp_s: Fraction | None = None
    gpus: int | None = None
    tokens_per_s: Fraction | None = None
    mfu: Fraction | None = None
    scaling_efficiency: Fraction | None = None
    result: StepResult | None = None

    @property
    def data_parallel_s(self) -> Fraction | None:
        if self.dp_exposed_s is None or self.contention_s is None or self.param_gather_s is None:
            return None
        return self.dp_exposed_s + self.contention_s + self.param_gather_s + (self.expert_dp_s or 0)

    @property
    def model_parallel_s(self) -> Fraction | None:
        parts = (self.tp_comm_s, self.cp_comm_s, self.ep_comm_s, self.pp_exposed_s)
        known = [x for x in parts if x is not None]
        return None if len(known) < len(parts) else sum(known, Fraction(0))

    def to_dict(self) -> dict[str, Any]:
        return to_json_dict(self, skip=("result",))


_NUMBERS = ("step_s", "compute_s", "tp_comm_s", "cp_comm_s", "bubble_s", "pp_exposed_s", "dp_exposed_s",
            "contention_s", "optimizer_s", "param_gather_s", "dp_comm_s", "ep_comm_s", "expert_dp_s", "gpus",
            "tokens_per_s", "mfu", "scaling_efficiency")


def _point(value: Any, r: StepResult) -> SweepPoint:
    return SweepPoint(value=value, result=r, **{n: getattr(r, n) for n in _NUMBERS})


@dataclass(frozen=True, slots=True, kw_only=True)
class StepSweep(JSONFields):
    """The points of a sweep of one *knob* (the :func:`step` argument *parameter*), and the best.

    *best* indexes :attr:`points`: the most work per GPU-second (:func:`throughput`), the first of
    equals.  *kind* says how a value reads: ``count``, ``size`` (bytes), ``number`` or ``name``.
    """

    knob: str
    parameter: str
    kind: str
    points: tuple[SweepPoint, ...]
    best: int
    notes: tuple[str, ...] = ()

    @property
    def best_point(self) -> SweepPoint:
        return self.points[self.best]

    def to_frame(self) -> Any:
        """A ``pandas.DataFrame``, one row per point in sweep order: the knob's value (a column named for
        the knob), ``skipped`` (the reason, or None) and the step's parts in seconds (``step_s``,
        ``compute_s``, ...), ``gpus``, ``tokens_per_s``, ``mfu``, ``scaling_efficiency`` and ``best`` (True
        on the best point); ``df.attrs`` hold the knob, its parameter and kind."""
        from costmodel._frames import frame

        rows = [{**p.to_dict(), self.knob: p.to_dict()["value"], "best": i == self.best}
                for i, p in enumerate(self.points)]
        return frame(rows, (self.knob, "skipped", *_NUMBERS, "best"),
                     attrs={"knob": self.knob, "parameter": self.parameter, "kind": self.kind})

    @property
    def skipped(self) -> tuple[SweepPoint, ...]:
        return tuple(p for p in self.points if p.skipped is not None)

    @property
    def by_tokens(self) -> bool:
        """Whether the work is counted in tokens (every priced point knows them), else micro-batches."""
        return _by_tokens(self.points)

    @property
    def same_work(self) -> bool:
        """Whether every priced point does the same work on the same GPUs: the best is then the fastest."""
        by_tokens = self.by_tokens
        return len({(work(p, by_tokens=by_tokens), p.gpus) for p in self.points if p.skipped is None}) == 1

    @property
    def title(self) -> str:
        return f"Training step against {self.knob}: {len(self.points)} values"


MAX_SWEEP_OPERATIONS = 4 * MAX_LAYER_OPERATIONS
"""The layer operations (F, B, W per micro-batch and layer) a sweep simulates over all its values at most:
four of the largest steps :func:`~costmodel.step.model.price_step` simulates, seconds in all."""


def _check_work(configs: Sequence[StepConfig | InputError]) -> None:
    """Refuse a sweep whose steps would simulate more than :data:`MAX_SWEEP_OPERATIONS` layer operations
    together (a step above the one-step limit is skipped by its own refusal, and counts nothing)."""
    total = 0
    for c in configs:
        if isinstance(c, StepConfig) and (events := layer_operations(c)) <= MAX_LAYER_OPERATIONS:
            total += events
    if total > MAX_SWEEP_OPERATIONS:
        raise InputError(f"the sweep's {len(configs)} steps simulate {total} layer operations (F, B, W per "
                         f"micro-batch and layer) together, more than {MAX_SWEEP_OPERATIONS}; sweep fewer "
                         "values, or values of fewer micro-batches")


def sweep_step(name: str, values: str | Sequence[Any], *, gpus: int | None = None,
               global_batch: int | None = None, **fixed: Any) -> StepSweep:
    """:func:`~costmodel.step.model.step` at each value of knob *name*, the other arguments *fixed*.

    Parameters
    ----------
    name : str
        A knob of :data:`KNOBS`: ``bucket-size``, ``dp``, ``tp``, ``pp``, ``microbatches``,
        ``micro-batch``, ``schedule``, ``chunks``, ``efficiency``, ``profile`` (the link),
        ``dp-link``, ``tp-link``, ``pp-link`` (profile names or ``ALPHA:RATE``), ``zero`` (0–3 or
        fsdp), ``prefetch``, ``param-gather``, ``pipeline-sends``, ``tp-overlap`` and ``slowdown``.
    values : str or sequence
        The values: ``"1,2,4"``, ``"1..64x2"``, ``"4..32+4"`` (see the module notes), or a list.
    gpus, global_batch : int, optional
        The machine and the batch held while a parallel size or the micro-batch is swept: each value
        derives dp = gpus / (tp·pp·cp) and microbatches = global_batch / (micro_batch·dp), and a value
        they do not divide is skipped with the reason (Megatron-LM's derivation,
        :mod:`costmodel.describe.batch`).
    **fixed
        Every other argument of :func:`step`; the knob's own argument must not be among them.

    Raises
    ------
    InputError
        An unknown knob, a value its parser refuses, the knob's argument also fixed, or no value
        that the step accepts (the reasons of each listed).

    Examples
    --------
    >>> from costmodel.params import combine_link
    >>> s = sweep_step("pp", "1,3,2", forward_s=["1ms"] * 4, backward_s=["2ms"] * 4, microbatches=4,
    ...                activation_bytes="1MB", link=combine_link(alpha="5us", bandwidth="25GB/s"))
    >>> [(p.value, p.skipped is None) for p in s.points], s.best_point.value
    ([(1, True), (3, False), (2, True)], 1)
    >>> s.points[2].step_s < s.points[0].step_s  # pp = 2 is faster, on twice the GPUs, with a bubble
    True
    """
    k = knob(name)
    if k.parameter in fixed:
        raise InputError(f"{k.parameter}= is swept by knob {k.name}; leave it out of the fixed arguments")
    if k.shape_only and fixed.get("shape") is None:
        raise InputError(f"knob {k.name} applies to a transformer shape (shape=); with per-layer times "
                         "it changes nothing")
    parsed = parse_values(k.name, values)
    base = StepConfig.of(**fixed)
    configs: list[StepConfig | InputError] = []
    for value in parsed:
        try:
            config = base.replace(**{k.parameter: value if k.argument is None else k.argument(value)})
            configs.append(config if gpus is None and global_batch is None else
                           _held(config, gpus=gpus, global_batch=global_batch))
        except InputError as exc:
            configs.append(exc)
    _check_work(configs)
    baseline = None
    points: list[SweepPoint] = []
    for value, held in zip(parsed, configs, strict=True):
        try:
            if isinstance(held, InputError):
                raise held
            r = price_step(held, baseline_s=baseline)
        except InputError as exc:
            points.append(SweepPoint(value=value, skipped=str(exc)))
            continue
        points.append(_point(value, r))
        if k.keeps_baseline and baseline is None:
            baseline = r.scaling_efficiency * r.step_s  # the dp = 1 step: efficiency = it / this step
    priced = [i for i, p in enumerate(points) if p.skipped is None]
    if not priced:
        reasons = list(dict.fromkeys(str(p.skipped) for p in points))
        if len(reasons) > 1:
            reasons = [f"{k.name}={format_value(p.value, k.kind)}: {p.skipped}" for p in points]
        more = len(reasons) - _REASONS_SHOWN
        if more > 1:  # one line a reader can take in: the first values' reasons, and how many are left
            reasons = [*reasons[:_REASONS_SHOWN], f"and {more} more values refused"]
        raise InputError(f"no value of {k.name} gives a step: {'; '.join(reasons)}")
    by_tokens = _by_tokens(points)
    best = max(priced, key=lambda i: (throughput(points[i], by_tokens=by_tokens), -i))
    return StepSweep(knob=k.name, parameter=k.parameter, kind=k.kind, points=tuple(points), best=best,
                     notes=_skipped(k, points))


def _held(config: StepConfig, *, gpus: int | None, global_batch: int | None) -> StepConfig:
    """*config* with dp from the *gpus* and the micro-batches from the *global_batch* held."""
    from costmodel.describe.batch import data_parallel_for, microbatches_for

    if gpus is not None:
        config = config.replace(dp=data_parallel_for(gpus, tp=config.tp, pp=config.pp, cp=config.cp))
    if global_batch is not None:
        config = config.replace(microbatches=microbatches_for(global_batch, micro_batch=config.micro_batch,
                                                              dp=config.dp))
    return config


def work(point: SweepPoint, *, by_tokens: bool) -> Fraction:
    """The work of one step of a priced point: its tokens (*by_tokens*), else the micro-batches of all
    its replicas."""
    r = point.result
    assert r is not None and point.step_s is not None
    if by_tokens:
        assert point.tokens_per_s is not None
        return point.tokens_per_s * point.step_s
    return Fraction(r.dp * r.microbatches)


def throughput(point: SweepPoint, *, by_tokens: bool) -> Fraction:
    """The work a point does per GPU-second: tokens/s per GPU (*by_tokens*), else micro-batches.

    MFU orders the points of one model the same way; so does the step time, inverted, when every
    point does the same work on the same GPUs.
    """
    assert point.step_s is not None and point.gpus is not None
    return work(point, by_tokens=by_tokens) / (point.step_s * point.gpus)


def _by_tokens(points: Sequence[SweepPoint]) -> bool:
    return all(p.tokens_per_s is not None for p in points if p.skipped is None)


def _skipped(k: Knob, points: list[SweepPoint]) -> tuple[str, ...]:
    """A note per reason a value was skipped (its first clause; the point keeps the whole): the values
    that share it, their own value elided."""
    reasons: dict[str, list[str]] = {}
    for p in points:
        if p.skipped is not None:
            shown = format_value(p.value, k.kind)
            reasons.setdefault(p.skipped.split("; ")[0].replace(f"={shown}", "=…"), []).append(shown)
    return tuple(f"{k.name}={', '.join(shown)} skipped: {reason}" if len(shown) > 1 else
                 f"{k.name}={shown[0]} skipped: {reason.replace('=…', f'={shown[0]}')}"
                 for reason, shown in reasons.items())


def format_value(value: Any, kind: str) -> str:
    """A swept value as tables and axes show it: a size in its shorter form, a number to 4 digits.

    >>> format_value(Fraction(2**20), "size"), format_value(Fraction(1, 3), "number")
    ('1 MiB', '0.3333')
    """
    from costmodel.units import format_number, format_size

    if kind == "size":
        return min(format_size(value).split(" = "), key=len)
    if kind == "number":
        return format_number(value)
    return str(value)
