"""The demo's PNG tells the truth: the pipeline's final output, unlit, titled by name,
and beside it the isosurface.

Lit slices shift colours away from the colour bar (shading multiplies them), so
the check is that almost every coloured pixel of the slices' view (the left half)
is a colour of the colour map itself: about 93% of them are here, and about 7%
when the same slices are lit (the rest are the anti-aliased edges of slices,
outline and text). The right half shows the isosurface, in one lit colour.
"""

import numpy as np
import pytest

pytest.importorskip("pyvista")
matplotlib = pytest.importorskip("matplotlib")
image = pytest.importorskip("matplotlib.image")

from daxpy.cli.demo import SHOWN_FIELD, SHOWN_TITLE, run_demo  # noqa: E402


def _share_of_colour_map_pixels(path) -> float:
    picture = image.imread(path)[..., :3]
    pixels = picture[:, : picture.shape[1] // 2].reshape(-1, 3)
    coloured = pixels[np.ptp(pixels, axis=1) >= 0.05]  # not white, black or grey
    lut = matplotlib.colormaps["viridis"](np.linspace(0, 1, 256))[:, :3]
    distance = np.linalg.norm(coloured[:, None, :] - lut[None], axis=2).min(axis=1)
    return float(np.mean(distance < 0.02))


def test_the_demo_png_shows_the_final_output_unlit(tmp_path):
    result = run_demo(size=24, out_dir=tmp_path, backend="cpu")
    assert result.png_path is not None, result.render_error
    assert SHOWN_FIELD in result.dataset.cell_data  # the last filter's output
    assert SHOWN_TITLE.startswith(SHOWN_FIELD)
    assert _share_of_colour_map_pixels(result.png_path) > 0.85
    right = image.imread(result.png_path)[..., :3]
    right = right[:, right.shape[1] // 2:].reshape(-1, 3)
    surface = np.ptp(right, axis=1) >= 0.05  # the tan isosurface, not white or black
    assert surface.mean() > 0.02
    assert result.vtp_path.is_file()
