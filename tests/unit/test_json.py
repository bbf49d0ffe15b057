"""The field-driven serialiser behind every result's ``to_dict``."""

from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path

import pytest

from costmodel._json import JSONFields, to_json, to_json_dict


@dataclass(frozen=True, slots=True, kw_only=True)
class _Inner(JSONFields):
    time_s: Fraction


@dataclass(frozen=True, slots=True, kw_only=True)
class _Outer(JSONFields):
    name: str
    inner: _Inner
    sizes: tuple[Fraction, ...]
    measured_s: float
    path: Path | None
    _private: int = 0

    @property
    def total(self) -> Fraction:
        return sum(self.sizes, Fraction(0))


def _outer(**kw: object) -> _Outer:
    base = {"name": "ring", "inner": _Inner(time_s=Fraction(1, 4)), "sizes": (Fraction(2), Fraction(1, 2)),
            "measured_s": 2.0, "path": Path("a/b.csv")}
    return _Outer(**{**base, **kw})  # type: ignore[arg-type]


def test_fields_in_order_nested_and_private_left_out() -> None:
    assert _outer().to_dict() == {"name": "ring", "inner": {"time_s": 0.25}, "sizes": [2, 0.5],
                                  "measured_s": 2, "path": "a/b.csv"}
    assert list(_outer().to_dict()) == ["name", "inner", "sizes", "measured_s", "path"]


def test_names_properties_rename_skip_and_kept_floats() -> None:
    o = _outer(path=None)
    assert to_json_dict(o, ("total", "name"), rename={"name": "algorithm"}) == {"total": 2.5, "algorithm": "ring"}
    assert to_json_dict(o, skip=("inner", "sizes")) == {"name": "ring", "measured_s": 2, "path": None}
    got = to_json_dict(o, ("measured_s", "sizes"), keep_floats=True)
    assert got == {"measured_s": 2.0, "sizes": [2, 0.5]}
    assert isinstance(got["measured_s"], float)
    assert isinstance(got["sizes"][0], int)


def test_mixin_keeps_slots() -> None:
    assert not hasattr(_outer(), "__dict__")


@pytest.mark.parametrize("value", [float("inf"), float("nan")])
def test_never_inf_or_nan(value: float) -> None:
    with pytest.raises(ValueError, match="not finite"):
        to_json(value)


def test_an_unknown_type_is_refused() -> None:
    with pytest.raises(TypeError, match="cannot write set"):
        to_json({1, 2})
