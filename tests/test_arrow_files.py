"""Parquet and Arrow IPC (Feather) files: read whole by the table reader and the command line, category and
text columns coded with categories the model keeps, and read in row blocks by the Dask reader."""
from __future__ import annotations

import numpy as np
import pytest

from bob_boost import BoostedMachine
from bob_boost.cli import main
from bob_boost.exceptions import DataFormatError
from bob_boost.io.tables import read_table

pa = pytest.importorskip("pyarrow", reason="Parquet and Arrow files need the arrow extra")
pq = pytest.importorskip("pyarrow.parquet", reason="Parquet and Arrow files need the arrow extra")
feather = pytest.importorskip("pyarrow.feather", reason="Parquet and Arrow files need the arrow extra")


def _table(n=1200, seed=0, nulls=False):
    rng = np.random.default_rng(seed)
    city = rng.choice(["a", "b", "c", "d", "e", "f"], n)
    x = rng.normal(size=n)
    target = np.where(np.isin(city, ["b", "e"]) ^ (x > 0.3), "yes", "no")
    third = pa.array(np.where(rng.random(n) < 0.1, None, rng.normal(size=n)).tolist(), type=pa.float64()) \
        if nulls else rng.integers(0, 5, n)
    return pa.table({"city": pa.array(city).dictionary_encode(), "x": x, "z": third, "target": target})


@pytest.mark.parametrize("suffix", [".parquet", ".feather"])
def test_files_read_with_their_categories_and_the_model_s(tmp_path, suffix):
    table = _table(nulls=True)
    path = tmp_path / f"data{suffix}"
    (pq.write_table if suffix == ".parquet" else feather.write_feather)(table, path)
    read = read_table(path)
    assert read.feature_names == ["city", "x", "z"] and read.categories == {0: ["a", "b", "c", "d", "e", "f"]}
    city = np.array(table.column("city").to_pylist())
    assert np.array_equal(read.features[:, 0], np.searchsorted(["a", "b", "c", "d", "e", "f"], city))
    assert np.isnan(read.features[:, 2]).sum() == table.column("z").null_count
    assert read.labels.tolist() == table.column("target").to_pylist()
    kept = read_table(path, categories={0: ["b", "a"]})  # a model's categories: "c" .. "f" are unseen
    assert np.array_equal(kept.features[:, 0], np.select([city == "b", city == "a"], [0, 1], 2))


def test_unreadable_files_name_themselves(tmp_path):
    path = tmp_path / "broken.parquet"
    path.write_bytes(b"not parquet")
    with pytest.raises(DataFormatError, match="broken.parquet: not a readable parquet file"):
        read_table(path)


def _run(capsys, *argv):
    code = main([str(a) for a in argv])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_the_command_line_keeps_a_file_s_categories_for_new_files(tmp_path, capsys):
    pq.write_table(_table(), tmp_path / "train.parquet")
    feather.write_feather(pa.table({"city": ["b", "a new city", "a"], "x": [0.0, 0.0, 1.0], "z": [1, 2, 3]}),
                          tmp_path / "new.feather")
    code, _, err = _run(capsys, "train", tmp_path / "train.parquet", "-o", tmp_path / "m.hdf5", "-w", "tree", "-r", 30,
                        "-q")
    assert code == 0, err
    machine = BoostedMachine.load(tmp_path / "m.hdf5")
    assert machine.metadata["categories"] == {"0": ["a", "b", "c", "d", "e", "f"]}
    assert any(c is not None for c in machine.weak_machines[0].categories)
    assert _run(capsys, "predict", tmp_path / "m.hdf5", tmp_path / "new.feather", "-o", tmp_path / "p.csv")[0] == 0
    lines = (tmp_path / "p.csv").read_text().splitlines()
    assert [line.split(",")[0] for line in lines[1:]] == ["yes", "no", "yes"]
    # the unseen city goes where the codes beyond the categories go
    expected = machine.decision_scores(np.array([[6.0, 0.0, 2.0]]))[0, 0]
    assert float(lines[2].split(",")[1]) == pytest.approx(expected, rel=1e-12)
    code, _, err = _run(capsys, "train", tmp_path / "train.parquet", "-o", tmp_path / "s.hdf5", "-r", 5, "-q")
    assert code == 0, err  # the default stumps split sets of categories too
    assert any(stump.categories is not None for stump in BoostedMachine.load(tmp_path / "s.hdf5").weak_machines)
    code, _, err = _run(capsys, "train", tmp_path / "train.parquet", "-o", tmp_path / "a.hdf5", "--trainer",
                        "adaboostdb")
    assert code == 1 and "columns [0] hold categories, which --trainer adaboostdb does not split" in err


