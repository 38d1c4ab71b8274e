"""SVG bytes are a function of the figure alone, even if other code resets matplotlib's rcParams
while a picture is drawn."""

import pytest

pytest.importorskip("matplotlib")

from pgstudio import examples  # noqa: E402
from pgstudio.render._figure import SVG_RC, to_svg  # noqa: E402
from pgstudio.render.barriers import comparison_figure  # noqa: E402


def test_the_same_figure_gives_the_same_svg_with_text_as_text():
    a = to_svg(comparison_figure(examples.merge_copy()))
    b = to_svg(comparison_figure(examples.merge_copy()))
    assert a == b and a.count("<text") > 10 and "<use xlink:href=\"#DejaVuSans" not in a


def test_a_reset_of_rcparams_during_the_draw_is_drawn_again():
    import matplotlib
    from matplotlib.artist import Artist

    fig = comparison_figure(examples.merge_copy())
    want = to_svg(fig)
    resets = []

    class Resetter(Artist):
        """Restores matplotlib's defaults while the figure draws, the first time only."""

        def draw(self, renderer):
            if not resets:
                resets.append(1)
                matplotlib.rcParams.update({k: matplotlib.rcParamsDefault[k] for k in SVG_RC})

    fig.add_artist(Resetter())
    got = to_svg(fig)
    assert resets == [1] and got == want

    class AlwaysResets(Artist):
        def draw(self, renderer):
            matplotlib.rcParams.update({k: matplotlib.rcParamsDefault[k] for k in SVG_RC})

    fig.add_artist(AlwaysResets())
    with pytest.raises(RuntimeError, match="changed during 3 drawings"):
        to_svg(fig)
