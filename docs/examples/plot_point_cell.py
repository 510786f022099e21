"""
Point to cell and back
======================

:class:`~daxpy.filters.PointToCell` averages a point field over each cell's
corners (as ``vtkPointDataToCellData``); :class:`~daxpy.filters.CellToPoint`
averages a cell field over the cells around each point. Unlit, so that the
colours are the colour bar's.
"""

import pyvista as pv
from pyvista import examples

from daxpy.filters import CellToPoint, PointToCell
from daxpy.io import from_pyvista

beam = from_pyvista(examples.load_hexbeam())
cells = PointToCell("sample_point_scalars", result="averaged")(beam)
points = CellToPoint("averaged", result="back")(cells)

plotter = pv.Plotter(shape=(1, 2))
for column, (name, data) in enumerate([("averaged", cells), ("back", points)]):
    plotter.subplot(0, column)
    plotter.add_mesh(data.to_pyvista(), scalars=name, lighting=False, show_edges=True,
                     scalar_bar_args={"title": name})
    plotter.add_text(f"{name}: {'cells' if name == 'averaged' else 'points'}", font_size=10)
plotter.link_views()
plotter.show()
