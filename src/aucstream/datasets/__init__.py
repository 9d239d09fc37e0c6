"""Data input for aucstream: streaming readers, benchmark datasets, scaling.

Readers (never hold a whole file; plain, gzip, bzip2 or xz files):

- :func:`iter_svmlight` / :func:`load_svmlight` — LIBSVM/SVMlight files;
- :func:`iter_csv` / :func:`load_csv` — CSV, TSV and whitespace separated files;
- :func:`load_idx` — the idx format of the MNIST files;
- :func:`iter_chunks` — split in-memory arrays into row chunks.

Benchmark datasets (files in ``$AUCSTREAM_DATA``, checked by sha256; diabetes,
fourclass, german and splice ship with the package):

- :func:`list_datasets`, :func:`dataset_info`, :func:`load_dataset`,
  :func:`get_data_home`, and the shortcuts :func:`load_diabetes`,
  :func:`load_fourclass`, :func:`load_german`, :func:`load_splice`.

Preprocessing:

- :class:`MinMaxScalerPM1` (per-feature scaling to [-1, 1]) and
  :class:`UnitNormalizer` (rows to unit L2 norm), both with ``partial_fit``;
- :func:`binarize_random_halves`, :func:`binarize_one_vs_rest`,
  :func:`binarize_largest_vs_rest`, :func:`binarize_smallest_vs_rest` — multi-class
  labels to {-1, +1}.
"""

from ._readers import (
    SvmlightInfo,
    iter_chunks,
    iter_csv,
    iter_svmlight,
    load_csv,
    load_idx,
    load_svmlight,
    open_file,
    scan_svmlight,
)
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
from ._transforms import (
    MinMaxScalerPM1,
    UnitNormalizer,
    binarize_largest_vs_rest,
    binarize_one_vs_rest,
    binarize_random_halves,
    binarize_smallest_vs_rest,
)

__all__ = [
    "Dataset",
    "DatasetInfo",
    "FileSpec",
    "MinMaxScalerPM1",
    "SvmlightInfo",
    "UnitNormalizer",
    "binarize_largest_vs_rest",
    "binarize_one_vs_rest",
    "binarize_random_halves",
    "binarize_smallest_vs_rest",
    "dataset_info",
    "get_data_home",
    "iter_chunks",
    "iter_csv",
    "iter_svmlight",
    "list_datasets",
    "load_csv",
    "load_dataset",
    "load_diabetes",
    "load_fourclass",
    "load_german",
    "load_idx",
    "load_splice",
    "load_svmlight",
    "open_file",
    "scan_svmlight",
    "sha256_file",
]
