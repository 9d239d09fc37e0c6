"""Hashed features: equal to scikit-learn's FeatureHasher, in the transformer, the CSV
reader, pipelines and the command line; bad widths refused."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp
from sklearn.feature_extraction import FeatureHasher
from sklearn.pipeline import make_pipeline

from aucstream import SOLAM
from aucstream.datasets import iter_csv, load_csv
from aucstream.preprocessing import FeatureHashing
from aucstream.preprocessing._hashing import check_hash_width, hash_rows

WIDTH = 2**10


def sklearn_hashed(rows, width=WIDTH):
    """scikit-learn's FeatureHasher on dict rows (missing values left out by hand)."""
    clean = [{k: v for k, v in row.items() if v is not None and v == v} for row in rows]
    return sp.csr_matrix(FeatureHasher(width, input_type="dict").transform(clean))


def same(a, b):
    assert sp.issparse(a) and a.format == "csr" and a.dtype == np.float64
    assert a.shape == b.shape
    assert (a != b).nnz == 0


def rows_of(n=60, seed=0):
    rng = np.random.default_rng(seed)
    cities = np.array(["Paris", "Oslo", "Lima", "Kyiv", "Zürich"])
    return [
        {
            "city": str(rng.choice(cities)),
            "device": str(rng.choice(["mobile", "desktop"])) if rng.random() < 0.8 else None,
            "amount": float(np.round(rng.normal(), 3)),
            "count": int(rng.integers(0, 4)),
        }
        for _ in range(n)
    ]


def test_rows_equal_feature_hasher():
    rows = rows_of()
    same(hash_rows(rows, WIDTH), sklearn_hashed(rows))
    # the signs: some hashed values are negative (signed hashing), numbers kept as values
    X = hash_rows(rows, WIDTH)
    assert (X.data < 0).any() and (X.data > 0).any()
    assert set(np.round(np.abs(X.data), 3)) > {1.0}


def test_dataframe_dicts_and_arrays_agree():
    rows = rows_of()
    frame = pd.DataFrame(rows)
    frame["device"] = frame["device"].astype("category")
    expected = sklearn_hashed(rows)
    same(FeatureHashing(WIDTH).fit_transform(frame), expected)
    same(FeatureHashing(WIDTH).transform(rows), expected)
    array = np.array([[r["city"], r["amount"]] for r in rows], dtype=object)
    same(
        FeatureHashing(WIDTH).transform(array),
        sklearn_hashed([{"0": r["city"], "1": r["amount"]} for r in rows]),
    )


def write_csv(path, rows, header=True):
    with open(path, "w", encoding="utf-8") as f:
        if header:
            f.write("city,device,amount,count,label\n")
        for i, r in enumerate(rows):
            device = "" if r["device"] is None else r["device"]
            f.write(f"{r['city']}, {device},{r['amount']},{r['count']},{i % 2}\n")


def test_csv_reader_hashes_into_csr(tmp_path):
    rows = rows_of()
    path = tmp_path / "cat.csv"
    write_csv(path, rows)
    numeric = [{**r, "count": float(r["count"])} for r in rows]
    chunks = list(iter_csv(path, chunk_size=25, hash_features=WIDTH))
    assert [X.shape[0] for X, _ in chunks] == [25, 25, 10]
    X = sp.vstack([X for X, _ in chunks], format="csr")
    same(X, sklearn_hashed(numeric))
    y = np.concatenate([y for _, y in chunks])
    np.testing.assert_array_equal(y, np.arange(60) % 2)
    X2, y2 = load_csv(path, hash_features=WIDTH)
    same(X2, X)
    # no header: the names are the columns' positions in the file
    path2 = tmp_path / "nohead.csv"
    write_csv(path2, rows, header=False)
    X3, _ = load_csv(path2, header=False, hash_features=WIDTH)
    positional = [
        {"0": r["city"], "1": r["device"], "2": r["amount"], "3": float(r["count"])} for r in rows
    ]
    same(X3, sklearn_hashed(positional))


def test_strings_are_refused_without_hashing_with_a_hint(tmp_path):
    path = tmp_path / "cat.csv"
    write_csv(path, rows_of(5))
    with pytest.raises(ValueError, match=r"line 2: cannot parse feature '\w+' in column 0"):
        load_csv(path)
    with pytest.raises(ValueError, match="hash_features=2\\*\\*20.*--hash-features"):
        load_csv(path)


@pytest.mark.parametrize(
    "width, error",
    [(0, ValueError), (-8, ValueError), (1000, ValueError), (True, TypeError), (2.0, TypeError)],
)
def test_bad_widths_are_refused(tmp_path, width, error):
    with pytest.raises(error, match="power of two"):
        check_hash_width(width)
    with pytest.raises(error, match="power of two"):
        FeatureHashing(width).fit_transform([{"a": "x"}])
    path = tmp_path / "cat.csv"
    write_csv(path, rows_of(5))
    with pytest.raises(error, match="power of two"):
        iter_csv(path, hash_features=width)


def test_in_a_pipeline_with_a_learner():
    rows = rows_of(400, seed=1)
    y = np.array([r["city"] in ("Paris", "Oslo") for r in rows]).astype(int)
    model = make_pipeline(FeatureHashing(2**8), SOLAM(random_state=0)).fit(rows, y)
    assert model.score(rows, y) > 0.9  # the hashed categories carry the label


def test_a_stream_of_frames_through_a_chunked_pipeline_in_prequential():
    from aucstream.datasets import iter_chunks
    from aucstream.evaluation import prequential
    from aucstream.pipeline import ChunkedPipeline

    rows = rows_of(300, seed=2)
    frame = pd.DataFrame(rows)
    y = np.array([r["city"] in ("Paris", "Kyiv") for r in rows]).astype(int)
    hashed = hash_rows(rows, 2**8)
    frames = ((frame.iloc[i : i + 50], y[i : i + 50]) for i in range(0, 300, 50))
    model = ChunkedPipeline(FeatureHashing(2**8), SOLAM(random_state=0))
    curve = prequential(model, frames, delay=3, every=100)
    expected = prequential(SOLAM(random_state=0), iter_chunks(hashed, y, 50), delay=3, every=100)
    np.testing.assert_allclose(curve["auc"], expected["auc"], rtol=1e-12)
    assert curve["auc"].iloc[-1] > 0.85


def test_hashed_frames_through_the_partial_auc_pipeline_at_a_hashed_width():
    """A DataFrame stream hashed into 2^18 columns, learnt by StreamPipeline(max_fpr=)
    chunk by chunk (its race refused such widths for memory before it left out the
    partial-AUC learners of d x d state)."""
    from aucstream import StreamPipeline
    from aucstream.pipeline import ChunkedPipeline

    rows = rows_of(1200, seed=3)
    frame = pd.DataFrame(rows)
    y = np.array([r["city"] in ("Paris", "Oslo") for r in rows]).astype(int)
    model = ChunkedPipeline(FeatureHashing(2**18), StreamPipeline(max_fpr=0.05), chunk_size=200)
    for lo in range(0, 1200, 300):
        model.partial_fit(frame.iloc[lo : lo + 300], y[lo : lo + 300], classes=[0, 1])
    assert model.score(frame, y) > 0.9
