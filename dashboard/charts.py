"""Pure figure builders: a metrics frame in, a plotly figure out. No streamlit here.

The checklist is the notes' section 8 on one figure: one row per chart, a shared x axis (step or wall
time), a unified hover with the exact logged values, an optional EMA that is drawn over the raw series
(never instead of it), and the step ranges of findings shaded on the rows whose metrics they concern.
Each row has its own legend beside it, naming its series and the findings shaded on it (a label drawn on
the shading itself overlaps the next one where ranges start together). A right-hand axis has its own
ticks, from zero: synchronised with the left grid it showed values its series never takes (negative
fractions, a negative |ratio - 1|).
Series are downsampled with `downsample.union_indices`, which keeps every bucket's min and max.

Texts are English here (the source); `lang` gives them in another language through dashboard.diagnosis.i18n.
"""

from __future__ import annotations

import html
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
import pandas as pd
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from dashboard.chart_scales import scaled_range
from dashboard.diagnosis import i18n
from dashboard.downsample import DEFAULT_POINTS, union_indices


def plot_text(text: object) -> str:
    """A run or metric name for Plotly, which renders a subset of HTML in trace names, titles and hover
    text (`<a href>` becomes a live link, `<b>` bold) and fills `%{...}` in hover templates: escaped, so the
    name shows literally and links nowhere (a zero-width space keeps `%{` from being a template field)."""
    return html.escape(str(text), quote=False).replace("%{", "%\u200b{")


SEVERITY_COLORS = {"critical": "rgba(214,39,40,0.16)", "warning": "rgba(255,127,14,0.16)",
                   "info": "rgba(31,119,180,0.10)"}
PALETTE = ("#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#17becf", "#8c564b", "#e377c2")
ROW_HEIGHT = 230
X_DOMAIN_END = 0.93  # the charts end here; a right-hand axis's ticks sit beyond, the legends beyond them
LEGEND_X = 1.0
# The evidence chart's tick format: "~g" keeps 0.05 and 1e-08 readable; Plotly's default SI suffixes read
# 5e-7 as "0.5µ", which looks like a unit.
TICKS = {"tickformat": "~g", "exponentformat": "e"}


@dataclass(frozen=True)
class Series:
    column: str
    label: str
    secondary: bool = False  # drawn against the right-hand axis
    dash: str | None = None
    sparse: bool = False  # logged on some steps only (eval): markers and lines across the gaps


@dataclass(frozen=True)
class Panel:
    key: str
    title: str
    series: tuple[Series, ...]
    band: tuple[str, str] | None = None  # (mean, std) columns: a mean +- std band
    hline: float | None = None  # reference line, e.g. ratio 1
    unit_range: bool = False  # a fraction in [0, 1]
    short: str = ""  # name in running text ("not logged: pass rate, KL")
    # (columns, words): added to the title when the run logs any of the columns, so a title promises only the
    # series drawn (a verl run has no reward std band and no truncated fraction)
    parts: tuple[tuple[tuple[str, ...], str], ...] = ()

    @property
    def columns(self) -> tuple[str, ...]:
        return tuple(s.column for s in self.series) + (self.band or ())


