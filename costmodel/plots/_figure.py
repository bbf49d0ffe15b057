"""What every plot shares: the output file's checks, matplotlib loaded lazily, the house style, saving.

Nothing here computes a model; the plot modules build their data first and
call :func:`pyplot` only to draw.  matplotlib is imported inside the functions
that need it (never by ``import costmodel`` or ``import costmodel.plots``).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from costmodel._files import cannot_write, check_writable
from costmodel.collectives._record import Algorithm
from costmodel.errors import InputError, MissingDependency
from costmodel.units import format_size

__all__ = [
    "DPI",
    "HATCHES",
    "LINESTYLES",
    "MARKERS",
    "SUFFIXES",
    "check_output",
    "check_size_range",
    "figure_style",
    "link_caption",
    "pyplot",
    "save",
    "short_name",
    "size_grid",
    "size_label",
]

SUFFIXES = (".png", ".svg")
DPI = 150
"""Pixels per inch of the PNGs: a figure of 8 × 5 inches is 1200 × 750 pixels."""

MARKERS = ("o", "s", "^", "D", "v", "P", "X", "*", "<", ">")
LINESTYLES = ("-", "--", "-.", ":", (0, (5, 1, 1, 1, 1, 1)), (0, (1, 1)), (0, (8, 2)), (0, (3, 1, 1, 1)))
HATCHES = ("", "//", "..", "xx", "\\\\", "oo", "--", "++", "**", "||")

_MISSING = "plots need matplotlib: pip install 'costmodel-collectives[plot]'"

# Print-readable (≥ 9 pt everywhere) and colour-blind safe (tab10, with markers, line styles and
# hatches so that every series also reads in grey); SVG text stays text, so it can be searched and edited.
_STYLE: dict[str, Any] = {
    "font.size": 10,
    "axes.titlesize": 11,
    "axes.labelsize": 10,
    "xtick.labelsize": 9,
    "ytick.labelsize": 9,
    "legend.fontsize": 9,
    "legend.title_fontsize": 9,
    "figure.titlesize": 12,
    "axes.grid": False,
    "svg.fonttype": "none",
    "hatch.linewidth": 0.6,
    "savefig.dpi": DPI,
}


def check_output(path: str | Path, *, force: bool = False) -> Path:
    """*path* as a :class:`~pathlib.Path`, checked before any work: a .png or .svg not yet there.

    Raises
    ------
    InputError
        When the suffix is neither ``.png`` nor ``.svg``, when the file exists and
        *force* is false, or when its folder does not exist.

    Examples
    --------
    >>> check_output("regions.gif")
    Traceback (most recent call last):
        ...
    costmodel.errors.InputError: 'regions.gif' is neither .png nor .svg; name the plot file e.g. plot.png
    """
    target = Path(path)
    if str(path).strip() in ("", "."):  # typer's Path of an empty --out is "."
        raise InputError("the plot's file name is empty; name the plot file e.g. plot.png")
    if target.suffix.lower() not in SUFFIXES:
        raise InputError(f"{str(path)!r} is neither .png nor .svg; name the plot file e.g. plot.png")
    return check_writable(target, force=force)


def pyplot() -> Any:
    """``matplotlib.pyplot`` on the Agg backend, or :class:`MissingDependency` saying how to install it."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        raise MissingDependency(_MISSING) from None
    return plt


@contextmanager
def figure_style() -> Iterator[Any]:
    """``matplotlib.pyplot`` with the house style in force (restored on exit)."""
    plt = pyplot()
    import matplotlib as mpl
    from cycler import cycler

    palette: Any = mpl.colormaps["tab10"]  # a ListedColormap: its colours are a list
    style: Any = dict(_STYLE, **{"axes.prop_cycle": cycler(color=palette.colors)})
    with mpl.rc_context(style):
        yield plt


def save(fig: Any, path: Path, title: str) -> Path:
    """Write *fig* to *path* (PNG or SVG by suffix) with *title* in the file's metadata, then close it."""
    try:
        fig.savefig(path, dpi=DPI, metadata={"Title": title})
    except OSError as error:
        raise cannot_write(path, error) from None
    finally:
        import matplotlib.pyplot as plt

        plt.close(fig)
    return path


