"""
Gradient and a Q-criterion isosurface
=====================================

The gradient of VTK's wavelet field, then the Q-criterion of that gradient
(seen as a velocity field): where rotation dominates strain, ``Q > 0``.
"""

import os

import numpy as np
import pyvista as pv

from daxpy.cli.demo import wavelet
from daxpy.filters import Gradient

size = int(os.environ.get("DAXPY_DOCS_SIZE", "32"))
grid = wavelet(size)
grid = Gradient("RTData", result="velocity")(grid)
grid = Gradient("velocity", result="velocity_gradient", qcriterion="Q")(grid)
print(grid)

# %%
# The Q-criterion is a daxpy output; the isosurface is PyVista's contour of it.
mesh = grid.to_pyvista()
q = mesh.point_data["Q"]
surface = mesh.contour([np.percentile(q, 90)], scalars="Q")
plotter = pv.Plotter()
plotter.add_mesh(mesh.outline(), color="black")
plotter.add_mesh(surface, color="tan", smooth_shading=True)
plotter.add_text("Q-criterion of the wavelet's gradient, 90th percentile", font_size=10)
plotter.show()
