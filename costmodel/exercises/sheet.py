"""Problem sheets: the variants of one seed, with an answer key and worked solutions, as Markdown or LaTeX.

Every question names the answer to write in the answers file, its unit and the precision
graded (``exact integer``, ``3 significant figures``, ``±1 %``).  The LaTeX form is a
standalone ``article`` that ``pdflatex`` compiles (and ``xelatex``, ``lualatex``, ``tectonic``):
the source is pure ASCII, TeX's special characters are escaped, the symbols of the statements
(Greek letters, ×, ·, ≤, ⌈⌉, µ, subscripts and superscripts) are written as math commands and
accented Latin letters (in students' names) as accent commands.  Its only packages are
:data:`LATEX_PACKAGES`.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass, replace
from fractions import Fraction
from typing import Any

from costmodel.examples.work import Worked, sentence
from costmodel.examples.work import show_value as _show
from costmodel.exercises.bank import Bank
from costmodel.exercises.model import Exercise, Variant

__all__ = ["FORMATS", "LATEX_PACKAGES", "Sheet", "check_format", "key_working", "latex_note", "latex_text",
           "latex_writes", "problem_sheet"]

FORMATS = {"markdown": "md", "latex": "tex"}
"""The formats a sheet is written in, with their file extensions."""

LATEX_PACKAGES = ("fontenc", "geometry", "amsmath")
"""The packages a LaTeX sheet loads: all in every TeX distribution."""


def check_format(format: str) -> str:
    """*format* if it is one of :data:`FORMATS`; else the error names the choices."""
    if format not in FORMATS:
        from costmodel.errors import UnknownNameError

        raise UnknownNameError("format", format, FORMATS)
    return format


@dataclass(frozen=True)
class Sheet:
    """A problem sheet and its answer key (Markdown by default, or ``format="latex"``)."""

    seed: int | None
    variants: tuple[Variant, ...]
    title: str | None = None  # a heading of its own (an assignment's sheets never show their seed)
    format: str = "markdown"

    @property
    def problems(self) -> str:
        title = f"Problem sheet (seed {self.seed})" if self.seed is not None else "Problem sheet"
        title = self.title or title
        if self.format == "latex":
            return _latex_document(title, [_latex_problem(i, v) for i, v in enumerate(self.variants, 1)])
        parts = [f"# {title}", ""]
        for i, v in enumerate(self.variants, 1):
            parts += [f"## {i}. {v.exercise.title}", "", v.statement, ""]
            for spec in v.exercise.answers:
                answer = v.worked.answers[spec.name]
                parts.append(f"- {spec.blank(answer.label, answer.kind, answer.value)}: ______")
            parts += ["", f"<sub>exercise `{v.exercise.id}`</sub>", ""]
        return "\n".join(parts)

    @property
    def key(self) -> str:
        title = f"Answer key (seed {self.seed})" if self.seed is not None else "Answer key"
        title = f"Answer key: {self.title}" if self.title else title
        if self.format == "latex":
            return _latex_document(title, [_latex_key(i, v) for i, v in enumerate(self.variants, 1)])
        parts = [f"# {title}", ""]
        for i, v in enumerate(self.variants, 1):
            parts += [f"## {i}. {v.exercise.title}", ""]
            for spec in v.exercise.answers:
                answer = v.worked.answers[spec.name]
                parts.append(f"- **{answer.label}** (`{spec.name}`): {spec.shown(answer.value, answer.kind)} "
                             f"({spec.precision(answer.kind, answer.value)})")
            parts += ["", "### Worked solution", "", key_working(v).to_markdown(heading="####"), ""]
        return "\n".join(parts)


def problem_sheet(bank: Bank, *, seed: int | None, ids: Iterable[str] | None = None,
                  topic: str | None = None, format: str = "markdown") -> Sheet:
    """The variants of *seed* of the exercises named (all of them, or those of one topic)."""
    check_format(format)
    chosen: list[Exercise] = [bank.get(i) for i in ids] if ids else list(bank)
    if topic is not None:
        if topic not in bank.topics():
            from costmodel.errors import UnknownNameError

            raise UnknownNameError("topic", topic, bank.topics())
        chosen = [e for e in chosen if e.topic == topic]
    return Sheet(seed, tuple(e.variant(seed) for e in chosen), format=format)


def key_working(v: Variant) -> Worked:
    """The worked solution as a key shows it: only the givens the exercise states, only the steps
    that follow from them, and only the answers it asks for.

    A given is *stated* when the statement names it (``{p}``), writes its value, or when the
    answers asked depend on it; a step whose text or value changes with an unstated given (the
    GPU memory or the link's peak of the worked example, which the exercise never gives) is left out.
    """
    worked = v.worked
    statement = v.statement
    placeholders = set(re.findall(r"\{([A-Za-z_][A-Za-z0-9_]*)\}", v.exercise.statement))
    asked = {spec.name for spec in v.exercise.answers}
    hidden: set[str] = set()
    dropped: set[int] = set()
    for given, value in worked.givens:
        if given.name in placeholders or _show(value, given.kind).split(" = ")[0].split(" (")[0] in statement:
            continue
        other = _changed(value)
        if other is None:
            continue
        try:
            moved = v.exercise.worked_example.run(values={**v.values, given.name: other})
        except (ArithmeticError, ValueError):  # InputError is a ValueError
            continue
        if len(moved.steps) != len(worked.steps) or \
                any(moved.answers[a].value != worked.answers[a].value for a in asked):
            continue  # the answers depend on it: the statement implies it
        hidden.add(given.name)
        dropped |= {i for i, (a, b) in enumerate(zip(worked.steps, moved.steps, strict=True)) if a != b}
    return replace(worked, givens=tuple((g, x) for g, x in worked.givens if g.name not in hidden),
                   steps=tuple(s for i, s in enumerate(worked.steps) if i not in dropped),
                   answers={k: a for k, a in worked.answers.items() if k in asked})


def _changed(value: Any) -> Any:
    """Another value of a numeric given (to see what depends on it); None for a word or a list."""
    if isinstance(value, bool) or not isinstance(value, (int, Fraction, float)):
        return None
    size = abs(value) if isinstance(value, float) else abs(Fraction(value))
    return value / 3 if 0 < size < 1 else value * 3 + 1 if value else 1


# -- LaTeX -----------------------------------------------------------------------------------------

_ESCAPES = {"\\": r"\textbackslash{}", "{": r"\{", "}": r"\}", "$": r"\$", "&": r"\&", "#": r"\#",
            "^": r"\textasciicircum{}", "_": r"\_", "%": r"\%", "~": r"\textasciitilde{}",
            "<": r"\textless{}", ">": r"\textgreater{}", "|": r"\textbar{}",
            "[": "{[}", "]": "{]}"}  # a bracket after \\ or \item would be read as an option
_MATH = {"α": r"\alpha", "β": r"\beta", "γ": r"\gamma", "ε": r"\varepsilon", "η": r"\eta", "θ": r"\theta",
         "λ": r"\lambda", "π": r"\pi", "ρ": r"\rho", "τ": r"\tau", "Σ": r"\Sigma", "Ψ": r"\Psi",
         "×": r"\times", "·": r"\cdot", "−": "-", "≤": r"\leq", "≥": r"\geq", "←": r"\leftarrow",
         "→": r"\rightarrow", "√": r"\surd", "‖": r"\|", "⌈": r"\lceil", "⌉": r"\rceil", "ℓ": r"\ell",
         "µ": r"\mu", "²": "^{2}", "⁰": "^{0}", "₀": "_{0}", "₁": "_{1}", "₂": "_{2}", "₃": "_{3}",
         "∞": r"\infty", "≈": r"\approx", "≠": r"\neq", "∑": r"\sum", "Δ": r"\Delta", "δ": r"\delta",
         "σ": r"\sigma", "μ": r"\mu", "ν": r"\nu", "φ": r"\varphi", "ω": r"\omega", "κ": r"\kappa",
         "±": r"\pm", "³": "^{3}", "¹": "^{1}", "⁻": "^{-}", "ₙ": "_{n}", "ₚ": "_{p}", "ᵢ": "_{i}",
         "÷": r"\div", "⋅": r"\cdot", "∈": r"\in", "∼": r"\sim", "⁄": "/"}
_TEXT = {"–": "--", "—": "---", "ä": r"\"a", "ö": r"\"o", "ü": r"\"u", "é": r"\'e", "’": "'", "‘": "`",
         "“": "``", "”": "''", "…": r"\ldots{}", "\u00a0": "~", "ß": r"\ss{}",
         "ø": r"\o{}", "Ø": r"\O{}", "æ": r"\ae{}", "Æ": r"\AE{}", "œ": r"\oe{}", "Œ": r"\OE{}",
         "å": r"\aa{}", "Å": r"\AA{}", "ł": r"\l{}", "Ł": r"\L{}", "ı": r"\i{}", "¿": r"?`", "¡": r"!`",
         "«": r"\guillemotleft{}", "»": r"\guillemotright{}"}
_MACRON = "\u0304"
_ACCENTS = {"\u0300": "`", "\u0301": "'", "\u0302": "^", "\u0303": "~", "\u0308": '"', "\u0304": "=",
            "\u0307": ".", "\u030a": "r", "\u030b": "H", "\u030c": "v", "\u0306": "u", "\u0327": "c",
            "\u0328": "k"}
"""Unicode's combining accents and the TeX accent command of each (é = e + U+0301 is \\'{e})."""


def latex_text(text: str) -> str:
    r"""*text* as LaTeX source: special characters escaped, symbols as math commands.

    >>> print(latex_text("50% of n_1 & α·β ≤ 2 {MB}"))
    50\% of n\_1 \& \ensuremath{\alpha}\ensuremath{\cdot}\ensuremath{\beta} \ensuremath{\leq} 2 \{MB\}
    >>> print(latex_text("x̄ = 1/p, answer `rab-sent`"))
    \ensuremath{\bar{x}} = 1/p, answer \texttt{rab-sent}
    >>> print(latex_text("Zoë Ní Bhriain & {x} [1]"))
    Zo\"{e} N\'{\i{}} Bhriain \& \{x\} {[}1{]}
    """
    text = unicodedata.normalize("NFC", text)  # é written as e + U+0301 is one letter
    out: list[str] = []
    for i, c in enumerate(text):
        if c == _MACRON:
            continue
        if i + 1 < len(text) and text[i + 1] == _MACRON:
            out.append(f"\\ensuremath{{\\bar{{{c}}}}}")
        elif c in _ESCAPES:
            out.append(_ESCAPES[c])
        elif c in _MATH:
            out.append(f"\\ensuremath{{{_MATH[c]}}}")
        elif c in _TEXT:
            out.append(_TEXT[c])
        elif ord(c) < 128:
            out.append(c)
        else:
            out.append(_accented(c))
    return re.sub(r"`([^`]*)`", r"\\texttt{\1}", "".join(out))  # Markdown code spans


def _accented(c: str) -> str:
    """An accented Latin letter as TeX accent commands (ő is \\H{o}); ``?`` for a character with no
    TeX form here (never a byte pdflatex cannot read)."""
    decomposed = unicodedata.normalize("NFD", c)
    base, marks = decomposed[0], decomposed[1:]
    if not base.isascii() or not base.isalpha() or not marks or any(m not in _ACCENTS for m in marks):
        return "?"
    out = {"i": r"\i{}", "j": r"\j{}"}.get(base, base) if marks[0] != "\u0327" else base
    for mark in marks:
        out = f"\\{_ACCENTS[mark]}{{{out}}}"
    return out


def latex_writes(text: str) -> bool:
    """Whether :func:`latex_text` sets every character of *text* (no ``?`` for one it cannot).

    >>> latex_writes("Zoë Ní Bhriain"), latex_writes("吴")
    (True, False)
    """
    return latex_text(text).count("?") == text.count("?")


def latex_note(text: str) -> str:
    """A paragraph added to a LaTeX sheet before its end (Markdown code spans set in type)."""
    return _paragraphs(text)


def _latex_document(title: str, sections: list[str]) -> str:
    return "\n".join([
        r"\documentclass[11pt]{article}",
        r"\usepackage[T1]{fontenc}",  # LATEX_PACKAGES, no others
        r"\usepackage[margin=2.5cm]{geometry}",
        r"\usepackage{amsmath}",
        r"\setlength{\parindent}{0pt}",
        r"\setlength{\parskip}{0.6em}",
        f"\\title{{{latex_text(title)}}}",
        r"\date{}",
        r"\begin{document}",
        r"\maketitle",
        "",
        *sections,
        r"\end{document}",
        "",
    ])


def _paragraphs(text: str) -> str:
    return "\n\n".join(latex_text(p) for p in re.split(r"\n\s*\n", text))


def _latex_problem(number: int, v: Variant) -> str:
    lines = [f"\\section*{{{number}. {latex_text(v.exercise.title)}}}", "", _paragraphs(v.statement), "",
             r"\begin{itemize}"]
    for spec in v.exercise.answers:
        answer = v.worked.answers[spec.name]
        blank = latex_text(spec.blank(answer.label, answer.kind, answer.value))
        lines.append(f"  \\item {blank}: \\rule{{4cm}}{{0.4pt}}")
    lines += [r"\end{itemize}", f"{{\\footnotesize exercise \\texttt{{{latex_text(v.exercise.id)}}}}}", ""]
    return "\n".join(lines)


def _latex_key(number: int, v: Variant) -> str:
    lines = [f"\\section*{{{number}. {latex_text(v.exercise.title)}}}", "", r"\begin{itemize}"]
    for spec in v.exercise.answers:
        answer = v.worked.answers[spec.name]
        lines.append(f"  \\item \\textbf{{{latex_text(answer.label)}}} "
                     f"(\\texttt{{{latex_text(spec.name)}}}): "
                     f"{latex_text(spec.shown(answer.value, answer.kind))} "
                     f"({latex_text(spec.precision(answer.kind, answer.value))})")
    lines += [r"\end{itemize}", "", r"\subsection*{Worked solution}", "", _latex_worked(key_working(v)), ""]
    return "\n".join(lines)


def _latex_worked(worked: Worked) -> str:
    lines = [f"\\textit{{{latex_text(worked.source)}}}" if worked.source else "", "",
             r"\begin{tabular}{ll}", r"\textbf{given} & \textbf{value} \\", r"\hline"]
    for g, value in worked.givens:
        label = g.label + (f" ({g.symbol})" if g.symbol else "")
        lines.append(f"{latex_text(label)} & {latex_text(_show(value, g.kind))} \\\\")
    lines += [r"\end{tabular}", "", r"\begin{enumerate}"]
    for s in worked.steps:
        shown = _show(s.value, s.kind)
        expression = f": {latex_text(s.expression)}" if s.expression else ""
        result = f" = \\textbf{{{latex_text(shown)}}}" if shown and s.expression else \
            (f": \\textbf{{{latex_text(shown)}}}" if shown else "")
        lines.append(f"  \\item {latex_text(s.text)}{expression}{result}")
    lines += [r"\end{enumerate}", ""]
    lines += [f"\\textbf{{{latex_text(sentence(a.label))}: {latex_text(_show(a.value, a.kind))}}}\n"
              for a in worked.answers.values()]
    return "\n".join(_tidy(lines))


def _tidy(lines: list[str]) -> list[Any]:
    return [line for i, line in enumerate(lines) if line or (i and lines[i - 1])]