CHECKLIST: tuple[Panel, ...] = (
    Panel("reward", "Raw reward: mean",
          (Series("reward/mean", "reward mean"), Series("eval/reward_mean", "eval reward", sparse=True, dash="dot")),
          band=("reward/mean", "reward/std"), short="reward mean/std",
          parts=((("reward/std",), " with std band"), (("eval/reward_mean",), ", and eval reward"))),
    Panel("zero_var", "Zero-variance groups",
          (Series("groups/zero_std_frac", "zero-variance"), Series("groups/all_pass_frac", "all pass", dash="dot"),
           Series("groups/all_fail_frac", "all fail", dash="dash")), unit_range=True,
          short="zero-variance groups",
          parts=((("groups/all_pass_frac", "groups/all_fail_frac"), " (all-pass / all-fail split)"),)),
    Panel("pass_rate", "Pass rate",
          (Series("reward/pass_rate", "train"), Series("eval/pass_rate", "eval", sparse=True)), unit_range=True,
          short="pass rate"),
    Panel("length", "Completion length (tokens)",
          (Series("completions/len_mean", "length mean"), Series("completions/len_max", "length max", dash="dot"),
           Series("completions/truncated_frac", "truncated frac", secondary=True, dash="dash")),
          short="completion length",
          parts=((("completions/truncated_frac",), " and truncated fraction (right axis)"),)),
    Panel("entropy", "Entropy (nats per token)", (Series("policy/entropy", "entropy"),), short="entropy"),
    Panel("kl_ref", "KL to the reference", (Series("policy/kl_ref", "KL ref"),), short="KL to the reference"),
    Panel("clip", "Clip fraction",
          (Series("policy/clipfrac", "clipfrac"), Series("policy/clipfrac_low", "low", dash="dot"),
           Series("policy/clipfrac_high", "high", dash="dash")), unit_range=True,
          short="clip fraction", parts=((("policy/clipfrac_low", "policy/clipfrac_high"), " (low / high)"),)),
    Panel("ratio", "First-step ratio current/old (should be 1)",
          (Series("policy/ratio_first_step", "ratio first step"),
           Series("policy/ratio_first_step_max_dev", "max |ratio-1|", secondary=True, dash="dot")), hline=1.0,
          short="first-step ratio",
          parts=((("policy/ratio_first_step_max_dev",), "; max |ratio - 1| on the right"),)),
)
PANELS = {p.key: p for p in CHECKLIST}


@dataclass(frozen=True)
class Shade:
    """A step range to shade on the rows showing any of `metrics` (a finding's range)."""

    metrics: tuple[str, ...]
    step_range: tuple[int, int]
    severity: str
    label: str


def panels_for_metric(metric: str) -> list[Panel]:
    return [p for p in CHECKLIST if metric in p.columns]


def panel_title(panel: Panel, lang: str = "en", logged: frozenset[str] | set[str] | None = None) -> str:
    """The panel's title naming the series drawn: its head, and each part whose columns the run logs (all parts
    when `logged` is None)."""
    head = i18n.chart_text(f"panel.{panel.key}", panel.title, lang)
    shown = [(cols, words) for cols, words in panel.parts if logged is None or set(cols) & set(logged)]
    return head + "".join(i18n.chart_text(f"panel.{panel.key}+{cols[0]}", words, lang) for cols, words in shown)


def panel_short(panel: Panel, lang: str = "en") -> str:
    return i18n.chart_text(f"short.{panel.key}", panel.short or panel.title, lang)


def series_label(s: Series, lang: str = "en") -> str:
    return i18n.chart_text(f"series.{s.column}", s.label, lang)


def ema(values: np.ndarray, weight: float) -> np.ndarray:
    """TensorBoard-style exponential smoothing (weight 0 = raw), skipping NaN rather than spreading it."""
    s = pd.Series(values, dtype="float64").replace([np.inf, -np.inf], np.nan)
    return s.ewm(alpha=1.0 - weight, ignore_na=True).mean().where(s.notna()).to_numpy()


def x_values(frame: pd.DataFrame, x: str, lang: str = "en") -> tuple[np.ndarray, pd.Index | np.ndarray, str]:
    """(numeric x for downsampling, x to draw, axis title) for x = "step" or "wall_time"."""
    if x == "wall_time" and "wall_time" in frame:
        secs = frame["wall_time"].to_numpy(dtype=np.float64)
        return secs, pd.to_datetime(secs, unit="s"), i18n.label("axis_wall_time", lang)
    steps = frame["step"].to_numpy()
    return steps.astype(np.float64), steps, i18n.label("axis_step", lang)


def step_to_x(frame: pd.DataFrame, x: str, step: int):
    """The x coordinate of `step` (nearest logged step) on an axis of kind `x`."""
    if x != "wall_time" or "wall_time" not in frame or not len(frame):
        return step
    i = int(np.clip(np.searchsorted(frame["step"].to_numpy(), step), 0, len(frame) - 1))
    return pd.to_datetime(frame["wall_time"].iloc[i], unit="s")


