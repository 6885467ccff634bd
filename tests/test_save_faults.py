"""Fault injection on save: a writer killed at random moments, and a full disk, for models and cascades.

``BoostedMachine.save(path)`` (and ``Cascade.save``, through the same ``atomic_file``) builds the
file in memory, writes it to a temporary file next to ``path`` (``.bob_boost-<random>.hdf5.tmp``),
syncs it and renames it over ``path``. What the tests show:

- a writer process killed with SIGKILL at any moment leaves ``path`` holding the old model or the
  new one, loadable, never a mixture; a killed process cannot delete its temporary file, so one may
  be left, recognisable by its name (nothing deletes it automatically: another process may be
  writing it, see ``doc/reliability.md``);
- a write that fails for lack of space (``RLIMIT_FSIZE`` in a child process, so no root is needed)
  raises an ``OSError`` whose message names ``path``, removes the temporary file and leaves the old
  model intact.
"""
from __future__ import annotations

import errno
import multiprocessing
import os
import resource
import signal
import time
from pathlib import Path

import numpy as np
import pytest

from bob_boost import BoostedMachine, StumpMachine
from bob_boost.vision import Cascade, HaarFeatures

#: The writer is a forked copy of the test process: the machine is already built and bob_boost
#: imported, so the kill delays measure the save alone.
FORK = multiprocessing.get_context("fork")


def stumps(count: int, seed: int) -> BoostedMachine:
    rng = np.random.default_rng(seed)
    machine = BoostedMachine(number_of_features=50, metadata={"loss": "exponential", "seed": seed})
    for _ in range(count):
        machine.add_weak_machine(StumpMachine(float(rng.normal()), int(rng.choice([-1, 1])), int(rng.integers(50))),
                                 float(rng.random()))
    return machine


def stump_cascade(count: int, seed: int) -> Cascade:
    """A cascade of ``count`` random stumps in stages of at most 100 over a 24x24 window's features."""
    rng = np.random.default_rng(seed)
    features = HaarFeatures.all((24, 24), stride=4)
    stages = []
    for start in range(0, count, 100):
        machine = BoostedMachine()
        for _ in range(min(100, count - start)):
            machine.add_weak_machine(StumpMachine(float(rng.normal()), int(rng.choice([-1, 1])),
                                                  int(rng.integers(len(features)))), float(rng.random()))
        stages.append((machine, float(rng.normal())))
    return Cascade(features, stages, metadata={"seed": seed})


#: What is saved: (old, new, full-disk new) objects' makers, and how a file is read back.
WRITERS = {"model": (lambda: stumps(3, 1), lambda: stumps(1500, 2), lambda: stumps(300, 2), BoostedMachine.load),
           "cascade": (lambda: stump_cascade(3, 1), lambda: stump_cascade(1500, 2), lambda: stump_cascade(300, 2),
                       Cascade.load)}


def same(first, second) -> bool:
    """Whether two machines, or two cascades, hold the same weak machines, weights and thresholds."""
    if isinstance(first, Cascade):
        return len(first) == len(second) and all(
            same(a, b) and s == t for (a, s), (b, t) in zip(first.stages, second.stages))
    return first.weak_machines == second.weak_machines and np.array_equal(first.weights, second.weights)


def temporaries(directory: Path) -> list[str]:
    return sorted(name for name in os.listdir(directory) if name.startswith(".bob_boost-") and name.endswith(".tmp"))


def _save(machine, path: str) -> None:
    machine.save(path)


@pytest.mark.parametrize("kind, kills", [("model", 6), ("cascade", 4),
                                         pytest.param("model", 30, marks=pytest.mark.long),
                                         pytest.param("cascade", 15, marks=pytest.mark.long)])
def test_writer_killed_at_random_moments_leaves_the_old_or_the_new_model(tmp_path, kind, kills):
    """``kills`` writers killed: two at once, the others at seeded moments spread over 1.2 times a save (the
    suite's few; ``--run-long`` adds the many)."""
    target = tmp_path / "model.hdf5"
    make_old, make_new, _, load = WRITERS[kind]
    old, new = make_old(), make_new()
    old.save(target)
    old_bytes = target.read_bytes()
    reference = tmp_path / "reference" / "new.hdf5"
    reference.parent.mkdir()
    started = time.perf_counter()
    new.save(reference)
    duration = time.perf_counter() - started
    new_bytes = reference.read_bytes()
    assert duration > 0.1, f"the save takes {duration:.3f} s: too short to be interrupted"
    rng = np.random.default_rng(19)
    # kills spread over the save and a little beyond it (the save may then have finished)
    delays = np.concatenate([[0.0, 0.001], rng.uniform(0.0, 1.2 * duration, size=kills - 2)])
    seen = {"old": 0, "new": 0}
    left = 0
    for delay in delays.tolist():
        writer = FORK.Process(target=_save, args=(new, str(target)))
        writer.start()
        time.sleep(delay)
        os.kill(writer.pid, signal.SIGKILL)
        writer.join()
        content = target.read_bytes()
        if content == old_bytes:
            seen["old"] += 1
            state = "old"
        else:
            assert content == new_bytes, f"killed after {delay:.3f} s: the target is neither model"
            seen["new"] += 1
            state = "new"
        leftovers = temporaries(tmp_path)
        assert len(leftovers) <= 1 and sorted(os.listdir(tmp_path)) == sorted(["model.hdf5", "reference", *leftovers])
        left += len(leftovers)
        for name in leftovers:  # what a user does with a killed writer's leftover
            os.remove(tmp_path / name)
        if state == "new":  # back to the old model for the next kill
            target.write_bytes(old_bytes)
    assert seen["old"] >= kills // 3, seen  # most kills land during the save
    assert same(load(target), old)
    target.write_bytes(new_bytes)
    assert same(load(target), new)
    print(f"{kind}: {kills} kills over {duration:.2f} s saves: {seen}, {left} temporary file(s) left behind")


def _save_under_limit(machine, path: str, limit: int, connection) -> None:
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # the write then fails with EFBIG instead of killing us
    resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))
    try:
        machine.save(path)
        connection.send(None)
    except BaseException as error:
        connection.send((type(error).__name__, getattr(error, "errno", None), str(error)))


@pytest.mark.parametrize("kind", ["model", "cascade"])
@pytest.mark.parametrize("fraction", [0.0, 0.01, 0.5, 0.99])
@pytest.mark.long
def test_full_disk_raises_an_os_error_naming_the_file_and_keeps_the_old_one(tmp_path, fraction, kind):
    target = tmp_path / "model.hdf5"
    make_old, _, make_new, load = WRITERS[kind]
    old, new = make_old(), make_new()
    old.save(target)
    old_bytes = target.read_bytes()
    new.save(tmp_path / "size.hdf5")
    size = (tmp_path / "size.hdf5").stat().st_size
    os.remove(tmp_path / "size.hdf5")
    limit = int(fraction * size)
    receiving, sending = FORK.Pipe(duplex=False)
    writer = FORK.Process(target=_save_under_limit, args=(new, str(target), limit, sending))
    writer.start()
    writer.join(60)
    assert writer.exitcode == 0, f"the writer died (exit code {writer.exitcode})"
    answer = receiving.recv()
    assert answer is not None, f"saved {size} bytes under a {limit}-byte limit"
    kind, code, message = answer
    assert kind == "OSError" and code == errno.EFBIG, answer
    assert str(target) in message, message
    assert target.read_bytes() == old_bytes
    assert same(load(target), old)
    assert os.listdir(tmp_path) == ["model.hdf5"]  # the temporary file is gone
