"""What running a notebook leaves in its file that is not worth keeping, and a Jupyter save hook
that removes it, so that using the studio in JupyterLab never makes a teaching notebook differ
from its committed form.

A run leaves widget views (their models live in the kernel: saved, a reader sees "model not
found"), widget state in the notebook's metadata (large, stale at once), execution timings, stream
text split however the kernel flushed it, and the running Python's version.  ``tidy`` removes
them -- ``notebooks/_build.py`` tidies its own runs with it, and ``pgstudio lab`` (``make lab``)
starts JupyterLab with ``pre_save_hook`` as the contents manager's pre-save hook (``SERVER_ARGS``),
so a save in Lab writes what a committed run holds.  ``run_traces`` names what a file still holds
of a run (the notebook tests use it to tell "you ran it" from "the outputs are stale").

Plain dictionaries in, no imports beyond the standard library: Jupyter calls the hook in its own
process with the notebook as JSON.
"""

from __future__ import annotations

from typing import Any

#: The mimetype of a widget view in a cell's output.
WIDGET = "application/vnd.jupyter.widget-view+json"
#: What a widget output says on a page without widgets when it has no HTML of its own.
NO_WIDGET = "(an interactive widget: run this notebook in JupyterLab or Voila to use it)"
#: The dotted name of the hook, as Jupyter's configuration takes it.
HOOK = f"{__name__}.pre_save_hook"
#: The command-line arguments that make a Jupyter server run the hook on every save.
SERVER_ARGS = (f"--ContentsManager.pre_save_hook={HOOK}",)


def tidy(nb: Any) -> Any:
    """``nb`` (a notebook as nbformat's node or plain JSON) without what a run leaves: widget
    views (the text or HTML the object gives for a page without widgets stays), widget state,
    execution timings, stream text split into pieces, the Python version.  Changed in place and
    returned; a tidy notebook is left as it is."""
    meta = nb.get("metadata", {})
    meta.pop("widgets", None)
    if isinstance(meta.get("language_info"), dict):
        meta["language_info"].pop("version", None)
    for cell in nb.get("cells", []):
        cell.get("metadata", {}).pop("execution", None)
        if cell.get("cell_type") != "code":
            continue
        outputs: list = []
        for o in cell.get("outputs", []):
            if o.get("output_type") == "stream" and outputs and outputs[-1].get("output_type") == "stream" \
                    and outputs[-1].get("name") == o.get("name"):
                outputs[-1]["text"] = _text(outputs[-1].get("text")) + _text(o.get("text"))
                continue
            data = o.get("data", {})
            if WIDGET in data:
                del data[WIDGET]
                if "text/html" not in data:
                    data["text/plain"] = NO_WIDGET
            outputs.append(o)
        cell["outputs"] = outputs
    return nb


def _text(text: Any) -> str:
    return "".join(text) if isinstance(text, list) else (text or "")


def run_traces(nb: Any) -> list[str]:
    """What ``nb`` still holds of a run in Jupyter, in words ("widget state in the notebook's
    metadata", "widget views in cells 3, 5", ...); empty for the file of one tidy run from the top.
    Execution counts other than 1, 2, ... in order (cells run again, or not all of them) are one."""
    found = []
    meta = nb.get("metadata", {})
    if "widgets" in meta:
        found.append("widget state in the notebook's metadata")
    if "version" in meta.get("language_info", {}):
        found.append("the running Python's version in the notebook's metadata")
    code = [(i, c) for i, c in enumerate(nb.get("cells", [])) if c.get("cell_type") == "code"]
    views = [i for i, c in code if any(WIDGET in o.get("data", {}) for o in c.get("outputs", []))]
    if views:
        found.append(f"widget views in cell{'s' if len(views) > 1 else ''} {', '.join(map(str, views))}")
    timed = [i for i, c in code if "execution" in c.get("metadata", {})]
    if timed:
        found.append(f"execution timings in cell{'s' if len(timed) > 1 else ''} {', '.join(map(str, timed))}")
    off = [(i, c.get("execution_count")) for n, (i, c) in enumerate(code, 1) if c.get("execution_count") != n]
    if off:
        shown = ", ".join(f"cell {i}: {n}" for i, n in off[:3]) + (", ..." if len(off) > 3 else "")
        found.append(f"execution counts of a partial or repeated run ({shown})")
    return found


def pre_save_hook(model: dict, path: str = "", contents_manager: Any = None, **kwargs: Any) -> None:
    """Jupyter's pre-save hook: a notebook is saved tidy (``tidy``); other files as they are."""
    if model.get("type") == "notebook" and isinstance(model.get("content"), dict):
        tidy(model["content"])
