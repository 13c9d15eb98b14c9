"""Widgets and URL state shared by the pages. Streamlit only; logic stays in the pure modules.

The URL carries the page (st.navigation's url_path) and the selected runs (`?run=<root>/<path>`, repeated
for several). Streamlit drops query parameters when the page changes, so the selection also lives in
session state and is written back to the URL on every page.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import streamlit as st

from collectors import RunError
from dashboard import data, paths
from dashboard.diagnosis import i18n
from dashboard.text import STATUS_ICONS, ago, escape_md, phase_text

SELECTED = "grposcope_runs"  # session key: list of run keys
LANG = "grposcope_lang"  # session key: the language chosen in the switch or the URL (?lang=zh)
SWITCH = "grposcope_lang_switch"  # widget key of the switch
LANG_NAMES = {"en": "English", "zh": "中文"}


def sync_selection() -> None:
    """Called by app.py before every page: URL -> session on arrival, session -> URL otherwise."""
    from_url = st.query_params.get_all("run")
    if from_url:
        st.session_state[SELECTED] = list(dict.fromkeys(from_url))
    elif st.session_state.get(SELECTED):
        st.query_params["run"] = st.session_state[SELECTED]


def lang() -> str:
    """The language of the findings: chosen in the switch or the URL (?lang=zh), else the server's locale."""
    return st.session_state.get(LANG) or i18n.parse_lang(st.query_params.get("lang")) or i18n.default_lang()


def t(key: str, /, **values) -> str:
    """A label of the pages in the chosen language (dashboard.diagnosis.i18n LABELS)."""
    return i18n.label(key, lang(), **values)


def has_label(key: str) -> bool:
    return i18n.has_label(key)


def status_word(status: str) -> str:
    """A run's status ("finished", "running", ...) in the chosen language."""
    return t(f"status_{status}") if f"status_{status}" in i18n.en.LABELS else status


def language_switch() -> str:
    """The sidebar switch. A choice (or a URL that names a language) lives in the session and is written back
    to the URL on every page, like the runs; without one the URL stays as it is."""
    from_url = i18n.parse_lang(st.query_params.get("lang"))
    if from_url and from_url != st.session_state.get(LANG):  # arrived by a link or a pasted URL
        st.session_state[LANG] = st.session_state[SWITCH] = from_url
    current = lang()
    st.session_state.setdefault(SWITCH, current)
    picked = st.sidebar.radio("Language · 语言", i18n.LANGS, format_func=LANG_NAMES.get, horizontal=True,
                              key=SWITCH)
    if picked != current:
        st.session_state[LANG] = picked
    if LANG in st.session_state:
        st.query_params["lang"] = st.session_state[LANG]
    if lang() != "en":
        # Streamlit writes "Press Enter to apply" under a text box being typed in, in English whatever the page's
        # language and with no option to change it; the box applies on Enter all the same
        st.html("<style>[data-testid='InputInstructions']{display:none}</style>")
    return lang()


def selected_keys() -> list[str]:
    return list(st.session_state.get(SELECTED, []))


def set_selected(keys: list[str]) -> None:
    st.session_state[SELECTED] = list(keys)
    if keys:
        st.query_params["run"] = list(keys)
    elif "run" in st.query_params:
        del st.query_params["run"]


def resolve_selected() -> list[tuple[str, Path]]:
    """The selected runs that lie inside the roots; a refused key is shown as an error and dropped."""
    out = []
    for key in selected_keys():
        try:
            out.append((key, paths.resolve_run(data.roots(), key)))
        except paths.PathRefused as e:
            st.error(escape_md(i18n.path_text(str(e), lang())), icon="🚫")
    return out


def picker_labels(table: pd.DataFrame | None = None) -> dict[str, str]:
    """Each discovered run's label in the pickers, by key: icon, name, status, key (of `table`, else of the
    runs discovered now). A page that refreshes only part of itself compares these with the ones its picker
    was drawn with to know when to redraw it."""
    table = data.all_runs() if table is None else table
    return {k: f"{STATUS_ICONS.get(s, '')} {n} · {status_word(s)} · {k}"
            for k, n, s in zip(table["key"], table["name"], table["status"], strict=True)}


