"""The clip case tables are VTK's: re-derived from the installed VTK's table-based clip."""

import pytest

from daxpy.worklets._clip_tables import CLIP

from clip_table_source import CLIP_KINDS, derive

pytest.importorskip("vtk")


@pytest.mark.parametrize("kind", CLIP_KINDS)
def test_clip_tables_are_vtks(kind):
    assert CLIP[kind] == derive(kind)
