"""The studio's one-click fix buttons, found by their label (shared by the studio tests)."""


def fix_button(studio, label):
    """The button of the fix labelled ``label`` in the studio's diagnostics pane."""
    for row in studio.diagnostics.rows:
        if row.diag is not None:
            for b, fx in zip(row.fix_buttons, row.diag.fixes):
                if fx.label == label:
                    return b
    raise AssertionError(f"no fix button {label!r}; have {studio.diagnostics.fix_labels}")
