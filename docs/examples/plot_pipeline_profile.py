"""
A pipeline and its profile
==========================

A lazy pipeline, run once; ``profile=True`` returns what each stage cost.
"""

import os

import matplotlib.pyplot as plt

import daxpy
from daxpy.cli.demo import wavelet

size = int(os.environ.get("DAXPY_DOCS_SIZE", "32"))
pipe = daxpy.pipeline(wavelet(size))
speed = pipe.gradient("RTData").magnitude()
cells = speed.map("sqrt(x) + 1").point_to_cell()
out, profile = pipe.run(outputs=[cells], profile=True)
print(profile)

# %%
# Each stage's time, as the profile reports it.
fig, ax = plt.subplots(figsize=(6, 3))
ax.barh([f"{r.index} {r.verb}" for r in profile.stages], [r.time_ms for r in profile.stages])
ax.invert_yaxis()
ax.set_xlabel("time, ms")
ax.set_title(f"pipeline stages on a {size}^3 wavelet")
fig.tight_layout()
plt.show()