def short_name(algo: Algorithm) -> str:
    """A short label for *algo*: its shortest alias when the name is long (``rd``, ``rab``, ``dbt``).

    >>> from costmodel.collectives._registry import resolve
    >>> short_name(resolve("allreduce", "recursive-doubling")), short_name(resolve("allreduce", "ring"))
    ('rd', 'ring')
    """
    if len(algo.name) <= 8:
        return algo.name
    # an initialism (rd, dbt) or a shorter form of the same name (scatter-rd), not another name
    first = algo.name.split("-")[0]
    fits = [a for a in algo.aliases if len(a) <= 5 or a.split("-")[0] == first]
    shortest = min(fits, key=len, default=algo.name)
    return shortest if len(shortest) < len(algo.name) else algo.name


def size_label(n_bytes: Any) -> str:
    """A size for a label: the shorter of its decimal and binary forms (decimal on a tie).

    >>> size_label(2000000 / 17), size_label(2**20), size_label(0)
    ('117.6 kB', '1 MiB', '0 B')
    """
    forms = format_size(n_bytes).split(" = ")
    return min(forms, key=len)


def link_caption(link: Any) -> str:
    """α, β (and the bandwidth) and γ when it is not 0, for a subtitle.

    >>> from costmodel.params import LinkParams
    >>> from costmodel.params import combine_link
    >>> link_caption(combine_link(alpha="5us", beta="0.08ns/B"))
    'α = 5 µs, β = 0.08 ns/B (12.5 GB/s)'
    """
    from costmodel.params import PiecewiseLink
    from costmodel.units import format_inverse_rate, format_rate, format_time

    if isinstance(link, PiecewiseLink):
        return "\n".join(f"from {format_size(s.from_bytes).split(' = ')[0]}: " + link_caption(s.link)
                         if k else link_caption(s.link) for k, s in enumerate(link.segments))
    rate = link.bandwidth_bytes_per_s
    bandwidth = "" if rate is None else f" ({format_rate(rate).split(' (')[0]})"
    text = f"α = {format_time(link.alpha_s)}, β = {format_inverse_rate(link.beta_s_per_byte)}{bandwidth}"
    if link.gamma_s_per_byte:
        text += f", γ = {format_inverse_rate(link.gamma_s_per_byte)}"
    return text


def size_grid(min_bytes: Any, max_bytes: Any, *, per_octave: int) -> tuple[float, ...]:
    """Sizes from *min_bytes* to *max_bytes*: both ends and every 2^(k/per_octave) between.

    Powers of two are on the grid (exactly, as floats), so 8 KiB and 64 MiB are grid points.

    >>> size_grid(1000, 8192, per_octave=1)
    (1000.0, 1024.0, 2048.0, 4096.0, 8192.0)
    """
    import math

    lo, hi = float(min_bytes), float(max_bytes)
    check_size_range(min_bytes, max_bytes)
    first = math.ceil(math.log2(lo) * per_octave - 1e-9)
    last = math.floor(math.log2(hi) * per_octave + 1e-9)
    inner = [2.0 ** (k / per_octave) for k in range(first, last + 1)]
    return tuple(sorted({lo, hi, *(x for x in inner if lo <= x <= hi)}))


def check_size_range(min_bytes: Any, max_bytes: Any) -> None:
    """A log-axis size range: 0 < min < max.

    >>> check_size_range(0, 1024)
    Traceback (most recent call last):
        ...
    costmodel.errors.InputError: min_bytes=0 B is not positive; a log axis starts above 0 (e.g. min_bytes=1B)
    """
    if min_bytes <= 0:
        raise InputError(f"min_bytes={size_label(min_bytes)} is not positive; a log axis starts "
                         "above 0 (e.g. min_bytes=1B)")
    if max_bytes <= min_bytes:
        raise InputError(f"max_bytes={size_label(max_bytes)} is not above min_bytes={size_label(min_bytes)}; "
                         "give a wider size range")
