"""Tests of bob_boost.datasets: IDX and HDF5 MNIST readers, the verified download, generated digits."""
import gzip
import hashlib
import io
from pathlib import Path

import h5py
import numpy as np
import pytest

from bob_boost import datasets

SHARED_MNIST = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "mnist" / "mnist_data.hdf5"
SMALL_MNIST = Path(__file__).resolve().parent / "data" / "mnist_small.hdf5"


def _small_mnist(seed=0):
    rng = np.random.default_rng(seed)
    return datasets.MNIST(rng.integers(0, 256, (30, 784), dtype=np.uint8), np.arange(30, dtype=np.uint8) % 10,
                          rng.integers(0, 256, (12, 784), dtype=np.uint8), np.arange(12, dtype=np.uint8) % 10)


def _write_idx_folder(folder: Path, data: datasets.MNIST, compress=True) -> dict:
    """Write the four MNIST files by hand (header bytes spelled out) and return {key: (name, sha256)}."""
    folder.mkdir(parents=True, exist_ok=True)
    files = {}
    for key, (name, _) in datasets.MNIST_FILES.items():
        array = getattr(data, key)
        if key.endswith("data"):
            array = array.reshape(-1, 28, 28)
        header = bytes([0, 0, 8, array.ndim]) + b"".join(int(n).to_bytes(4, "big") for n in array.shape)
        content = header + array.tobytes()
        if compress:
            content = gzip.compress(content)
        else:
            name = name[:-3]
        (folder / name).write_bytes(content)
        files[key] = (name, hashlib.sha256(content).hexdigest())
    return files


def test_read_idx_reads_hand_written_files_compressed_or_not(tmp_path):
    values = np.arange(24, dtype=np.uint8).reshape(2, 3, 4)
    header = bytes([0, 0, 8, 3, 0, 0, 0, 2, 0, 0, 0, 3, 0, 0, 0, 4])
    (tmp_path / "plain").write_bytes(header + values.tobytes())
    (tmp_path / "packed.gz").write_bytes(gzip.compress(header + values.tobytes()))
    np.testing.assert_array_equal(datasets.read_idx(tmp_path / "plain"), values)
    np.testing.assert_array_equal(datasets.read_idx(tmp_path / "packed.gz"), values)


def test_read_idx_big_endian_integers(tmp_path):
    header = bytes([0, 0, 0x0C, 1, 0, 0, 0, 2])
    (tmp_path / "ints").write_bytes(header + (258).to_bytes(4, "big") + (-1).to_bytes(4, "big", signed=True))
    assert datasets.read_idx(tmp_path / "ints").tolist() == [258, -1]


def test_write_idx_round_trip(tmp_path):
    array = np.linspace(-1, 1, 12).reshape(3, 4)
    datasets.write_idx(tmp_path / "a.gz", array)
    assert (tmp_path / "a.gz").read_bytes()[:2] == b"\x1f\x8b"
    np.testing.assert_array_equal(datasets.read_idx(tmp_path / "a.gz"), array)


@pytest.mark.parametrize("content, problem", [
    (b"\x01\x02\x08\x01\x00\x00\x00\x01\x00", "magic"),
    (bytes([0, 0, 8, 2, 0, 0, 0, 2, 0, 0, 0, 2, 1, 2, 3]), "announces"),
    (bytes([0, 0, 8, 3, 0, 0]), "truncated"),
])
def test_read_idx_rejects_bad_files(tmp_path, content, problem):
    (tmp_path / "bad").write_bytes(content)
    with pytest.raises(ValueError, match=problem):
        datasets.read_idx(tmp_path / "bad")


def test_read_idx_rejects_broken_gzip(tmp_path):
    (tmp_path / "broken.gz").write_bytes(gzip.compress(b"\x00\x00\x08\x01\x00\x00\x00\x05abcde")[:-10])
    with pytest.raises(ValueError, match="not a readable IDX"):
        datasets.read_idx(tmp_path / "broken.gz")