def checklist_figure(frame: pd.DataFrame, panels: tuple[Panel, ...] = CHECKLIST, x: str = "step",
                     smoothing: float = 0.0, shades: tuple[Shade, ...] = (),
                     n_out: int = DEFAULT_POINTS, nan_at: Mapping[str, set[int]] | None = None,
                     lang: str = "en") -> go.Figure:
    """The checklist charts of one run, one row per panel, sharing the x axis, each with its legend.

    `nan_at` ({column: steps}, `Run.nan_at`): where a NaN was logged; marked like an inf, since a NaN is
    otherwise only a gap in the line, which looks the same as a step that logged nothing.
    """
    fig = _grid(panels, lang, logged_columns([frame]))
    xs, xdraw, xtitle = x_values(frame, x, lang)
    for row, panel in enumerate(panels, start=1):
        present = [s for s in panel.series if s.column in frame]
        if not present:
            _note(fig, row, i18n.label("chart_not_logged", lang))
            continue
        idx = union_indices(xs, [frame[s.column].to_numpy(dtype=np.float64) for s in present], n_out)
        if panel.band and all(c in frame for c in panel.band):
            _add_band(fig, row, frame, panel.band, xdraw, idx, lang)
        for i, s in enumerate(present):
            y = frame[s.column].to_numpy(dtype=np.float64)
            name = series_label(s, lang)
            _add_series(fig, row, s, y, xdraw, idx, PALETTE[i % len(PALETTE)], smoothing, name, lang)
            if nan_at and nan_at.get(s.column):
                logged = np.isnan(y) & np.isin(frame["step"].to_numpy(), np.fromiter(nan_at[s.column], np.int64))
                _mark(fig, row, s, y, xdraw, logged, "NaN", name)
        if panel.hline is not None:
            fig.add_hline(y=panel.hline, line_dash="dash", line_color="gray", row=row, col=1)
        _right_axis(fig, row, panel, [frame])
        _left_ticks(fig, row, panel, [frame])
    _add_shades(fig, panels, frame, x, shades, lang)
    fig.update_xaxes(title_text=xtitle, row=len(panels), col=1)
    return fig


def compare_figure(frames: dict[str, pd.DataFrame], panels: tuple[Panel, ...] = CHECKLIST, x: str = "step",
                   smoothing: float = 0.0, n_out: int = DEFAULT_POINTS, lang: str = "en") -> go.Figure:
    """Several runs overlaid on the checklist rows: one colour per run (named in the legend above the charts),
    one dash style per series (named in each row's legend; clicking one hides that series in every run)."""
    fig = _grid(panels, lang, logged_columns(list(frames.values())))
    runs = {name: PALETTE[r % len(PALETTE)] for r, name in enumerate(frames)}
    for name, color in runs.items():  # the runs' legend: a key of colours, above the charts
        fig.add_trace(go.Scatter(x=[None], y=[None], mode="lines", name=plot_text(name), legend="legend",
                                 line={"color": color, "width": 3}, hoverinfo="skip"), row=1, col=1)
    for row, panel in enumerate(panels, start=1):
        shown: set[str] = set()
        for name, frame in frames.items():
            xs, xdraw, _ = x_values(frame, x, lang)
            present = [s for s in panel.series if s.column in frame]
            if not present:
                continue
            idx = union_indices(xs, [frame[s.column].to_numpy(dtype=np.float64) for s in present], n_out)
            for s in present:
                group = f"{row}:{s.column}"
                if group not in shown:  # the series' key in the row's legend, in grey: the colour is the run's
                    shown.add(group)
                    fig.add_trace(go.Scatter(x=[None], y=[None], mode="lines+markers" if s.sparse else "lines",
                                             name=series_label(s, lang), marker={"size": 5, "color": "#555"},
                                             legend=_legend(row), legendgroup=group, hoverinfo="skip",
                                             line={"color": "#555", "dash": s.dash, "width": 1.6}),
                                  row=row, col=1, secondary_y=s.secondary or None)
                _add_series(fig, row, s, frame[s.column].to_numpy(dtype=np.float64), xdraw, idx, runs[name],
                            smoothing, f"{plot_text(name)} · {series_label(s, lang)}", lang, legendgroup=group,
                            showlegend=False)
        if panel.hline is not None:
            fig.add_hline(y=panel.hline, line_dash="dash", line_color="gray", row=row, col=1)
        _right_axis(fig, row, panel, list(frames.values()))
        _left_ticks(fig, row, panel, list(frames.values()))
    fig.update_layout(legend={"orientation": "h", "x": 0, "xanchor": "left", "y": 1.0, "yanchor": "top",
                              "yref": "container", "traceorder": "normal",
                              "title": {"text": i18n.label("chart_runs", lang)}},
                      margin={"t": 90})
    fig.update_xaxes(title_text=x_values(next(iter(frames.values())), x, lang)[2] if frames else "",
                     row=len(panels), col=1)
    return fig


