"""Pure figure builders: a metrics frame in, a plotly figure out. No streamlit here.

The checklist is the notes' section 8 on one figure: one row per chart, a shared x axis (step or wall
time), a unified hover with the exact logged values, an optional EMA that is drawn over the raw series
(never instead of it), and the step ranges of findings shaded on the rows whose metrics they concern.
Series are downsampled with `downsample.union_indices`, which keeps every bucket's min and max.
"""

from __future__ import annotations

import html
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
import pandas as pd
import plotly.graph_objects as go
from plotly.subplots import make_subplots

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

    @property
    def columns(self) -> tuple[str, ...]:
        return tuple(s.column for s in self.series) + (self.band or ())


CHECKLIST: tuple[Panel, ...] = (
    Panel("reward", "Raw reward: mean with std band, and eval reward",
          (Series("reward/mean", "reward mean"), Series("eval/reward_mean", "eval reward", sparse=True, dash="dot")),
          band=("reward/mean", "reward/std"), short="reward mean/std"),
    Panel("zero_var", "Zero-variance groups (all-pass / all-fail split)",
          (Series("groups/zero_std_frac", "zero-variance"), Series("groups/all_pass_frac", "all pass", dash="dot"),
           Series("groups/all_fail_frac", "all fail", dash="dash")), unit_range=True,
          short="zero-variance groups"),
    Panel("pass_rate", "Pass rate: train and eval",
          (Series("reward/pass_rate", "train"), Series("eval/pass_rate", "eval", sparse=True)), unit_range=True,
          short="pass rate"),
    Panel("length", "Completion length (tokens) and truncated fraction (right axis)",
          (Series("completions/len_mean", "length mean"), Series("completions/len_max", "length max", dash="dot"),
           Series("completions/truncated_frac", "truncated frac", secondary=True, dash="dash")),
          short="completion length"),
    Panel("entropy", "Entropy (nats per token)", (Series("policy/entropy", "entropy"),), short="entropy"),
    Panel("kl_ref", "KL to the reference", (Series("policy/kl_ref", "KL ref"),), short="KL to the reference"),
    Panel("clip", "Clip fraction (low / high)",
          (Series("policy/clipfrac", "clipfrac"), Series("policy/clipfrac_low", "low", dash="dot"),
           Series("policy/clipfrac_high", "high", dash="dash")), unit_range=True,
          short="clip fraction"),
    Panel("ratio", "First-step ratio current/old (should be 1); max |ratio - 1| on the right",
          (Series("policy/ratio_first_step", "ratio first step"),
           Series("policy/ratio_first_step_max_dev", "max |ratio-1|", secondary=True, dash="dot")), hline=1.0,
          short="first-step ratio"),
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


def ema(values: np.ndarray, weight: float) -> np.ndarray:
    """TensorBoard-style exponential smoothing (weight 0 = raw), skipping NaN rather than spreading it."""
    s = pd.Series(values, dtype="float64").replace([np.inf, -np.inf], np.nan)
    return s.ewm(alpha=1.0 - weight, ignore_na=True).mean().where(s.notna()).to_numpy()


def x_values(frame: pd.DataFrame, x: str) -> tuple[np.ndarray, pd.Index | np.ndarray, str]:
    """(numeric x for downsampling, x to draw, axis title) for x = "step" or "wall_time"."""
    if x == "wall_time" and "wall_time" in frame:
        secs = frame["wall_time"].to_numpy(dtype=np.float64)
        return secs, pd.to_datetime(secs, unit="s"), "wall time (UTC)"
    steps = frame["step"].to_numpy()
    return steps.astype(np.float64), steps, "step"


def step_to_x(frame: pd.DataFrame, x: str, step: int):
    """The x coordinate of `step` (nearest logged step) on an axis of kind `x`."""
    if x != "wall_time" or "wall_time" not in frame or not len(frame):
        return step
    i = int(np.clip(np.searchsorted(frame["step"].to_numpy(), step), 0, len(frame) - 1))
    return pd.to_datetime(frame["wall_time"].iloc[i], unit="s")


def checklist_figure(frame: pd.DataFrame, panels: tuple[Panel, ...] = CHECKLIST, x: str = "step",
                     smoothing: float = 0.0, shades: tuple[Shade, ...] = (),
                     n_out: int = DEFAULT_POINTS, nan_at: Mapping[str, set[int]] | None = None) -> go.Figure:
    """The checklist charts of one run, one row per panel, sharing the x axis.

    `nan_at` ({column: steps}, `Run.nan_at`): where a NaN was logged; marked like an inf, since a NaN is
    otherwise only a gap in the line, which looks the same as a step that logged nothing.
    """
    fig = _grid(panels)
    xs, xdraw, xtitle = x_values(frame, x)
    for row, panel in enumerate(panels, start=1):
        present = [s for s in panel.series if s.column in frame]
        if not present:
            _note(fig, row, "not logged by this run")
            continue
        idx = union_indices(xs, [frame[s.column].to_numpy(dtype=np.float64) for s in present], n_out)
        if panel.band and all(c in frame for c in panel.band):
            _add_band(fig, row, frame, panel.band, xdraw, idx)
        for i, s in enumerate(present):
            y = frame[s.column].to_numpy(dtype=np.float64)
            _add_series(fig, row, s, y, xdraw, idx, PALETTE[i % len(PALETTE)], smoothing, s.label,
                        legendgroup=panel.key)
            if nan_at and nan_at.get(s.column):
                logged = np.isnan(y) & np.isin(frame["step"].to_numpy(), np.fromiter(nan_at[s.column], np.int64))
                _mark(fig, row, s, y, xdraw, logged, "NaN", s.label, panel.key)
        if panel.hline is not None:
            fig.add_hline(y=panel.hline, line_dash="dash", line_color="gray", row=row, col=1)
    _add_shades(fig, panels, frame, x, shades)
    fig.update_xaxes(title_text=xtitle, row=len(panels), col=1)
    return fig


def compare_figure(frames: dict[str, pd.DataFrame], panels: tuple[Panel, ...] = CHECKLIST, x: str = "step",
                   smoothing: float = 0.0, n_out: int = DEFAULT_POINTS) -> go.Figure:
    """Several runs overlaid on the checklist rows: one colour per run, one dash style per series."""
    fig = _grid(panels)
    for r, (name, frame) in enumerate(frames.items()):
        name = plot_text(name)
        color = PALETTE[r % len(PALETTE)]
        xs, xdraw, _ = x_values(frame, x)
        for row, panel in enumerate(panels, start=1):
            present = [s for s in panel.series if s.column in frame]
            if not present:
                continue
            idx = union_indices(xs, [frame[s.column].to_numpy(dtype=np.float64) for s in present], n_out)
            for s in present:
                _add_series(fig, row, s, frame[s.column].to_numpy(dtype=np.float64), xdraw, idx, color,
                            smoothing, f"{name} · {s.label}", legendgroup=name)
    for row, panel in enumerate(panels, start=1):
        if panel.hline is not None:
            fig.add_hline(y=panel.hline, line_dash="dash", line_color="gray", row=row, col=1)
    fig.update_xaxes(title_text="wall time (UTC)" if x == "wall_time" else "step", row=len(panels), col=1)
    return fig


def evidence_figure(frame: pd.DataFrame, metric: str, threshold: float | None = None,
                    step_range: tuple[int, int] | None = None, severity: str = "warning",
                    n_out: int = 600) -> go.Figure:
    """A small chart of one metric with the threshold a rule used and the range where it fired."""
    fig = go.Figure()
    if metric in frame:
        xs, xdraw, _ = x_values(frame, "step")
        y = frame[metric].to_numpy(dtype=np.float64)
        idx = union_indices(xs, [y], n_out)
        fig.add_trace(go.Scatter(x=xdraw[idx], y=y[idx], mode="lines", name=plot_text(metric), line={"width": 1.5},
                                 hovertemplate="step %{x}<br>" + plot_text(metric) + " %{y:.6g}<extra></extra>"))
    else:
        fig.add_annotation(text=f"{plot_text(metric)} is not logged by this run", showarrow=False,
                           xref="paper", yref="paper", x=0.5, y=0.5)
    if threshold is not None and np.isfinite(threshold):
        fig.add_hline(y=threshold, line_dash="dash", line_color="crimson",
                      annotation_text=f"threshold {threshold:.4g}", annotation_position="top left")
    if step_range is not None:
        fig.add_vrect(x0=step_range[0], x1=step_range[1], fillcolor=SEVERITY_COLORS.get(severity), line_width=0,
                      layer="below")
    fig.update_layout(height=220, margin={"l": 10, "r": 10, "t": 10, "b": 30}, showlegend=False,
                      xaxis_title="step", hovermode="x")
    return fig


def _grid(panels: tuple[Panel, ...]) -> go.Figure:
    specs = [[{"secondary_y": any(s.secondary for s in p.series)}] for p in panels]
    fig = make_subplots(rows=len(panels), cols=1, shared_xaxes=True, vertical_spacing=0.25 / max(len(panels), 1),
                        subplot_titles=[p.title for p in panels], specs=specs)
    fig.update_layout(height=ROW_HEIGHT * len(panels), hovermode="x unified",
                      margin={"l": 10, "r": 10, "t": 40, "b": 40}, legend={"groupclick": "toggleitem"})
    for row, p in enumerate(panels, start=1):
        if p.unit_range:
            fig.update_yaxes(rangemode="tozero", row=row, col=1, secondary_y=False)
    return fig


def _note(fig: go.Figure, row: int, text: str) -> None:
    fig.add_trace(go.Scatter(x=[], y=[], showlegend=False), row=row, col=1)
    axis = "" if row == 1 else str(row)
    fig.add_annotation(text=text, showarrow=False, xref=f"x{axis} domain", yref=f"y{_yaxis_number(fig, row)} domain",
                       x=0.5, y=0.5, font={"color": "gray"})


def _yaxis_number(fig: go.Figure, row: int) -> str:
    ref = fig.get_subplot(row, 1).yaxis.plotly_name  # "yaxis", "yaxis3", ...
    return ref.removeprefix("yaxis")


def _add_series(fig, row, s: Series, y: np.ndarray, xdraw, idx, color, smoothing, name, legendgroup) -> None:
    mode = "lines+markers" if s.sparse else "lines"
    yi = y[idx]
    finite = np.isfinite(yi)
    if s.sparse:
        idx, yi = idx[finite], yi[finite]
    raw_opacity = 0.35 if smoothing > 0 else 1.0
    hover = f"{name} %{{y:.6g}}<extra></extra>"
    fig.add_trace(go.Scatter(x=xdraw[idx], y=yi, mode=mode, name=name, legendgroup=legendgroup, opacity=raw_opacity,
                             line={"color": color, "dash": s.dash, "width": 1.4}, marker={"size": 5},
                             connectgaps=s.sparse, hovertemplate=hover),
                  row=row, col=1, secondary_y=s.secondary if s.secondary else None)
    if smoothing > 0 and not s.sparse:
        sm = ema(y, smoothing)[idx]
        fig.add_trace(go.Scatter(x=xdraw[idx], y=sm, mode="lines", name=f"{name} (EMA {smoothing:g})",
                                 legendgroup=legendgroup, line={"color": color, "dash": s.dash, "width": 2.2},
                                 hovertemplate=f"{name} EMA %{{y:.6g}}<extra></extra>"),
                      row=row, col=1, secondary_y=s.secondary if s.secondary else None)
    _mark(fig, row, s, y, xdraw, np.isinf(y), "inf", name, legendgroup)


def _mark(fig, row, s: Series, y: np.ndarray, xdraw, where: np.ndarray, kind: str, name, legendgroup) -> None:
    """Red crosses at the steps `where` (T,) bool, at the series' top: non-finite values have no height."""
    bad = np.flatnonzero(where)[:500]
    if not len(bad):
        return
    finite = y[np.isfinite(y)]
    level = float(finite.max()) if len(finite) else 0.0
    fig.add_trace(go.Scatter(x=np.asarray(xdraw)[bad], y=np.full(len(bad), level), mode="markers",
                             name=f"{name}: {kind}", legendgroup=legendgroup, marker={"symbol": "x", "color": "crimson", "size": 8},
                             text=[str(v) for v in y[bad]], hovertemplate=f"{name} %{{text}}<extra></extra>"),
                  row=row, col=1, secondary_y=s.secondary if s.secondary else None)


def _add_band(fig, row, frame, band, xdraw, idx) -> None:
    mean = frame[band[0]].to_numpy(dtype=np.float64)[idx]
    std = frame[band[1]].to_numpy(dtype=np.float64)[idx]
    ok = np.isfinite(mean) & np.isfinite(std)
    xb = np.asarray(xdraw)[idx][ok]
    upper, lower = (mean + std)[ok], (mean - std)[ok]
    fig.add_trace(go.Scatter(x=xb, y=upper, mode="lines", line={"width": 0}, showlegend=False,
                             hoverinfo="skip"), row=row, col=1)
    fig.add_trace(go.Scatter(x=xb, y=lower, mode="lines", line={"width": 0}, fill="tonexty",
                             fillcolor="rgba(31,119,180,0.18)", name="mean ± std", customdata=std[ok],
                             hovertemplate="reward std %{customdata:.6g}<extra></extra>"), row=row, col=1)


def _add_shades(fig, panels, frame, x, shades) -> None:
    per_row: dict[int, int] = {}  # labels already placed on a row: each next one goes a line lower
    for shade in shades:
        lo, hi = shade.step_range
        x0, x1 = step_to_x(frame, x, lo), step_to_x(frame, x, hi)
        if x0 == x1 and x == "step":
            x0, x1 = lo - 0.5, hi + 0.5
        for row, panel in enumerate(panels, start=1):
            if set(shade.metrics) & set(panel.columns):
                k = per_row[row] = per_row.get(row, -1) + 1
                fig.add_vrect(x0=x0, x1=x1, fillcolor=SEVERITY_COLORS.get(shade.severity, SEVERITY_COLORS["info"]),
                              line_width=0, layer="below", row=row, col=1,
                              annotation_text=shade.label, annotation_position="top left",
                              annotation_font_size=10, annotation_yshift=-12 * k)