@pytest.mark.parametrize("compress", [True, False])
def test_load_mnist_from_idx_folder(tmp_path, compress):
    data = _small_mnist()
    _write_idx_folder(tmp_path, data, compress)
    loaded = datasets.load_mnist(tmp_path)
    for key in datasets.MNIST_FILES:
        np.testing.assert_array_equal(getattr(loaded, key), getattr(data, key))
    assert loaded.train_data.shape == (30, 784)


def test_load_mnist_idx_names_missing_file(tmp_path):
    with pytest.raises(FileNotFoundError, match="train-images-idx3-ubyte"):
        datasets.load_mnist_idx(tmp_path)


def test_load_mnist_hdf5_layout(tmp_path):
    data = _small_mnist(1)
    with h5py.File(tmp_path / "m.hdf5", "w") as handle:
        for split in ("train", "test"):
            handle[f"{split}/data"] = getattr(data, f"{split}_data")
            handle[f"{split}/labels"] = getattr(data, f"{split}_labels")
    loaded = datasets.load_mnist(tmp_path / "m.hdf5")
    np.testing.assert_array_equal(loaded.test_data, data.test_data)
    np.testing.assert_array_equal(loaded.train_labels, data.train_labels)
    with h5py.File(tmp_path / "m.hdf5", "a") as handle:
        del handle["test/labels"]
    with pytest.raises(ValueError, match="test/labels"):
        datasets.load_mnist(tmp_path / "m.hdf5")


def test_load_mnist_rejects_missing_path_and_non_hdf5(tmp_path):
    with pytest.raises(FileNotFoundError):
        datasets.load_mnist(tmp_path / "absent.hdf5")
    (tmp_path / "text.hdf5").write_text("no")
    with pytest.raises(ValueError, match="not a readable HDF5"):
        datasets.load_mnist(tmp_path / "text.hdf5")


def test_subset_keeps_first_images_of_each_digit():
    data = _small_mnist()
    subset = data.subset([3, 7], number_per_class=2)
    # training labels are 0..9 repeated, so digits 3 and 7 sit at rows 3, 7, 13, 17, 23, 27
    np.testing.assert_array_equal(subset.train_labels, [3, 7, 3, 7])
    np.testing.assert_array_equal(subset.train_data, data.train_data[[3, 7, 13, 17]])
    np.testing.assert_array_equal(subset.test_labels, [3, 7])
    assert data.subset([1]).train_labels.tolist() == [1, 1, 1]


def test_data_home_order(tmp_path, monkeypatch):
    monkeypatch.setenv("BOB_BOOST_DATA", str(tmp_path / "env"))
    assert datasets.data_home() == tmp_path / "env"
    assert datasets.data_home(tmp_path / "explicit") == tmp_path / "explicit"
    monkeypatch.delenv("BOB_BOOST_DATA")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert datasets.data_home() == tmp_path / "home" / ".cache" / "bob_boost"


def test_download_through_file_url_with_checksums(tmp_path, monkeypatch):
    data = _small_mnist(2)
    files = _write_idx_folder(tmp_path / "mirror", data)
    monkeypatch.setattr(datasets, "MNIST_FILES", files)
    cache = tmp_path / "cache"
    mirrors = [(tmp_path / "nowhere").as_uri() + "/", (tmp_path / "mirror").as_uri() + "/"]
    folder = datasets.download_mnist(cache, mirrors=mirrors)
    assert folder == cache / "mnist"
    for name, sha256 in files.values():
        assert hashlib.sha256((folder / name).read_bytes()).hexdigest() == sha256
    assert not list(folder.glob("*.part"))
    loaded = datasets.load_mnist(directory=cache, download=False)
    np.testing.assert_array_equal(loaded.train_data, data.train_data)


def test_download_rejects_checksum_mismatch_and_leaves_nothing(tmp_path):
    data = _small_mnist(3)
    files = _write_idx_folder(tmp_path / "mirror", data)
    wrong = {key: (name, "0" * 64) for key, (name, _) in files.items()}
    with pytest.raises(OSError, match="checksum mismatch"):
        datasets.download_mnist(tmp_path / "cache", mirrors=[(tmp_path / "mirror").as_uri() + "/"], files=wrong)
    assert not any((tmp_path / "cache" / "mnist").iterdir())


