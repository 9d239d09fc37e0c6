"""fit_stream, its running AUC and callback, the progress bar and ChunkStream."""

import gc
import io
import lzma
import re
import threading
import time

import numpy as np
import pytest
from conftest import make_stream

from aucstream import OPAUC, SOLAM
from aucstream.datasets import iter_chunks
from aucstream.metrics import roc_auc
from aucstream.streaming import (
    ChunkStream,
    Progress,
    StreamInfo,
    fit_stream,
    running_auc_is_cheap,
    stream_bytes,
)


class SizedSource:
    """Chunks that tell how far through a source of ``total_bytes`` they are, as the
    readers do (``bytes_read``/``total_bytes``): 100 bytes per row."""

    def __init__(self, X, y, chunk_size):
        self._chunks = iter_chunks(X, y, chunk_size)
        self.bytes_read, self.total_bytes = 0, 100 * X.shape[0]

    def __iter__(self):
        return self

    def __next__(self):
        X, y = next(self._chunks)
        self.bytes_read += 100 * X.shape[0]
        return X, y


def test_running_auc_is_the_auc_of_the_prequential_scores():
    X, y = make_stream(n=400, d=5, seed=2)
    infos = []
    model = fit_stream(SOLAM(), iter_chunks(X, y, 70), running_auc=True, callback=infos.append)
    scores = SOLAM().test_then_train(X, y)  # one call: the same scores by contract
    assert infos[-1].auc == roc_auc(y == 1, scores)
    assert [i.n_seen for i in infos] == [70, 140, 210, 280, 350, 400]
    assert [i.n_chunks for i in infos] == [1, 2, 3, 4, 5, 6]
    assert all(i.bytes_read is None and i.fraction is None for i in infos)
    elapsed = [i.elapsed for i in infos]
    assert elapsed == sorted(elapsed) and elapsed[0] >= 0
    # the model is the one partial_fit gives
    reference = SOLAM()
    for X_chunk, y_chunk in iter_chunks(X, y, 70):
        reference.partial_fit(X_chunk, y_chunk)
    np.testing.assert_array_equal(model.coef_, reference.coef_)


def test_running_auc_is_off_by_default_when_it_is_not_cheap():
    X, y = make_stream(n=100, seed=1)
    infos = []
    model = OPAUC()
    fit_stream(model, iter_chunks(X, y, 30), callback=infos.append)
    assert running_auc_is_cheap(model) is model._tags.kernel_prequential
    if not model._tags.kernel_prequential:
        assert all(np.isnan(i.auc) for i in infos)
    infos.clear()
    fit_stream(OPAUC(), iter_chunks(X, y, 30), callback=infos.append, running_auc=False)
    assert all(np.isnan(i.auc) for i in infos)


def test_bytes_of_the_source_give_a_percentage_and_an_eta():
    X, y = make_stream(n=300, seed=3)
    infos, out = [], io.StringIO()
    bar = Progress("fit", enabled=True, every=0, file=out)
    fit_stream(
        OPAUC(), SizedSource(X, y, 100), progress=bar, callback=infos.append, running_auc=True
    )
    assert [(i.bytes_read, i.total_bytes) for i in infos] == [(b, 30000) for b in (1e4, 2e4, 3e4)]
    assert [i.fraction for i in infos] == pytest.approx([1 / 3, 2 / 3, 1])
    lines = out.getvalue().splitlines()
    assert len(lines) == 3  # one line per chunk (every=0), the last not repeated
    assert [re.search(r", (\d+)%, ", line).group(1) for line in lines] == ["33", "67", "100"]
    assert all("ETA " in line and "B/s" in line and "prequential AUC" in line for line in lines)
    assert lines[-1].startswith("fit: 29.3k/29.3kB, 100%, ") and "300 examples" in lines[-1]


def test_without_bytes_the_bar_counts_examples():
    X, y = make_stream(n=120, seed=4)
    out = io.StringIO()
    bar = Progress("fit", enabled=True, every=0, file=out)
    fit_stream(OPAUC(), iter_chunks(X, y, 50), progress=bar)
    last = out.getvalue().splitlines()[-1]
    assert last.startswith("fit: 120 examples, ") and "%" not in last and "examples/s" in last


