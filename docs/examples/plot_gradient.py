"""
Gradient and a Q-criterion isosurface
=====================================

A Taylor-Green vortex velocity field, its Q-criterion (where rotation dominates
strain, ``Q > 0``) and the isosurface of Q, all computed by daxpy in one
pipeline: the gradient, Q and the contour run back to back, Q never leaving the
backend that computed it, and the surface comes back as a PolyData with the
velocity interpolated onto it.

``docs/qcriterion.png`` (shown in the README) is this example's picture at
``DAXPY_DOCS_SIZE=96``.
"""

import os

import numpy as np
import pyvista as pv

import daxpy

size = int(os.environ.get("DAXPY_DOCS_SIZE", "32"))
spacing = 2 * np.pi / (size - 1)
grid = daxpy.UniformGrid(dims=(size,) * 3, spacing=(spacing,) * 3)
x = grid.axis_coordinates(0)
X, Y, Z = x, x[:, None], x[:, None, None]
velocity = np.stack(np.broadcast_arrays(np.sin(X) * np.cos(Y) * np.cos(Z),
                                        -np.cos(X) * np.sin(Y) * np.cos(Z),
                                        0.0 * Z), axis=-1).reshape(-1, 3)
grid.point_data["velocity"] = velocity.astype(np.float32)

# %%
# One pipeline: gradient -> Q-criterion -> contour. The gradient asked for Q
# only gives Q's node; the contour ends the pipeline and makes a PolyData.
pipe = daxpy.pipeline(grid)
q = pipe.gradient("velocity", qcriterion=True, compute_gradient=False)
q.contour(values=[0.1], compute_normals=True)
surface, profile = pipe.run(profile=True)
print(profile)
print(surface)

# %%
# The surface is PyVista's to show: speed on the vortex tubes.
mesh = surface.to_pyvista()
mesh.point_data["speed"] = np.linalg.norm(mesh.point_data["velocity"], axis=1)
plotter = pv.Plotter()
plotter.add_mesh(grid.to_pyvista().outline(), color="black")
plotter.add_mesh(mesh, scalars="speed", cmap="viridis", smooth_shading=True)
plotter.add_text("daxpy: Q-criterion = 0.1 of a Taylor-Green vortex", font_size=10)
plotter.camera_position = "iso"
plotter.show()
