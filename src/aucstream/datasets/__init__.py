"""Data input for aucstream: streaming readers, benchmark datasets, scaling.

Readers (never hold a whole file; plain, gzip, bzip2 or xz files). They are strict:
numbers are ASCII digits with an optional sign, point and exponent (no ``_``, no
full-width digits, no separators), a LIBSVM file's index base is decided by an
explicit rule, and a malformed value, a bad encoding or a truncated archive raises
:class:`ValueError` naming the file and the line:

- :func:`iter_svmlight` / :func:`load_svmlight` — LIBSVM/SVMlight files;
- :func:`iter_csv` / :func:`load_csv` — CSV, TSV and whitespace separated files;
- :func:`load_idx` — the idx format of the MNIST files;
- :func:`iter_chunks` — split in-memory arrays into row chunks;
- :func:`detect_format` (-> :class:`FileFormat`), :func:`iter_file`, :func:`load_file`
  — the one place that decides how a file is read (by its extension, or its first
  line for ``.txt`` and unknown extensions), used by the command line, the
  evaluation harness and the registry.

Benchmark datasets (files in ``$AUCSTREAM_DATA``, checked by sha256; diabetes,
fourclass, german and splice ship with the package):

- :func:`list_datasets`, :func:`dataset_info`, :func:`load_dataset`,
  :func:`get_data_home`, and the shortcuts :func:`load_diabetes`,
  :func:`load_fourclass`, :func:`load_german`, :func:`load_splice`.

Preprocessing:

- :class:`MinMaxScalerPM1` (per-feature scaling to [-1, 1]) and
  :class:`UnitNormalizer` (rows to unit L2 norm), both with ``partial_fit``; they
  live in :mod:`aucstream.preprocessing` beside the online scaler and are
  re-exported here;

Binary labels (one resolver for the registry, the harness and the command line):

- :func:`binarize` / :func:`positive_classes` / :func:`apply_positive` — apply a
  rule (default, positive labels, random halves, one/largest/smallest vs rest) and
  describe it;
- :func:`binarize_random_halves`, :func:`binarize_one_vs_rest`,
  :func:`binarize_largest_vs_rest`, :func:`binarize_smallest_vs_rest` — single rules;
- :func:`format_label` — a label as the rules and the command line write it.
"""

# re-exported (they lived here), documented in aucstream.preprocessing
from ..preprocessing import MinMaxScalerPM1 as MinMaxScalerPM1
from ..preprocessing import UnitNormalizer as UnitNormalizer
from ._csv import iter_csv, load_csv
from ._formats import FileFormat, detect_format, iter_file, load_file
from ._labels import (
    apply_positive,
    binarize,
    binarize_largest_vs_rest,
    binarize_one_vs_rest,
    binarize_random_halves,
    binarize_smallest_vs_rest,
    format_label,
    positive_classes,
)
from ._readers import FileChunks, detect_compression, iter_chunks, load_idx, open_file
from ._registry import (
    Dataset,
    DatasetInfo,
    FileSpec,
    dataset_info,
    get_data_home,
    list_datasets,
    load_dataset,
    load_diabetes,
    load_fourclass,
    load_german,
    load_splice,
    sha256_file,
)
from ._svmlight import SvmlightInfo, iter_svmlight, load_svmlight, scan_svmlight

__all__ = [
    "FileChunks",
    "Dataset",
    "DatasetInfo",
    "FileFormat",
    "FileSpec",
    "SvmlightInfo",
    "apply_positive",
    "binarize",
    "binarize_largest_vs_rest",
    "binarize_one_vs_rest",
    "binarize_random_halves",
    "binarize_smallest_vs_rest",
    "dataset_info",
    "format_label",
    "detect_compression",
    "detect_format",
    "get_data_home",
    "iter_chunks",
    "iter_csv",
    "iter_file",
    "iter_svmlight",
    "list_datasets",
    "load_csv",
    "load_dataset",
    "load_file",
    "load_diabetes",
    "load_fourclass",
    "load_german",
    "load_idx",
    "load_splice",
    "load_svmlight",
    "open_file",
    "positive_classes",
    "scan_svmlight",
    "sha256_file",
]
