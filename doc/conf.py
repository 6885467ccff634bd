"""Sphinx configuration: the guide is written in Markdown (MyST)."""
import re
from pathlib import Path

project = "bob_boost"
author = "bob_boost developers"
release = re.search(r'__version__ = "([^"]+)"',
                    (Path(__file__).resolve().parents[1] / "bob_boost" / "_version.py").read_text()).group(1)
extensions = ["myst_parser", "sphinx.ext.autodoc", "sphinx.ext.napoleon"]
source_suffix = {".md": "markdown"}
root_doc = "index"
exclude_patterns = ["_build"]
html_theme = "alabaster"
myst_heading_anchors = 3
