# ---
# jupyter:
#   jupytext:
#     formats: ipynb,py:percent
#     text_representation:
#       extension: .py
#       format_name: percent
#   kernelspec:
#     display_name: Python 3
#     language: python
#     name: python3
# ---

# %% [markdown]
# # costmodel in a notebook
#
# The same answers as the command line, as Python values: formulas as sympy expressions you can
# solve and differentiate, sweeps as pandas DataFrames, results shown as the command line shows
# them. Open this file in Jupyter with jupytext (`pip install jupytext`, then *Open as notebook*),
# or convert it: `jupytext --to ipynb docs/notebooks/tutorial.py`.
#
# `import costmodel` inside Jupyter registers the display of its results; in a plain
# interpreter nothing changes (`%load_ext costmodel` does the same explicitly).

# %%
import sympy

import costmodel
from costmodel.symbols import ALPHA, BETA, GAMMA, K, n, p

# %% [markdown]
# ## A formula is a sympy expression
#
# `costmodel.formula` gives the symbolic cost of an algorithm. Shown on its own it is the
# table of `costmodel formula allreduce rabenseifner`; its `.expr` is the time
# `latency·α + bandwidth·β + compute·γ` as a sympy expression in the symbols of
# `costmodel.symbols`, and `.terms` holds each coefficient.

# %%
rab = costmodel.formula("allreduce", "rabenseifner")
rd = costmodel.formula("allreduce", "recursive-doubling")
rab

# %%
rab.expr

# %%
rab.terms["bandwidth"], rab.terms["rounds"]

# %% [markdown]
# The expression is the registry's cost: at p = 16, n = 1 MiB on a link of α = 5 µs and
# β = 0.08 ns/B it gives exactly what `costmodel.cost` computes.

# %%
link = costmodel.link_from_options(alpha="5us", beta="0.08ns/B")
on_link = {ALPHA: sympy.Rational(link.alpha_s), BETA: sympy.Rational(link.beta_s_per_byte),
           GAMMA: sympy.Rational(link.gamma_s_per_byte)}
by_formula = rab.expr.subs({**on_link, p: 16, n: 2**20})
by_registry = costmodel.cost("allreduce", "rabenseifner", p=16, n="1MiB", link=link)
assert by_formula == sympy.Rational(by_registry.time_s)
by_formula, by_registry.time_s

# %%
by_registry

# %% [markdown]
# ## A crossover, solved and differentiated
#
# Recursive doubling sends all of n in each of its log₂p rounds; Rabenseifner pays twice the
# start-ups but sends n about twice in all. Where do they cost the same? With γ = 0, for any p:

# %%
gap = (rd.expr - rab.expr).subs(GAMMA, 0)
n_star = sympy.solve(gap, n)[0]
n_star

# %% [markdown]
# At p = 16 on the link above, that is the crossover `costmodel crossover allreduce rd rab -p 16`
# finds (the command solves the same lines exactly):

# %%
at_16 = n_star.subs({**on_link, p: 16})
crossing = costmodel.crossover("allreduce", "rd", "rab", p=16, link=link)
assert at_16 == sympy.Rational(crossing.crossovers[0].n_bytes)
at_16, float(at_16)

# %%
crossing

# %% [markdown]
# Differentiating: the time each algorithm adds per byte is ∂T/∂n, and how the crossover moves
# with the latency is ∂n*/∂α (it grows in proportion to α/β).

# %%
sympy.diff(rab.expr, n), sympy.diff(n_star, ALPHA)

# %% [markdown]
# The pipelined chain broadcast cuts n into k segments: more segments overlap more, but each
# pays a start-up. Setting ∂T/∂k = 0 gives the best k, as `costmodel formula` prints it.

# %%
chain = costmodel.formula("broadcast", "pipelined-chain")
roots = sympy.solve(sympy.diff(chain.expr, K), K)
k_star = next(k for k in roots if not k.could_extract_minus_sign())
assert sympy.simplify(k_star**2 - BETA * n * (p - 2) / ALPHA) == 0
k_star, chain.parameters[0]["optimum"]

# %% [markdown]
# ## A sweep as a DataFrame, and a plot
#
# `costmodel.sweep` evaluates the formulas over a grid of p and n with numpy and returns a
# DataFrame: one row per (p, n) point, one column of seconds per algorithm.

# %%
sizes = [2**k for k in range(10, 31, 2)]
frame = costmodel.sweep("allreduce", ["ring", "rd", "rab"], p=[16, 64], n=sizes, link=link)
assert len(frame) == 2 * len(sizes)
frame.head()

# %%
import matplotlib.pyplot as plt

ax = frame.xs(64, level="p").plot(logx=True, logy=True, marker=".")
ax.set_xlabel("n (bytes)")
ax.set_ylabel("time (s)")
ax.set_title("all-reduce, p = 64, α = 5 µs, β = 0.08 ns/B")
plt.show()

# %% [markdown]
# The results that are tables convert too, with the units in the column names:
# `best` (one row per size range), a cost table (one row per algorithm), a calibration report
# and a fit's residuals (one row per measured size).

# %%
costmodel.best("allreduce", ["ring", "rd", "rab"], p=64, link=link).to_frame()

# %%
costmodel.compare("allreduce", ["ring", "rd", "rab"], p=64, n="64MiB", link=link).to_frame()

# %% [markdown]
# ## A worked example
#
# The worked examples of `costmodel example` compute each step with the library.

# %%
from costmodel.examples import get

worked = get("ring-bytes").run({"p": "8", "n": "64 MB"})
worked

# %% [markdown]
# ## An exercise checked
#
# Each student gets a variant of an exercise (by seed); `check` grades answers against it and
# names the likely mistake of a wrong one.

# %%
from costmodel.exercises import Submission, check, load_bank

variant = load_bank().get("ring-bytes").variant(7)
print(variant.to_dict()["statement"])

# %%
report = check([Submission("ring-bytes", "6", seed=7, name="rounds"),
                Submission("ring-bytes", "128 MB", seed=7, name="sent")])
assert [g.correct for g in report.grades] == [True, False]
report
