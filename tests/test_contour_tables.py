"""The contour case tables are VTK's: re-derived from the installed VTK's cells."""

import pytest

from daxpy.worklets._contour_tables import CASES, EDGES

from contour_table_source import CORNERS, derive

pytest.importorskip("vtk")


@pytest.mark.parametrize("kind", sorted(CORNERS))
def test_tables_are_vtks(kind):
    edges, cases = derive(kind)
    assert EDGES[kind] == edges
    assert CASES[kind] == cases


def test_every_case_is_listed_with_whole_cells():
    per = {"line": 1, "triangle": 2, "quad": 2, "pixel": 2}
    for kind, cases in CASES.items():
        assert len(cases) == 2 ** len(CORNERS[kind])
        assert all(len(case) % per.get(kind, 3) == 0 for case in cases)
        assert all(0 <= e < len(EDGES[kind]) for case in cases for e in case)