def test_the_dask_reader_reads_row_blocks_as_the_table_reader(client, tmp_path):
    table = _table().drop_columns(["city"])
    pq.write_table(table, tmp_path / "t.parquet", row_group_size=300)
    feather.write_feather(table, tmp_path / "t.feather", chunksize=250)
    from bob_boost.dask import read_lazy_table
    for name in ("t.parquet", "t.feather"):
        lazy, eager = read_lazy_table(tmp_path / name, chunk_rows=170), read_table(tmp_path / name)
        assert lazy.features.chunks[0][:2] == (170, 170) and lazy.feature_names == ["x", "z"]
        assert np.array_equal(lazy.features.compute(), eager.features)
        assert np.array_equal(lazy.labels.compute(), eager.labels)
    # a category column: coded by its sorted distinct values, found on the cluster, or by a model's categories
    pq.write_table(_table(), tmp_path / "c.parquet", row_group_size=300)
    lazy, eager = read_lazy_table(tmp_path / "c.parquet", chunk_rows=170), read_table(tmp_path / "c.parquet")
    assert lazy.categories == eager.categories == {0: ["a", "b", "c", "d", "e", "f"]}
    np.testing.assert_array_equal(lazy.features.compute(), eager.features)
    kept = read_lazy_table(tmp_path / "c.parquet", categories={0: ["b", "a"]})
    np.testing.assert_array_equal(kept.features.compute(),
                                  read_table(tmp_path / "c.parquet", categories={0: ["b", "a"]}).features)


@pytest.mark.long
def test_the_command_line_trains_a_file_s_categories_on_a_cluster(dask_cluster, tmp_path, capsys):
    """``train --scheduler`` codes a Parquet file's category column as in memory, keeps its categories in the
    model, and ``predict --scheduler`` codes a new file with them."""
    pq.write_table(_table(), tmp_path / "train.parquet", row_group_size=400)
    memory = _run(capsys, "train", tmp_path / "train.parquet", "-o", tmp_path / "m.hdf5", "-w", "tree", "-r", 8,
                  "-q")
    on_cluster = _run(capsys, "train", tmp_path / "train.parquet", "-o", tmp_path / "c.hdf5", "-w", "tree", "-r", 8,
                      "-q", "--scheduler", dask_cluster.scheduler_address)
    assert memory[0] == 0 and on_cluster[0] == 0, on_cluster[2]
    machine, cluster_machine = BoostedMachine.load(tmp_path / "m.hdf5"), BoostedMachine.load(tmp_path / "c.hdf5")
    expected = {"0": ["a", "b", "c", "d", "e", "f"]}
    assert cluster_machine.metadata["categories"] == machine.metadata["categories"] == expected
    assert any(c is not None for c in cluster_machine.weak_machines[0].categories)
    features = read_table(tmp_path / "train.parquet").features
    np.testing.assert_allclose(cluster_machine.decision_scores(features), machine.decision_scores(features),
                               rtol=1e-9, atol=1e-9)
    new = _table(n=50, seed=3)
    feather.write_feather(new, tmp_path / "new.feather")
    for scheduler in ((), ("--scheduler", dask_cluster.scheduler_address)):
        code, _, err = _run(capsys, "predict", tmp_path / "c.hdf5", tmp_path / "new.feather", "-o",
                            tmp_path / f"p{len(scheduler)}.csv", *scheduler)
        assert code == 0, err
    assert (tmp_path / "p0.csv").read_text() == (tmp_path / "p2.csv").read_text()
