"""
From PyVista: ``mesh.daxpy``
============================

PyVista's own filters, run by daxpy: same arguments, defaults and output
names, plus ``backend=``. Here beside PyVista's result on one of its shipped
examples.
"""

import numpy as np
import pyvista as pv
from pyvista import examples

mesh = examples.load_uniform()
ours = mesh.daxpy.compute_derivative(scalars="Spatial Point Data")
theirs = mesh.compute_derivative(scalars="Spatial Point Data")
print("largest difference:", np.abs(ours["gradient"] - theirs["gradient"]).max())

# %%
# The gradient's magnitude, as daxpy computed it.
ours.point_data["gradient magnitude"] = np.linalg.norm(ours["gradient"], axis=1)
plotter = pv.Plotter()
plotter.add_mesh(ours.slice_orthogonal(), scalars="gradient magnitude", lighting=False)
plotter.add_mesh(ours.outline(), color="black")
plotter.show()
