"""Installation script of bob_boost."""
import re
from pathlib import Path

from setuptools import find_packages, setup

HERE = Path(__file__).parent
VERSION = re.search(r'__version__ = "([^"]+)"', (HERE / "bob_boost" / "__init__.py").read_text()).group(1)

setup(
    name="bob_boost",
    version=VERSION,
    description="Boosting with pluggable losses, weak machines and trainers, in the style of bob.learn.boosting",
    long_description=(HERE / "README.md").read_text(encoding="utf-8"),
    long_description_content_type="text/markdown",
    license="BSD-3-Clause",
    packages=find_packages(include=["bob_boost", "bob_boost.*"]),
    python_requires=">=3.9",
    install_requires=["numpy>=1.22", "scipy>=1.8", "h5py>=3.6", "threadpoolctl>=3.1"],
    extras_require={
        # the suite also exercises the optional front doors, so it installs them
        "test": ["pytest>=7", "scikit-learn>=1.6", "pandas>=2", "matplotlib>=3.5", "tqdm>=4.60"],
        "sklearn": ["scikit-learn>=1.6"],
        "doc": ["sphinx>=7", "myst-parser>=2"],
        "plot": ["matplotlib>=3.5"],
        "progress": ["tqdm>=4.60"],
        "bench": ["scikit-learn>=1.3", "lightgbm>=4.0"],
    },
    entry_points={"console_scripts": ["bob-boost=bob_boost.cli:main"]},
)
