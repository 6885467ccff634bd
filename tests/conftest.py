"""Shared fixtures: small real data sets, bob's own model files, and the Dask clusters of the distributed tests.

``--run-long`` adds the tests marked ``long`` (``python -m pytest -q tests --run-long -m long`` runs only them):
the large counts of the randomised and fault-injection loops, whose small fixed counts run in every suite, and
the tests of several seconds each (about 2.5 s or more, all cases together, with a warm numba cache on a 2-core
AMD EPYC): the cluster of worker processes, most trainings on a Dask cluster compared with memory, the command
line's subprocesses and installs. What stays is the suite a contributor runs before every commit, every
default through every front door included; ``.ci/run`` runs both.
"""
from __future__ import annotations

import builtins
import contextlib
import gzip
import os
import signal
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

#: bob's own test whose hard-coded weights are one L-BFGS-B run's stop, met only with the OpenBLAS kernels bob's
#: numbers were printed with.
BOB_LBFGS_WEIGHTS_TEST = "bob_suite/test_boosting.py::TestBoosting::test03_multi_shared"

#: OpenBLAS kernels under which SciPy's L-BFGS-B stops where it stopped for bob's printed weights.
BOB_KERNELS = frozenset({"skylakex", "cooperlake", "sapphirerapids"})


def openblas_kernels() -> frozenset[str]:
    """The kernel names (lower case) of the OpenBLAS libraries numpy and SciPy loaded."""
    import scipy.optimize  # noqa: F401  (loads SciPy's OpenBLAS)
    from threadpoolctl import threadpool_info

    return frozenset(str(info.get("architecture", "")).lower() for info in threadpool_info()
                     if info.get("internal_api") == "openblas")


def pytest_addoption(parser) -> None:
    parser.addoption("--run-long", action="store_true", default=False,
                     help="also run the tests marked long (large counts of randomised and fault-injection loops)")


def pytest_configure(config) -> None:
    config.addinivalue_line("markers", "long: a large count of a loop the suite runs at a small count, or a "
                                       "test of several seconds; runs with --run-long only")
    if config.getoption("--run-long"):
        # test_properties.py's profile with twice the examples (read when the file is imported)
        os.environ.setdefault("BOB_BOOST_HYPOTHESIS_PROFILE", "ci-long")


@pytest.hookimpl(tryfirst=True)  # before -m selects by marker
def pytest_collection_modifyitems(config, items) -> None:
    """Leave out the ``long`` tests without ``--run-long`` (with it, the property tests of test_properties.py, which
    then draw twice the examples, count as long tests too); run the tests on the worker-process cluster last; expect
    bob's ``test03_multi_shared`` to miss bob's printed weights under other OpenBLAS kernels.

    The worker processes load the kernels the tests before them compiled into numba's cache instead of compiling
    them again, each on its own.

    bob's test compares the weights of an L-BFGS-B run with SciPy's default tolerances (projected gradient 1e-5)
    to bob's printed ones with ``numpy.allclose`` (1e-5 relative). Other OpenBLAS kernels (another CPU's, or
    ones the machine's environment selects) and numpy's ``exp``/``log1p`` without AVX-512 round otherwise,
    which moves where L-BFGS-B stops: with Haswell kernels a weight came out 3.4e-5 from bob's, and on an AVX2
    AMD EPYC 2.1e-5 (the true minimiser being 1.5e-5 to 3.4e-5 from bob's numbers). ``test_bob_compat.py``
    checks the fitted weights and bob's against the true minimiser under every kernel.
    """
    if config.getoption("--run-long"):
        for item in items:
            if item.path.name == "test_properties.py" and getattr(getattr(item, "obj", None), "is_hypothesis_test",
                                                                   False):
                item.add_marker(pytest.mark.long)
    else:
        kept = [item for item in items if item.get_closest_marker("long") is None]
        if len(kept) < len(items):
            config.hook.pytest_deselected(items=[item for item in items if item.get_closest_marker("long")])
            items[:] = kept
    items.sort(key=lambda item: "process_cluster" in getattr(item, "fixturenames", ()))
    kernels = openblas_kernels()
    if not kernels or not kernels <= BOB_KERNELS:  # another kernel, or a BLAS other than OpenBLAS
        reason = ("bob's expected weights are where L-BFGS-B at SciPy's default tolerance stops with OpenBLAS's "
                  "SkylakeX kernels; with others it stops up to ~3e-5 away (see tests/conftest.py)")
        for item in items:
            if item.nodeid.endswith(BOB_LBFGS_WEIGHTS_TEST):
                item.add_marker(pytest.mark.xfail(reason=reason, strict=False))


#: A session of at least this many tests compiles the largest kernels on a second core meanwhile.
WARM_UP_TESTS = 100


def _cores() -> int:
    """The number of cores this process may run on."""
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)