def pick_runs(label: str = "Runs", multi: bool = True, min_runs: int = 1) -> list[tuple[str, Path]]:
    """A picker over every discovered run, defaulting to the URL's selection; returns (key, path)."""
    table = data.all_runs()
    chosen = resolve_selected()
    options = list(dict.fromkeys(list(table["key"]) + [k for k, _ in chosen]))
    if not options:
        st.info(escape_md(t("no_runs_under", roots=", ".join(str(r.path) for r in data.roots()))))
        return []
    current = [k for k, _ in chosen]
    labels = picker_labels(table)
    fmt = lambda k: labels.get(k, k)  # a key not (or no longer) discovered shows as itself
    # Set again what the picker holds unless the user just changed it: a widget whose value did not change
    # keeps, in the browser, the text it was first drawn with, so a run that stopped would still read
    # "running" there. The session's value rules, so the default goes (beside a set value it only draws
    # Streamlit's duplicate-default warning).
    key = f"pick_{label}"
    if multi:
        default = current
        if current and st.session_state.get(key) == current:
            st.session_state[key], default = current, None
        picked = st.multiselect(label, options, default=default, format_func=fmt, key=key,
                                placeholder=t("choose_options"))
        if picked != current:
            set_selected(picked)
    else:
        # the URL named runs and every one was refused: the refusal alone, no other run drawn in its place
        refused = not current and bool(selected_keys())
        index = options.index(current[0]) if current else None if refused else 0
        if current and st.session_state.get(key) == current[0]:
            st.session_state[key], index = current[0], 0
        choice = st.selectbox(label, options, index=index, format_func=fmt, key=key, placeholder=t("choose_option"))
        picked = [] if choice is None else [choice]
        if picked and current[:1] != picked:
            set_selected(picked + [k for k in current if k != picked[0]])
    if len(picked) < min_runs:
        st.info(t("pick_one") if min_runs == 1 else t("pick_at_least", n=min_runs))
        return []
    out = []
    for k in picked:
        try:  # discovery is cached for a moment; a run deleted since then is reported, not raised
            out.append((k, paths.resolve_run(data.roots(), k)))
        except paths.PathRefused as e:
            st.error(escape_md(i18n.path_text(str(e), lang())), icon="🚫")
    return out if len(out) >= min_runs else []


def open_snapshot(key: str, path: Path):
    """Open and refresh a run, or show why it cannot be read and return None."""
    try:
        return data.snapshot(path)
    except RunError as e:
        st.error(escape_md(t("cannot_open", key=key, error=e)))
        return None


def diagnosis_or_error(snap, live_path: Path | None = None):
    """The run's diagnosis for shading and lists, in the chosen language; when the engine fails, an error
    line and None. live_path: the run's path on the Live page, which takes the newest diagnosis finished
    (`data.live_diagnosis`) rather than wait for this version's."""
    try:
        d = data.diagnosis(snap) if live_path is None else data.live_diagnosis(snap, live_path)
    except data.DiagnosisFailed as e:
        st.error(escape_md(e))
        return None
    return None if d is None else i18n.localise(d, lang())


def run_header(key: str, snap) -> None:
    run = snap.run
    st.subheader(escape_md(run.name))
    last = snap.metrics["step"].iloc[-1] if len(snap.metrics) else "none"
    beat = run.last_update
    last = t("none") if last == "none" else last
    st.caption(escape_md(t("run_caption", key=key, source=run.meta.source,
                           status=f"{STATUS_ICONS.get(run.status, '')} {status_word(run.status)}", last=last,
                           ago=ago(beat, lang=lang()))))
    # Why the run ended, shown here once for every page, whole: wrapped (a guard's reason names the step, the
    # rule and the finding's title, longer than the column) and verbatim (an error's lines stay lines).
    if run.status == "running" and (phase := phase_text(run.meta.phase, lang())):  # e.g. its warm start
        st.progress(phase[1] or 0.0, text=escape_md(phase[0]))
    if reason := run.meta.error or (t("stopped_by_guard") if run.status == "stopped" else None):
        st.code(reason, language="text", wrap_lines=True)
    if run.problems:
        with st.expander(t("read_problems", n=len(run.problems))):
            st.code("\n".join(i18n.note_text(str(p), lang()) for p in run.problems), language="text",
                    wrap_lines=True)  # long notes wrap


PAGE_FILES = {"checklist": "views/checklist.py", "samples": "views/samples.py", "config": "views/config.py",
              "diagnosis": "views/diagnosis.py", "runs": "views/runs.py", "compare": "views/compare.py",
              "live": "views/live.py"}


def link(page: str, label: str, keys: str | list[str], params: dict | None = None) -> None:
    """A link to another page with these runs selected and the page's parameters in the URL."""
    target = PAGE_FILES.get(page)
    if target is None:
        return
    query = {"run": [keys] if isinstance(keys, str) else list(keys), **{k: str(v) for k, v in (params or {}).items()}}
    if LANG in st.session_state:
        query["lang"] = st.session_state[LANG]
    st.page_link(target, label=label, query_params=query, icon="➡️")