def test_progress_is_silent_unless_enabled():
    out = io.StringIO()
    bar = Progress("fit", file=out)  # not a terminal: off by default
    bar.show(StreamInfo(10, 1, 5, 10, 0.5, 0.1))
    bar.update()
    bar.close()
    assert out.getvalue() == "" and bar.count == 11


def test_runs_from_a_cache_do_not_shorten_the_eta():
    out = io.StringIO()
    bar = Progress("runs", total=4, unit="runs", enabled=True, every=0, file=out)
    bar.update(cached=True)
    bar.update(cached=True)
    lines = out.getvalue().splitlines()
    assert lines[-1].startswith("runs: 2/4 runs (2 cached), 50%, ") and "ETA ?" in lines[-1]
    bar.update()
    bar.update()
    last = out.getvalue().splitlines()[-1]
    assert last.startswith("runs: 4/4 runs (2 cached), 100%, ") and "ETA 00:00" in last
    assert bar.count == 4 and bar.cached == 2


class Terminal(io.StringIO):
    def isatty(self):
        return True


def test_on_a_terminal_the_bar_is_redrawn_in_place(monkeypatch):
    monkeypatch.setenv("COLUMNS", "120")  # the bar fits the terminal's width
    out = Terminal()
    bar = Progress("fit", enabled=None, every=0, file=out)  # on: a terminal
    for n in (10, 20, 30):
        bar.show(StreamInfo(n, n // 10, 100 * n, 3000, 0.75, 0.1 * n))
    bar.write("a result", file=out)
    bar.close()
    text = out.getvalue()
    assert text.count("\n") == 2 and text.endswith("\n")  # the result, the final bar
    drawn = [part for part in text.split("\r") if part.strip()]
    assert drawn[0].startswith("fit:  33%|") and "| 0.98k/2.93kB [" in drawn[0]
    assert "a result\n" in drawn and drawn[-1].startswith("fit: 100%|")
    assert "ETA 00:00" in drawn[-1] and "prequential AUC 0.7500" in drawn[-1]


def test_chunk_stream_names_the_file_of_a_truncated_archive(tmp_path):
    from aucstream.datasets import iter_file

    path = tmp_path / "cut.svm.xz"
    text = "".join(f"{1 if i % 2 else -1} 1:{i} 2:{i % 7}\n" for i in range(20000)).encode()
    path.write_bytes(lzma.compress(text)[:3000])
    stream = ChunkStream(iter_file(path, n_features=2), name=str(path))
    with pytest.raises(ValueError, match=re.escape(f"{path}: the file ends early")):
        for _ in stream:
            pass


def test_chunk_stream_maps_chunks_and_passes_bytes_on():
    X, y = make_stream(n=50, seed=5)
    stream = ChunkStream(SizedSource(X, y, 20), transform=lambda X, y: (X, -y))
    assert stream_bytes(stream) == (0, 5000)
    chunks = list(stream)
    np.testing.assert_array_equal(np.concatenate([c[1] for c in chunks]), -y)
    assert stream_bytes(stream) == (5000, 5000) and stream.info().n_seen == 50


def _tickers() -> int:
    return sum(t.name == "aucstream-progress" for t in threading.enumerate())


def test_the_line_is_redrawn_while_nothing_happens_and_stops_when_closed():
    out = io.StringIO()
    before = _tickers()
    bar = Progress("tuning", total=5, unit="runs", enabled=True, every=0.05, file=out)
    time.sleep(0.4)  # a long first run: the clock is shown anyway
    lines = out.getvalue().splitlines()
    assert len(lines) >= 2 and lines[0].startswith("tuning: 0/5 runs, 0%, ")
    bar.close()
    time.sleep(0.2)
    assert _tickers() == before
    shown = out.getvalue()
    time.sleep(0.2)
    assert out.getvalue() == shown
    forgotten = Progress("x", enabled=True, every=0.05, file=io.StringIO())
    assert _tickers() == before + 1
    del forgotten
    gc.collect()
    time.sleep(0.3)
    assert _tickers() == before
