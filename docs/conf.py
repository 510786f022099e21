"""Sphinx configuration of daxpy's documentation (``python -m sphinx -W docs docs/_build/html``).

The gallery's examples run at small sizes and render off-screen (PyVista's
scraper for 3-D scenes, matplotlib's for plots); ``DAXPY_DOCS_SIZE`` sets their
grid size (default 32).
"""

import os

import pyvista

import daxpy

pyvista.OFF_SCREEN = True
pyvista.BUILDING_GALLERY = True
os.environ.setdefault("DAXPY_BACKEND", "cpu")  # the same pictures with or without a GPU

project = "daxpy"
author = "The daxpy developers"
copyright = "2026, The daxpy developers"
release = version = daxpy.__version__

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "numpydoc",
    "sphinx_gallery.gen_gallery",
]

exclude_patterns = ["_build", "examples/README.txt", "auto_examples/*.ipynb",
                    "auto_examples/*.py", "auto_examples/*.zip", "auto_examples/*.md5",
                    "auto_examples/*.json"]
html_theme = "pydata_sphinx_theme"
html_title = "daxpy"
html_theme_options = {"navigation_with_keys": False, "show_toc_level": 2}

autosummary_generate = True
autodoc_default_options = {"members": True, "inherited-members": False}
numpydoc_show_class_members = False
numpydoc_xref_param_type = False
numpydoc_validation_checks: set = set()
suppress_warnings = ["config.cache"]

sphinx_gallery_conf = {
    "examples_dirs": "examples",
    "gallery_dirs": "auto_examples",
    "filename_pattern": r"/plot_",
    "image_scrapers": ("matplotlib", pyvista.Scraper()),
    "download_all_examples": False,
    "remove_config_comments": True,
    "within_subsection_order": "FileNameSortKey",
    "write_computation_times": False,
}
