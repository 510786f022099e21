"""The clip case tables are VTK's: re-derived from the installed VTK's table-based clip."""

import pytest

from daxpy.worklets._clip_tables import CLIP, CLIP_INSIDE_OUT

from clip_table_source import CLIP_KINDS, derive

pytest.importorskip("vtk")


@pytest.mark.parametrize("kind", CLIP_KINDS)
@pytest.mark.parametrize("inside_out", [False, True])
def test_clip_tables_are_vtks(kind, inside_out):
    assert (CLIP_INSIDE_OUT if inside_out else CLIP)[kind] == derive(kind, inside_out)
