"""Problem sheets: the variants of one seed as Markdown, with an answer key and worked solutions."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from costmodel.exercises.bank import Bank
from costmodel.exercises.model import Exercise, Variant

__all__ = ["Sheet", "problem_sheet"]


@dataclass(frozen=True)
class Sheet:
    """A problem sheet and its answer key, both Markdown."""

    seed: int | None
    variants: tuple[Variant, ...]
    title: str | None = None  # a heading of its own (an assignment's sheets never show their seed)

    @property
    def problems(self) -> str:
        title = f"# Problem sheet (seed {self.seed})" if self.seed is not None else "# Problem sheet"
        title = f"# {self.title}" if self.title else title
        parts = [title, ""]
        for i, v in enumerate(self.variants, 1):
            parts += [f"## {i}. {v.exercise.title}", "", v.statement, ""]
            for spec in v.exercise.answers:
                unit = f" in {spec.unit}" if spec.unit else ""
                label = v.worked.answers[spec.name].label
                parts.append(f"- {label[:1].upper()}{label[1:]}{unit}: ______")
            parts += ["", f"<sub>exercise `{v.exercise.id}`</sub>", ""]
        return "\n".join(parts)

    @property
    def key(self) -> str:
        title = f"# Answer key (seed {self.seed})" if self.seed is not None else "# Answer key"
        title = f"# Answer key: {self.title}" if self.title else title
        parts = [title, ""]
        for i, v in enumerate(self.variants, 1):
            parts += [f"## {i}. {v.exercise.title}", ""]
            for spec in v.exercise.answers:
                answer = v.worked.answers[spec.name]
                parts.append(f"- **{answer.label}**: {spec.shown(answer.value, answer.kind)} "
                             f"({spec.tolerance_for(answer.kind).describe()})")
            parts += ["", "### Worked solution", "", v.worked.to_markdown(heading="####"), ""]
        return "\n".join(parts)


def problem_sheet(bank: Bank, *, seed: int | None, ids: Iterable[str] | None = None,
                  topic: str | None = None) -> Sheet:
    """The variants of *seed* of the exercises named (all of them, or those of one topic)."""
    chosen: list[Exercise] = [bank.get(i) for i in ids] if ids else list(bank)
    if topic is not None:
        if topic not in bank.topics():
            from costmodel.errors import UnknownNameError

            raise UnknownNameError("topic", topic, bank.topics())
        chosen = [e for e in chosen if e.topic == topic]
    return Sheet(seed, tuple(e.variant(seed) for e in chosen))