def threshold_is_level(statistic: str) -> bool:
    """Whether an evidence's threshold is a level of its metric (a median, a maximum, a value at a step,
    compared with a bound), so a line at it on the metric's chart means something. A share of steps, a
    change over the run, a span or a count is compared with a bound in other units: drawn on the series it
    would be a line at a value the metric never meant."""
    s = statistic.lower()
    return not any(w in s for w in ("share of", "change", "minus", "max - min", "std / mean", "count",
                                    "logged steps with", "spread"))


def axis_range(values: np.ndarray, extra: tuple[float, ...] = (), columns: tuple[str, ...] = ()) -> tuple[float, float] | None:
    """A y range that holds every finite value (and `extra`) and the scale of `columns`' metrics, padded
    (chart_scales.scaled_range): a constant gets a range around it, not Plotly's -1..1 around 0.05 where 0.05 reads
    as 0; a series that never goes below 0 starts at 0 when its lowest value is near 0; a constant 0 is drawn on
    0..1; a ratio of 1 +- 1e-7 on 1 +- 0.01. None: no value."""
    return scaled_range(values, columns, extra)


def evidence_figure(frame: pd.DataFrame, metric: str, threshold: float | None = None,
                    step_range: tuple[int, int] | None = None, severity: str = "warning",
                    n_out: int = 600, statistic: str = "", lang: str = "en") -> go.Figure | None:
    """A small chart of the metric an evidence names, on an axis that holds its values, with the threshold
    the rule compared a level of it with, and the range where the finding holds. None where there is no such
    chart: the metric is not a logged series (config, samples, the step itself: a chart of step against step
    is a diagonal), or it has no finite value."""
    if metric not in frame or metric in ("step", "wall_time") or not pd.api.types.is_numeric_dtype(frame[metric]):
        return None
    y = frame[metric].to_numpy(dtype=np.float64)
    finite = np.isfinite(y)
    if not finite.any():
        return None
    line = threshold if threshold is not None and np.isfinite(threshold) and threshold_is_level(statistic) else None
    xs, xdraw, xtitle = x_values(frame, "step", lang)
    if finite.sum() < len(y) * 0.5:  # sparse (eval): its points, joined
        keep = np.flatnonzero(finite)
        mode = "lines+markers"
    else:
        keep = union_indices(xs, [y], n_out)
        mode = "lines"
    name = plot_text(metric)
    fig = go.Figure(go.Scatter(x=xdraw[keep], y=y[keep], mode=mode, name=name, line={"width": 1.5},
                               connectgaps=mode != "lines",
                               hovertemplate=f"{xtitle} %{{x}}<br>{name} %{{y:.6g}}<extra></extra>"))
    if line is not None:
        fig.add_hline(y=line, line_dash="dash", line_color="crimson",
                      annotation_text=i18n.label("chart_threshold", lang, v=f"{line:.4g}"),
                      annotation_position="top left", annotation_font_color="crimson",
                      annotation_bgcolor="rgba(255,255,255,0.8)")
    if step_range is not None:
        fig.add_vrect(x0=step_range[0], x1=step_range[1], fillcolor=SEVERITY_COLORS.get(severity), line_width=0,
                      layer="below")
    fig.update_layout(height=230, margin={"l": 10, "r": 10, "t": 10, "b": 30}, showlegend=False, hovermode="x")
    fig.update_xaxes(title_text=xtitle)
    rng = axis_range(y, () if line is None else (line,), (metric,))
    fig.update_yaxes(title_text=name, range=rng, autorange=False, **{**TICKS, "tickformat": tick_format(np.array(rng))})
    return fig