def test_download_uses_opener_and_skips_verified_files(tmp_path, monkeypatch):
    data = _small_mnist(4)
    files = _write_idx_folder(tmp_path / "mirror", data)
    monkeypatch.setattr(datasets, "MNIST_FILES", files)
    requested = []

    def opener(url):
        requested.append(url)
        return io.BytesIO((tmp_path / "mirror" / url.rsplit("/", 1)[1]).read_bytes())

    loaded = datasets.load_mnist(directory=tmp_path / "cache", mirrors=["https://example.invalid/mnist/"],
                                 opener=opener)
    np.testing.assert_array_equal(loaded.test_labels, data.test_labels)
    assert sorted(requested) == sorted(f"https://example.invalid/mnist/{name}" for name, _ in files.values())
    datasets.download_mnist(tmp_path / "cache", mirrors=["https://example.invalid/mnist/"], opener=opener)
    assert len(requested) == 4  # everything was cached with the right checksum


def test_load_mnist_without_cache_and_without_download(tmp_path):
    with pytest.raises(FileNotFoundError, match="no cached MNIST"):
        datasets.load_mnist(directory=tmp_path, download=False)


def test_published_checksums_are_sha256_hex():
    assert set(datasets.MNIST_FILES) == {"train_data", "train_labels", "test_data", "test_labels"}
    for name, sha256 in datasets.MNIST_FILES.values():
        assert name.endswith("-ubyte.gz") and len(sha256) == 64 and int(sha256, 16) >= 0


def test_make_digits_shape_range_balance_and_determinism():
    images, labels = datasets.make_digits(200, random_state=5)
    assert images.shape == (200, 64) and images.dtype == np.uint8
    assert images.min() == 0 and images.max() <= 16
    assert np.bincount(labels).tolist() == [20] * 10
    again, _ = datasets.make_digits(200, random_state=5)
    np.testing.assert_array_equal(images, again)
    other, _ = datasets.make_digits(200, random_state=6)
    assert not np.array_equal(images, other)


def test_make_digits_classes_are_learnable_but_not_identical():
    train, train_labels = datasets.make_digits(1000, random_state=0)
    test, test_labels = datasets.make_digits(500, random_state=1)
    means = np.stack([train[train_labels == d].mean(axis=0) for d in range(10)])
    distances = ((test[:, None, :] - means[None]) ** 2).sum(axis=2)
    accuracy = np.mean(np.argmin(distances, axis=1) == test_labels)
    assert 0.6 < accuracy < 1.0  # a nearest-mean classifier does well but not perfectly
    assert len({images.tobytes() for images in train[train_labels == 1]}) > 90  # samples of a digit vary


def test_make_digits_rejects_bad_count():
    with pytest.raises(ValueError, match="number_of_samples"):
        datasets.make_digits(0)


def test_mnist_in_bobs_hdf5_layout_loads():
    small = datasets.load_mnist(SMALL_MNIST)  # 40 training and 40 test images of each digit, real MNIST
    assert small.train_data.shape == (400, 784) and small.test_data.shape == (400, 784)
    assert np.bincount(small.test_labels).tolist() == [40] * 10 and small.train_data.dtype == np.uint8
    if SHARED_MNIST.is_file():  # the whole file, where the project's shared data sit beside the checkout
        data = datasets.load_mnist(SHARED_MNIST)
        assert data.train_data.shape == (60000, 784) and data.test_data.shape == (10000, 784)
        assert np.bincount(data.test_labels).sum() == 10000 and set(np.unique(data.train_labels)) == set(range(10))


def test_load_mnist_idx_accepts_dotted_spelling(tmp_path):
    data = _small_mnist(5)
    files = _write_idx_folder(tmp_path, data, compress=False)
    for name, _ in files.values():  # e.g. train-images-idx3-ubyte -> train-images.idx3-ubyte
        (tmp_path / name).rename(tmp_path / name.replace("-idx", ".idx", 1))
    np.testing.assert_array_equal(datasets.load_mnist_idx(tmp_path).test_data, data.test_data)