def pytest_collection_finish(session) -> None:
    """Have the largest kernels compiled into numba's on-disk cache once, early, when the session is large: the
    tests then load them instead of compiling them (from a cold cache about a minute of compiling).

    In a pytest-xdist worker, each worker compiles its share of ``tests/compile_kernels.py``'s parts before its
    first test and waits for the others' (:func:`_compile_share`), so that no kernel is compiled by two workers
    at once. In one process (``-n 0``) on a machine with a core to spare, a child process runs
    ``tests/compile_kernels.py`` while the tests run; it imports the bob_boost the tests import."""
    if len(session.items) < WARM_UP_TESTS:
        return
    if hasattr(session.config, "workerinput"):
        session.config.stash[_SHARE_MARKER] = _compile_share(session.config.workerinput)
        return
    if _cores() < 2:
        return
    import bob_boost

    root = str(Path(bob_boost.__file__).resolve().parents[1])
    environment = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [root, os.environ.get("PYTHONPATH")])))
    session.config.stash[_WARM_UP] = subprocess.Popen(
        [sys.executable, str(Path(__file__).resolve().parent / "compile_kernels.py")], env=environment,
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


#: The longest a pytest-xdist worker waits for the other workers' shares of the kernels (seconds).
SHARE_TIMEOUT = 300


def _compile_share(workerinput: dict) -> Path:
    """Compile this worker's share of :data:`compile_kernels.PARTS` (every ``workercount``-th part, from its
    index), then wait until every worker has compiled its own (or :data:`SHARE_TIMEOUT`): with a warm cache,
    loading them takes a second or two. A failed part only costs the time it would have saved. Returns the
    marker file that says this worker's share is done (removed when the worker's session ends)."""
    import tempfile
    import time

    sys.path.insert(0, str(Path(__file__).resolve().parent))
    try:
        import compile_kernels
    finally:
        sys.path.pop(0)
    index, count = int(workerinput["workerid"].removeprefix("gw")), int(workerinput["workercount"])
    for part in compile_kernels.PARTS[index::count]:
        try:
            part()
        except Exception:  # noqa: BLE001 (the tests that need the kernel compile it and report any error)
            pass
    folder = Path(tempfile.gettempdir()) / f"bob_boost_kernels_{workerinput['testrunuid']}"
    folder.mkdir(exist_ok=True)
    marker = folder / f"{index}.done"
    marker.touch()
    deadline = time.monotonic() + SHARE_TIMEOUT
    while len(list(folder.glob("*.done"))) < count and time.monotonic() < deadline:
        time.sleep(0.2)
    return marker


def pytest_sessionfinish(session) -> None:
    """Stop the compiling child if it still runs; remove a worker's marker of its compiled share (and the
    markers' folder, when it is the last)."""
    marker = session.config.stash.get(_SHARE_MARKER, None)
    if marker is not None:
        marker.unlink(missing_ok=True)
        with contextlib.suppress(OSError):  # another worker's marker is still there
            marker.parent.rmdir()
    child = session.config.stash.get(_WARM_UP, None)
    if child is not None and child.poll() is None:
        child.terminate()
        try:
            child.wait(timeout=10)
        except subprocess.TimeoutExpired:
            child.kill()
            child.wait()


def pytest_terminal_summary(terminalreporter, config) -> None:
    """Say when the compiling child failed (it only saves time; run it by hand to see why)."""
    child = config.stash.get(_WARM_UP, None)
    if child is not None and child.returncode not in (0, -signal.SIGTERM, -signal.SIGKILL):
        terminalreporter.write_line(f"tests/compile_kernels.py exited with {child.returncode}: some kernels were "
                                    f"not compiled ahead (python tests/compile_kernels.py says which)")


_WARM_UP = pytest.StashKey[subprocess.Popen]()
_SHARE_MARKER = pytest.StashKey[Path]()

#: The most pytest-xdist workers ``-n auto`` starts: each starts its own Dask clusters and compiles (or loads) the
#: kernels its tests need.
MAX_WORKERS = 4


def pytest_xdist_auto_num_workers(config) -> int:
    """``-n auto`` (pyproject.toml's addopts): one worker per core this process may use, at most
    :data:`MAX_WORKERS`."""
    return max(1, min(_cores(), MAX_WORKERS))


DATA = Path(__file__).resolve().parent / "data"


def features_with_nan(n: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """(n, 4) float features with NaN in two columns, and the noisy score behind the targets: NaN where the first
    feature would have said most (a split must learn which side NaN goes to), and at random in the second."""
    rng = np.random.default_rng(seed)
    features = np.round(rng.normal(size=(n, 4)), 2)
    score = features[:, 0] + features[:, 1] + rng.normal(0, 0.5, n)
    features[(score > 1.0) & (rng.random(n) < 0.5), 0] = np.nan
    features[rng.random(n) < 0.1, 1] = np.nan
    return features, score


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


#: How long, in seconds, a test on :func:`process_cluster` waits for a worker killed by an earlier test to be back.
WORKER_RETURN_TIMEOUT = 120


@pytest.fixture
def read_on_workers_only(monkeypatch, process_session_client):
    """``read_on_workers_only(name)`` makes the row reader ``name`` of :mod:`bob_boost.io.row_files`, which the lazy
    file reader's tasks call, fail when the lazy reader calls it in the test's own process (the Dask client; the
    eager reader reads there), so that a test shows the workers read the data file themselves: the workers of
    :func:`process_cluster`, which the test reaches with :func:`process_client` or the cluster's address."""
    import os

    from bob_boost.io import row_files

    # a worker killed by an earlier test is back
    process_session_client.wait_for_workers(2, timeout=WORKER_RETURN_TIMEOUT)
    client_pid = os.getpid()

    def patch(name: str) -> None:
        real = getattr(row_files, name)

        def read(*args):  # a closure: pickled by value, so the workers run it too
            # the eager reader (bob_boost.io.tables), which the tests compare with, reads its rows here
            eager = sys._getframe(1).f_globals.get("__name__") == "bob_boost.io.tables"
            if os.getpid() == client_pid and not eager:
                raise AssertionError("the client process read rows of the data file")
            return real(*args)

        monkeypatch.setattr(row_files, name, read)
    return patch


def _local_cluster(processes: bool):
    distributed = pytest.importorskip("distributed", reason="distributed training needs the dask extra")
    # the scheduler's HTTP server on a free port: Dask's 8787 stays free for the clusters other tests start while
    # these live (a second server on it warns)
    return distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=processes,
                                    protocol="tcp" if processes else "inproc", dashboard_address=":0",
                                    silence_logs=40)


#: How often the session cluster's scheduler, workers and client send their batched messages (Dask: every 2 to
#: 10 ms). A distributed training waits on a few round trips a round, and the tests on thousands of them.
BATCH_INTERVAL = 0.001


def _send_batches_sooner(cluster, client) -> None:
    """Let the in-process cluster's batched streams (and ``client``'s) send every :data:`BATCH_INTERVAL` seconds:
    the messages and their order are the same, they wait less (half the distributed tests' time)."""
    streams = [getattr(client, "scheduler_comm", None)]
    scheduler = getattr(cluster, "scheduler", None)
    streams += [*getattr(scheduler, "stream_comms", {}).values(), *getattr(scheduler, "client_comms", {}).values()]
    streams += [getattr(worker, "batched_stream", None) for worker in getattr(cluster, "workers", {}).values()]
    for stream in streams:
        if isinstance(getattr(stream, "interval", None), float):
            stream.interval = min(stream.interval, BATCH_INTERVAL)


@pytest.fixture(scope="session")
def dask_cluster():
    """The session's local Dask cluster: 2 single-threaded workers in this process, which run the kernels this
    process compiled, reached in-process (``inproc://``: tasks and data are handed over, not pickled; the tests
    on :func:`process_cluster` pickle each kind of training over TCP)."""
    with _local_cluster(processes=False) as cluster:
        yield cluster


@pytest.fixture(scope="session")
def dask_session_client(dask_cluster):
    """A client of :func:`dask_cluster`, neither the default nor the current client."""
    distributed = pytest.importorskip("distributed", reason="distributed training needs the dask extra")
    with distributed.Client(dask_cluster, set_as_default=False) as client:
        _send_batches_sooner(dask_cluster, client)
        yield client


@pytest.fixture
def client(dask_session_client):
    """:func:`dask_session_client`, the current client during the test (``compute()`` runs on the cluster); no
    client is the default outside the tests that ask for one."""
    with dask_session_client.as_current():
        yield dask_session_client


@pytest.fixture(scope="session")
def process_cluster():
    """The session's local Dask cluster of 2 single-threaded worker processes, for the tests that kill a worker or
    show which process read a file. The tests asking for it run last (:func:`pytest_collection_modifyitems`), so
    that its workers load the compiled kernels from numba's cache. A killed worker's nanny starts another; the
    cluster waits for it as long as the tests do (:func:`process_client`), not Dask's 15 s, after which it would
    close the nanny for good, and which a worker process started under the full suite's load can take."""
    dask = pytest.importorskip("dask", reason="distributed training needs the dask extra")
    with dask.config.set({"distributed.deploy.lost-worker-timeout": f"{WORKER_RETURN_TIMEOUT}s"}), \
            _local_cluster(processes=True) as cluster:
        yield cluster


@pytest.fixture(scope="session")
def process_session_client(process_cluster):
    """A client of :func:`process_cluster`, neither the default nor the current client."""
    distributed = pytest.importorskip("distributed", reason="distributed training needs the dask extra")
    with distributed.Client(process_cluster, set_as_default=False) as client:
        _send_batches_sooner(process_cluster, client)  # the client's and scheduler's (the workers keep theirs)
        yield client


@pytest.fixture
def process_client(process_session_client):
    """:func:`process_session_client` with both workers up (one killed by an earlier test is back), the current
    client during the test."""
    process_session_client.wait_for_workers(2, timeout=WORKER_RETURN_TIMEOUT)
    with process_session_client.as_current():
        yield process_session_client