def logged_columns(frames: list[pd.DataFrame]) -> set[str]:
    """The columns with at least one value in any of the frames (a reader may keep a column of nulls)."""
    return {c for f in frames for c in f.columns if f[c].notna().any()}


def _legend(row: int) -> str:
    return "legend" if row == 0 else f"legend{row + 1}"  # row 1's legend is legend2: "legend" is the figure's


def _grid(panels: tuple[Panel, ...], lang: str, logged: set[str] | None = None) -> go.Figure:
    specs = [[{"secondary_y": any(s.secondary for s in p.series)}] for p in panels]
    fig = make_subplots(rows=len(panels), cols=1, shared_xaxes=True, vertical_spacing=0.25 / max(len(panels), 1),
                        subplot_titles=[panel_title(p, lang, logged) for p in panels], specs=specs)
    fig.update_layout(height=ROW_HEIGHT * len(panels), hovermode="x unified",
                      margin={"l": 10, "r": 10, "t": 40, "b": 40})
    fig.update_xaxes(domain=[0.0, X_DOMAIN_END])
    for a in fig.layout.annotations:  # the subplot titles, centred over the charts, not over the legends
        a.x = X_DOMAIN_END / 2
    for row, p in enumerate(panels, start=1):
        top = fig.get_subplot(row, 1).yaxis.domain[1]
        fig.update_layout({_legend(row): {"x": LEGEND_X, "xanchor": "left", "y": top, "yanchor": "top",
                                          "font": {"size": 11}, "tracegroupgap": 2, "traceorder": "normal", "bgcolor": "rgba(0,0,0,0)"}})
        fig.update_yaxes(row=row, col=1, secondary_y=False, **TICKS)
        if p.unit_range:
            fig.update_yaxes(rangemode="tozero", row=row, col=1, secondary_y=False)
    return fig


def tick_format(values: np.ndarray) -> str:
    """A tick format with the significant digits that tell the ticks of these values apart: "~g" (6 digits)
    drew every tick of a first-step ratio of 1 +- 2e-6 as "1"; with 8 they read 0.999998, 1, 1.000002.

    digits = 6, or 3 beyond the ratio of the values' magnitude to their spread, when that needs more (at most
    15). [1 - 2e-6, 1 + 6e-6] -> magnitude/spread 1.25e5 -> 5.1 -> 6 + 3 = 9 digits -> "~.9g"."""
    v = np.asarray(values, dtype=np.float64)
    v = v[np.isfinite(v)]
    if not len(v):
        return TICKS["tickformat"]
    lo, hi = float(v.min()), float(v.max())
    big = max(abs(lo), abs(hi))
    if hi <= lo or big == 0:
        return TICKS["tickformat"]
    need = int(np.ceil(np.log10(big / (hi - lo)))) + 3
    return TICKS["tickformat"] if need <= 6 else f"~.{min(need, 15)}g"


def _axis_values(panel: Panel, frames: list[pd.DataFrame], secondary: bool) -> tuple[np.ndarray, tuple[str, ...]]:
    """(values (N,), columns) of the panel's series on one axis, over every frame that logs them."""
    cols = tuple(s.column for s in panel.series if s.secondary == secondary and any(s.column in f for f in frames))
    parts = [f[c].to_numpy(dtype=np.float64) for f in frames for c in cols if c in f]
    if panel.band and not secondary:  # the mean +- std band is drawn on the left axis: it holds the band too
        mean, std = panel.band
        parts += [f[mean].to_numpy(dtype=np.float64) + k * f[std].to_numpy(dtype=np.float64)
                  for f in frames if mean in f and std in f for k in (-1, 1)]
    return np.concatenate(parts or [[]]), cols


