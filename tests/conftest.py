"""Shared fixtures: small real data sets and bob's own model files, shipped in tests/data.

Before numpy is loaded, the suite selects OpenBLAS's SkylakeX kernels where the CPU can run them (see
:func:`_reference_openblas_kernel`).
"""
from __future__ import annotations

import builtins
import gzip
import os
import sys
from pathlib import Path

# cpu_flags sits beside this file; import it whatever pytest's import mode
sys.path.insert(0, str(Path(__file__).resolve().parent))
from cpu_flags import has_avx512  # noqa: E402

#: OpenBLAS kernels that compute as the ones the golden files and bob's expected weights were met with.
REFERENCE_KERNELS = ("SkylakeX", "Cooperlake", "SapphireRapids")

def _reference_openblas_kernel() -> str | None:
    """Set ``OPENBLAS_CORETYPE=SkylakeX`` for this process and its children when the CPU has AVX-512;
    return the value it replaced (None when nothing changed).

    scipy's L-BFGS-B works through OpenBLAS, whose kernel changes the last bits of its dot products and
    hence where L-BFGS stops: with ``OPENBLAS_CORETYPE=Haswell`` (which some machines set) on an AMD
    Zen 4, bob's own LUT test (``bob_suite/test_boosting.py::test03_multi_shared``) gets weights 3e-5
    from bob's (the true minimiser is 3e-5 from both), and 7 golden models differ by up to 1.4e-8.
    Users' models differ the same way between such machines; the suite pins the kernel so that its exact
    comparisons compare bob_boost's code, not the CPU. Elsewhere the golden tests allow the difference.
    """
    current = os.environ.get("OPENBLAS_CORETYPE")
    if current in REFERENCE_KERNELS or "numpy" in sys.modules or not has_avx512(unknown=False):
        return None
    os.environ["OPENBLAS_CORETYPE"] = "SkylakeX"
    return current or "(unset)"


_REPLACED_KERNEL = _reference_openblas_kernel()


#: bob's own test whose hard-coded weights are met only with AVX-512 numpy and OpenBLAS code paths.
BOB_LBFGS_WEIGHTS_TEST = "bob_suite/test_boosting.py::TestBoosting::test03_multi_shared"

import numpy as np  # noqa: E402  (after the kernel is chosen)
import pytest  # noqa: E402


def pytest_collection_modifyitems(config, items) -> None:
    """Expect bob's ``test03_multi_shared`` to miss bob's weights on a CPU without AVX-512.

    bob's test compares the weights of an L-BFGS-B run with SciPy's default tolerances (projected
    gradient 1e-5) to bob's printed ones with ``numpy.allclose`` (1e-5 relative). Without AVX-512,
    numpy's ``exp``/``log1p`` and OpenBLAS run other code, whose last bits move where L-BFGS-B stops:
    on an AVX2 AMD EPYC the fourth weight came out 2.1e-5 from bob's, 1.3e-5 from the true minimiser,
    which bob's own weight misses by 3.4e-5. ``test_bob_compat.py`` checks these weights against the
    minimiser on every CPU.
    """
    if has_avx512(unknown=True):  # nothing known (not Linux): nothing marked
        return
    reason = ("bob's expected weights are those of L-BFGS-B at SciPy's default tolerance on an AVX-512 "
              "code path; without AVX-512 it stops ~2e-5 away (see tests/conftest.py)")
    for item in items:
        if item.nodeid.endswith(BOB_LBFGS_WEIGHTS_TEST):
            item.add_marker(pytest.mark.xfail(reason=reason, strict=False))


def pytest_report_header(config) -> str | None:
    """Say when the suite changed OpenBLAS's kernel."""
    if _REPLACED_KERNEL is None:
        return None
    return f"OPENBLAS_CORETYPE: SkylakeX for the suite (was {_REPLACED_KERNEL}; see tests/conftest.py)"

DATA = Path(__file__).resolve().parent / "data"


def load_uci(name: str) -> tuple[np.ndarray, np.ndarray]:
    """Features and raw labels of a UCI set shipped in ``tests/data/uci``."""
    path = DATA / "uci" / f"{name}.tsv.gz"
    with gzip.open(path, "rt") as stream:
        table = np.loadtxt(stream, delimiter="\t", skiprows=1)
    return table[:, :-1], table[:, -1]


@pytest.fixture(scope="session")
def ionosphere() -> tuple[np.ndarray, np.ndarray]:
    """Ionosphere: 351 samples, 34 float features, targets -1/+1."""
    features, labels = load_uci("ionosphere")
    return features, np.where(labels == labels.max(), 1.0, -1.0)


@pytest.fixture(scope="session")
def mnist_fixture_dir() -> Path:
    """Folder of machines saved by bob.learn.boosting itself."""
    return DATA / "bob_models"


@pytest.fixture
def no_matplotlib(monkeypatch):
    """Make ``import matplotlib`` fail, as on a machine without the plot extra."""
    real_import = builtins.__import__

    def blocked(name, *args, **kwargs):
        if name.startswith("matplotlib"):
            raise ImportError("No module named 'matplotlib'")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", blocked)


@pytest.fixture
def read_on_workers_only(monkeypatch):
    """``read_on_workers_only(name)`` makes the lazy file reader's task ``name`` fail when it runs in the test's
    own process (the Dask client), so that a test shows the workers read the data file themselves."""
    import os

    from bob_boost.dask import _files

    client_pid = os.getpid()

    def patch(name: str) -> None:
        real = getattr(_files, name)

        def read(*args):  # a closure: pickled by value, so the workers run it too
            if os.getpid() == client_pid:
                raise AssertionError("the client process read rows of the data file")
            return real(*args)

        monkeypatch.setattr(_files, name, read)
    return patch


@pytest.fixture(scope="module")
def client():
    """A client of a local Dask cluster of 2 worker processes, one per test module that asks for it (a test may
    kill a worker, which must not reach other modules)."""
    distributed = pytest.importorskip("distributed", reason="distributed training needs the dask extra")
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None,
                                  silence_logs=40) as cluster, distributed.Client(cluster) as client:
        yield client
