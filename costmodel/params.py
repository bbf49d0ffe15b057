"""Link parameters (α, β, γ) and where they come from: options, profiles, files.

References
----------
.. [1] R. Thakur, R. Rabenseifner, W. Gropp, "Optimization of Collective
   Communication Operations in MPICH", IJHPCA 19(1), 2005: the α + nβ + nγ model.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from costmodel.errors import InputError
from costmodel.units import parse_inverse_rate, parse_rate, parse_time

__all__ = ["LinkParams"]



@dataclass(frozen=True, slots=True, kw_only=True)
class LinkParams:
    """The α–β–γ parameters of one link, in seconds and seconds per byte.

    Parameters
    ----------
    alpha_s : Fraction
        Start-up latency of one message, seconds.
    beta_s_per_byte : Fraction
        Transfer time per byte, the inverse of the usable bandwidth.
    gamma_s_per_byte : Fraction
        Local reduction time per byte (0 when not modelled).
    source : str
        Where the values came from (a profile name, a file, ``"options"``).

    Examples
    --------
    >>> link = LinkParams.from_options(alpha="5us", bandwidth="12.5 GB/s")
    >>> link.beta_s_per_byte
    Fraction(1, 12500000000)
    """

    alpha_s: Fraction
    beta_s_per_byte: Fraction
    gamma_s_per_byte: Fraction = Fraction(0)
    source: str = "options"

    def __post_init__(self) -> None:
        for field_name in ("alpha_s", "beta_s_per_byte", "gamma_s_per_byte"):
            value = getattr(self, field_name)
            if isinstance(value, bool) or not isinstance(value, (int, Fraction)):
                raise InputError(f"{value!r} is not an exact number; {field_name} takes a Fraction")
            if value < 0:
                raise InputError(f"{field_name}={value} is negative; it must be >= 0")
            object.__setattr__(self, field_name, Fraction(value))

    @property
    def bandwidth_bytes_per_s(self) -> Fraction | None:
        """1/β, or ``None`` when β is 0 (infinite bandwidth)."""
        return None if self.beta_s_per_byte == 0 else 1 / self.beta_s_per_byte

    @classmethod
    def from_options(
        cls,
        *,
        alpha: Any = None,
        beta: Any = None,
        bandwidth: Any = None,
        gamma: Any = None,
        profile: Any = None,
    ) -> LinkParams:
        """Combine command-line style options; explicit values override the profile's.

        Strings are parsed with the units parser (``"5us"``, ``"0.08ns/B"``,
        ``"100 Gb/s"``); numbers are in SI base units.  Exactly one of *beta*
        and *bandwidth* may be given.  This is the one rule for a link every
        command prices time with: α and β (or the bandwidth) are both needed,
        from the options or a profile; α = 0 must be said, never assumed.
        *profile* is a preset name, a TOML path or a
        :class:`~costmodel.profiles.Profile`.

        Raises
        ------
        InputError
            When both *beta* and *bandwidth* are given, or α or β is missing.
        """
        if beta is not None and bandwidth is not None:
            raise InputError("both a beta and a bandwidth were given; pass only one of --beta or --bandwidth")
        base = None
        if profile is not None:
            from costmodel.profiles import Profile, load_profile

            base = profile.link if isinstance(profile, Profile) else load_profile(profile).link
        if bandwidth is not None:
            beta = 1 / parse_rate(bandwidth)
        alpha_s = _given_or_base(alpha, parse_time, base.alpha_s if base else None,
                                 missing="no latency given; pass --alpha TIME (e.g. 5us, or 0 to leave "
                                         "start-ups out) or --profile NAME")
        beta_s = _given_or_base(beta, parse_inverse_rate, base.beta_s_per_byte if base else None, missing=(
            "no bandwidth given; pass --beta TIME/B (e.g. 0.08ns/B), --bandwidth RATE (e.g. 12.5GB/s) "
            "or --profile NAME"))
        gamma_s = _given_or_base(gamma, parse_inverse_rate, base.gamma_s_per_byte if base else Fraction(0))
        explicit = any(v is not None for v in (alpha, beta, gamma))
        source = "options" if base is None else base.source + (" with options" if explicit else "")
        return cls(alpha_s=alpha_s, beta_s_per_byte=beta_s, gamma_s_per_byte=gamma_s, source=source)

    def result_fields(self) -> dict[str, object]:
        """The link as every result's JSON carries it: α, β, γ in SI units and where they came from."""
        from costmodel._json import real

        return {
            "alpha_s": real(self.alpha_s),
            "beta_s_per_byte": real(self.beta_s_per_byte),
            "gamma_s_per_byte": real(self.gamma_s_per_byte),
            "link_source": self.source,
        }

    def to_dict(self) -> dict[str, object]:
        from costmodel._json import real

        bandwidth = self.bandwidth_bytes_per_s
        return {
            "alpha_s": real(self.alpha_s),
            "beta_s_per_byte": real(self.beta_s_per_byte),
            "gamma_s_per_byte": real(self.gamma_s_per_byte),
            "bandwidth_bytes_per_s": None if bandwidth is None else real(bandwidth),
            "source": self.source,
        }


def _given_or_base(value: Any, parse: Any, base: Fraction | None, *, missing: str = "") -> Fraction:
    """*value* parsed if given, else the profile's *base* value, else an error saying what is missing."""
    if value is not None:
        return parse(value)
    if base is not None:
        return base
    raise InputError(missing)