def _left_ticks(fig: go.Figure, row: int, panel: Panel, frames: list[pd.DataFrame]) -> None:
    """The left axis over its series' values and their metrics' scales (chart_scales), with ticks of the digits
    that range needs (tick_format): never 0.9999998999999999 for a ratio that is 1."""
    values, cols = _axis_values(panel, frames, secondary=False)
    rng = axis_range(values, columns=cols)
    if rng is None:
        return
    fig.update_yaxes(row=row, col=1, secondary_y=False, range=rng, autorange=False,
                     tickformat=tick_format(np.array(rng)))


def _right_axis(fig: go.Figure, row: int, panel: Panel, frames: list[pd.DataFrame]) -> None:
    """A right-hand axis with ticks of its own over its series' values and their scales (from 0 for a series
    that never goes below it; 0 .. 1 for a fraction), no grid of its own: the grid is the left axis's."""
    values, cols = _axis_values(panel, frames, secondary=True)
    if not cols:
        return
    rng = axis_range(values, columns=cols)
    fig.update_yaxes(row=row, col=1, secondary_y=True, tickmode="auto", showgrid=False, zeroline=False,
                     **({"range": rng, "autorange": False} if rng else {}),
                     **{**TICKS, "tickformat": tick_format(np.array(rng)) if rng else TICKS["tickformat"]})


def _note(fig: go.Figure, row: int, text: str) -> None:
    fig.add_trace(go.Scatter(x=[], y=[], showlegend=False), row=row, col=1)
    axis = "" if row == 1 else str(row)
    fig.add_annotation(text=text, showarrow=False, xref=f"x{axis} domain", yref=f"y{_yaxis_number(fig, row)} domain",
                       x=0.5, y=0.5, font={"color": "gray"})


def _yaxis_number(fig: go.Figure, row: int) -> str:
    ref = fig.get_subplot(row, 1).yaxis.plotly_name  # "yaxis", "yaxis3", ...
    return ref.removeprefix("yaxis")


def _add_series(fig, row, s: Series, y: np.ndarray, xdraw, idx, color, smoothing, name, lang: str,
                legendgroup: str | None = None, showlegend: bool = True) -> None:
    mode = "lines+markers" if s.sparse else "lines"
    yi = y[idx]
    finite = np.isfinite(yi)
    if s.sparse:
        idx, yi = idx[finite], yi[finite]
    raw_opacity = 0.35 if smoothing > 0 else 1.0
    hover = f"{name} %{{y:.6g}}<extra></extra>"
    common = {"legend": _legend(row), "legendgroup": legendgroup, "showlegend": showlegend}
    secondary = s.secondary or None
    fig.add_trace(go.Scatter(x=xdraw[idx], y=yi, mode=mode, name=name, opacity=raw_opacity,
                             line={"color": color, "dash": s.dash, "width": 1.4}, marker={"size": 5},
                             connectgaps=s.sparse, hovertemplate=hover, **common),
                  row=row, col=1, secondary_y=secondary)
    if smoothing > 0 and not s.sparse:
        sm = ema(y, smoothing)[idx]
        fig.add_trace(go.Scatter(x=xdraw[idx], y=sm, mode="lines", name=f"{name} (EMA {smoothing:g})",
                                 line={"color": color, "dash": s.dash, "width": 2.2},
                                 hovertemplate=f"{name} EMA %{{y:.6g}}<extra></extra>", **common),
                      row=row, col=1, secondary_y=secondary)
    _mark(fig, row, s, y, xdraw, np.isinf(y), "inf", name, legendgroup, showlegend)


def _mark(fig, row, s: Series, y: np.ndarray, xdraw, where: np.ndarray, kind: str, name,
          legendgroup: str | None = None, showlegend: bool = True) -> None:
    """Red crosses at the steps `where` (T,) bool, at the series' top: non-finite values have no height."""
    bad = np.flatnonzero(where)[:500]
    if not len(bad):
        return
    finite = y[np.isfinite(y)]
    level = float(finite.max()) if len(finite) else 0.0
    fig.add_trace(go.Scatter(x=np.asarray(xdraw)[bad], y=np.full(len(bad), level), mode="markers",
                             name=f"{name}: {kind}", legend=_legend(row), legendgroup=legendgroup,
                             showlegend=showlegend, marker={"symbol": "x", "color": "crimson", "size": 8},
                             text=[str(v) for v in y[bad]], hovertemplate=f"{name} %{{text}}<extra></extra>"),
                  row=row, col=1, secondary_y=s.secondary or None)


def _add_band(fig, row, frame, band, xdraw, idx, lang: str) -> None:
    mean = frame[band[0]].to_numpy(dtype=np.float64)[idx]
    std = frame[band[1]].to_numpy(dtype=np.float64)[idx]
    ok = np.isfinite(mean) & np.isfinite(std)
    xb = np.asarray(xdraw)[idx][ok]
    upper, lower = (mean + std)[ok], (mean - std)[ok]
    fig.add_trace(go.Scatter(x=xb, y=upper, mode="lines", line={"width": 0}, showlegend=False,
                             hoverinfo="skip", legend=_legend(row)), row=row, col=1)
    fig.add_trace(go.Scatter(x=xb, y=lower, mode="lines", line={"width": 0}, fill="tonexty",
                             fillcolor="rgba(31,119,180,0.18)", name=i18n.label("chart_band", lang),
                             customdata=std[ok], legend=_legend(row),
                             hovertemplate="reward std %{customdata:.6g}<extra></extra>"), row=row, col=1)


# Shading colours, one per finding in turn (an RGB triple): several findings on one panel shaded in one
# severity colour could not be told apart in its legend. The legend names the severity in words instead.
SHADE_RGB = ("214,39,40", "255,127,14", "148,103,189", "23,190,207", "140,86,75", "227,119,194", "188,189,34",
             "127,127,127")
SHADE_FILL, SHADE_MARK = 0.14, 0.6  # the shading's opacity, and its square's in the legend


def shade_colors(shades: tuple[Shade, ...]) -> list[tuple[str, str]]:
    """(fill, legend mark) colour of each shade: distinct up to len(SHADE_RGB) findings, in order."""
    rgb = [SHADE_RGB[i % len(SHADE_RGB)] for i in range(len(shades))]
    return [(f"rgba({c},{SHADE_FILL})", f"rgba({c},{SHADE_MARK})") for c in rgb]


def _add_shades(fig, panels, frame, x, shades, lang: str) -> None:
    """Each finding's range shaded on the rows of its metrics in a colour of its own, and named in those rows'
    legends (a square of its colour, the severity, the rule and the steps)."""
    for shade, (fill, mark) in zip(shades, shade_colors(shades)):
        lo, hi = shade.step_range
        x0, x1 = step_to_x(frame, x, lo), step_to_x(frame, x, hi)
        if x0 == x1 and x == "step":
            x0, x1 = lo - 0.5, hi + 0.5
        for row, panel in enumerate(panels, start=1):
            if set(shade.metrics) & set(panel.columns):
                fig.add_vrect(x0=x0, x1=x1, fillcolor=fill, line_width=0, layer="below", row=row, col=1)
                name = (f"{i18n.label(shade.severity, lang)} · {plot_text(shade.label)}"
                        + i18n.label("in_parens", lang, v=i18n.span((lo, hi), lang)))
                fig.add_trace(go.Scatter(x=[None], y=[None], mode="markers", name=name, legend=_legend(row),
                                         marker={"symbol": "square", "size": 11, "color": mark},
                                         hoverinfo="skip"), row=row, col=1)
