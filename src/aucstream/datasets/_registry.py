"""Named loaders for the benchmark datasets of the online AUC maximization papers.

The files are not shipped with aucstream (except four small LIBSVM sets, see
below): point the environment variable ``AUCSTREAM_DATA`` (or the ``data_home``
argument) at a folder that holds them, under the names listed by
:func:`dataset_info`, compressed as they are distributed (``*.xz``). Each file is
checked against its sha256 before it is read.

``diabetes``, ``fourclass``, ``german`` and ``splice`` are embedded in the package
and load without any data folder.
"""

from __future__ import annotations

import contextlib
import difflib
import hashlib
import os
from collections.abc import Iterator
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

import numpy as np
import scipy.sparse as sp

from ._formats import FileFormat, load_file
from ._labels import apply_positive, positive_classes
from ._readers import load_idx

__all__ = [
    "Dataset",
    "DatasetInfo",
    "FileSpec",
    "dataset_info",
    "get_data_home",
    "list_datasets",
    "load_dataset",
    "load_diabetes",
    "load_fourclass",
    "load_german",
    "load_splice",
    "sha256_file",
]

DATA_ENV = "AUCSTREAM_DATA"


# ------------------------------------------------------------------------- table


@dataclass(frozen=True)
class FileSpec:
    """One file of a dataset.

    Attributes
    ----------
    filename : str
        Name of the (compressed) file in the data folder.
    sha256 : str
        Hex digest of the file as stored (compressed).
    n_samples : int
        Number of examples it holds.
    """

    filename: str
    sha256: str
    n_samples: int


@dataclass(frozen=True)
class DatasetInfo:
    """Description of a registered dataset (see :func:`dataset_info`).

    Attributes
    ----------
    name : str
        Registry name.
    format : {"libsvm", "csv", "idx"}
        File format.
    train : tuple of FileSpec
        Files of the (first or only) part. For "idx", the images then the labels.
    test : tuple of FileSpec
        Files of the predefined test part (empty if there is none).
    n_features : int
        Number of features of the loaded ``X`` (after any encoding).
    n_classes : int
        Number of distinct labels in the files.
    positive : label or None
        The conventional positive class of a two-class set; None for multi-class
        sets, whose default binary rule is ``"random_halves"``.
    description : str
        Source, size and conventions.
    embedded : bool
        Whether a copy ships inside the package.
    delimiter, label_column, header : csv reading options
        Used when ``format == "csv"``.
    encoding : str or None
        ``"onehot3"``: every column holds a value in {0, 1, 2} and is expanded into
        three 0/1 columns (column ``3 * j + v`` is 1 when cell ``j`` equals ``v``).
    """

    name: str
    format: str
    train: tuple[FileSpec, ...]
    test: tuple[FileSpec, ...]
    n_features: int
    n_classes: int
    positive: Any
    description: str
    embedded: bool = False
    delimiter: str | None = ","
    label_column: int | str = -1
    header: bool = False
    encoding: str | None = None

    @property
    def n_train(self) -> int:
        """Number of examples in the train (or only) part."""
        return self.train[0].n_samples

    @property
    def n_test(self) -> int:
        """Number of examples in the test part (0 if none)."""
        return self.test[0].n_samples if self.test else 0

    @property
    def n_samples(self) -> int:
        """Total number of examples."""
        return self.n_train + self.n_test

    @property
    def files(self) -> tuple[FileSpec, ...]:
        """All files, train part first."""
        return self.train + self.test

    @property
    def default_binary(self) -> str:
        """Name of the default binary rule: "positive" or "random_halves"."""
        return "positive" if self.positive is not None else "random_halves"


def _f(filename: str, n_samples: int, sha256: str) -> tuple[FileSpec, ...]:
    return (FileSpec(filename, sha256, n_samples),)


def _libsvm(name, train, test, n_features, n_classes, positive, description, **kw):
    return DatasetInfo(
        name, "libsvm", train, test, n_features, n_classes, positive, description, **kw
    )


_ADULT = (
    "LIBSVM {name}: a subset of UCI Adult (income > 50K), 123 binary features; "
    "{n_train} train + {n_test} test rows. Labels -1/+1, positive = +1."
)
_WEB = (
    "LIBSVM {name}: a subset of the web page classification data of Platt, 300 "
    "binary features; {n_train} train + {n_test} test rows. Labels -1/+1, positive = +1."
)


def _adult_or_web(name, template, n_features, train, test):
    text = template.format(name=name, n_train=train[0].n_samples, n_test=test[0].n_samples)
    return _libsvm(name, train, test, n_features, 2, 1.0, text)


_TABLE: tuple[DatasetInfo, ...] = (
    _libsvm(
        "diabetes",
        _f(
            "diabetes_scale.xz",
            768,
            "cc3afb713fa1234dcd7c52fc2f8209a56abaf15e7f545472375ce424446cd7a2",
        ),
        (),
        8,
        2,
        1.0,
        "LIBSVM diabetes_scale: Pima Indians diabetes, 768 rows, 8 features scaled to "
        "[-1, 1]. Labels -1/+1, positive = +1 (500 rows).",
        embedded=True,
    ),
    _libsvm(
        "fourclass",
        _f(
            "fourclass_scale.xz",
            862,
            "1b5c4404b2549f6933848fac1ecd6a0c25247d3ffe1c64cbe3ab8cdef3591458",
        ),
        (),
        2,
        2,
        1.0,
        "LIBSVM fourclass_scale: 862 rows, 2 features scaled to [-1, 1]. Labels -1/+1, "
        "positive = +1 (307 rows).",
        embedded=True,
    ),
    _libsvm(
        "german",
        _f(
            "german.numer_scale.xz",
            1000,
            "876530c0ae6bc07c6e06af804023cb4fe3faf666332f267f4c259b8d2282f2a1",
        ),
        (),
        24,
        2,
        1.0,
        "LIBSVM german.numer_scale: Statlog German credit, numeric version, 1000 rows, "
        "24 features scaled to [-1, 1]. Labels -1/+1, positive = +1 (300 rows).",
        embedded=True,
    ),
    _libsvm(
        "splice",
        _f(
            "splice_scale.xz",
            1000,
            "d34c65de993a025fe1d2062aacc62baabe2daccc79af6ef04aca10cec491b998",
        ),
        (),
        60,
        2,
        1.0,
        "LIBSVM splice_scale, training part only (the 2175-row splice.t is not "
        "available): 1000 rows, 60 features scaled to [-1, 1]. Labels -1/+1, "
        "positive = +1 (517 rows).",
        embedded=True,
    ),
    DatasetInfo(
        "usps",
        "csv",
        _f(
            "zip.train.xz", 7291, "ecda33f84f84fe1440d4048bd213fd6b418d3fb2fa8731abe988936d2310ad38"
        ),
        _f("zip.test.xz", 2007, "12c6b440b21d5f8a20a21baaa02aeeabced4eb806e9db6c235bc87e16a4a3d32"),
        256,
        10,
        None,
        "USPS handwritten digits as published with The Elements of Statistical Learning "
        "(zip.train / zip.test): 7291 + 2007 images of 16x16 grey values in [-1, 1], "
        "dense. Labels are the digits 0-9 (LIBSVM's usps numbers them 1-10).",
        delimiter=None,
        label_column=0,
        header=False,
    ),
    _libsvm(
        "letter",
        _f(
            "letter.scale.xz",
            15000,
            "0443cd24a613b3dc10c50610d4a9f633ac4aa8dd09c051c2dc2ecdebafe84cab",
        ),
        _f(
            "letter.scale.t.xz",
            5000,
            "7140ce67059a2293b9c193af82f363673099c3d18c580bf9597314d6fced8d99",
        ),
        16,
        26,
        None,
        "LIBSVM letter.scale / letter.scale.t: UCI letter recognition, 15000 + 5000 rows, "
        "16 features scaled to [-1, 1], 26 classes 1-26 (A-Z).",
    ),
    DatasetInfo(
        "magic04",
        "csv",
        _f(
            "magic04.data.xz",
            19020,
            "d76977dd5861134478bcc9c4223b89d51d23ff987cf0f12132657b8fea07ca2c",
        ),
        (),
        10,
        2,
        "g",
        "UCI MAGIC gamma telescope (magic04.data): 19020 rows, 10 real features "
        "(unscaled), dense. Labels 'g' (gamma, signal, 12332 rows) and 'h' (hadron); "
        "positive = 'g'.",
        delimiter=",",
        label_column=-1,
        header=False,
    ),
    _libsvm(
        "a9a",
        _f("a9a.xz", 32561, "cea7c541c650d123ac692cb8e2244d1c2e82f67c75cbfeccdb25a4b6fc88ef72"),
        _f("a9a.t.xz", 16281, "11dcdf09d2c3502c1e972986b8d8022b5adf895311e41e37e06e26ebc1ef45f3"),
        123,
        2,
        1.0,
        "LIBSVM a9a: UCI Adult (income > 50K), 123 binary features; 32561 train + 16281 "
        "test rows. Labels -1/+1, positive = +1.",
    ),
    _libsvm(
        "w8a",
        _f("w8a.xz", 49749, "07646ff4ecbbc16bbc9d14c926e0fef553be3125b0bcf1119c494734f0a1554b"),
        _f("w8a.t.xz", 14951, "3f952104f0bd2fd2289ac62f32b8aece73eefa9b5c62b6fc651e21448291fb9d"),
        300,
        2,
        1.0,
        "LIBSVM w8a: web page classification (Platt), 300 binary features; 49749 train + "
        "14951 test rows, about 3% positive. Labels -1/+1, positive = +1.",
    ),
    _libsvm(
        "ijcnn1",
        _f("ijcnn1.xz", 49990, "5408441148980a04dd8e3c41a7cef1b33d31efc2a41175fdcf1b66ad167ea5a3"),
        _f(
            "ijcnn1.t.xz", 91701, "bec1482a234c07ece9d196815eb0815e945e341c5dfc3eda050c0689df59003b"
        ),
        22,
        2,
        1.0,
        "LIBSVM ijcnn1 (IJCNN 2001 challenge): 22 features; 49990 train (ijcnn1.tr "
        "followed by ijcnn1.val) + 91701 test rows. Labels -1/+1, positive = +1.",
    ),
    _adult_or_web(
        "a1a",
        _ADULT,
        123,
        _f("a1a.xz", 1605, "8705b1d4611f239458522fd4bf9bdaa539b3dc0413ba575b88a08dc17e8f9656"),
        _f("a1a.t.xz", 30956, "55ce84b257bda80f4e1989b0f272d6eff92b22a6e8dc4440bdb01a1545bc2755"),
    ),
    _adult_or_web(
        "a2a",
        _ADULT,
        123,
        _f("a2a.xz", 2265, "abcf3f098b703bcf46e2304a5fdfdcdcb79d89a732831d9acaccda99b3bb178f"),
        _f("a2a.t.xz", 30296, "4a1e26274322b807a75385928b2223afeb5231e300f6185ed5b7616296658e0d"),
    ),
    _adult_or_web(
        "a3a",
        _ADULT,
        123,
        _f("a3a.xz", 3185, "9fc389a845500049c6bfa38930335159d71d171be41d85d8836657343863a47a"),
        _f("a3a.t.xz", 29376, "89f7426b492354900a7c233d6421a550a9cb64cb855f4a726b61cc2649c6bb7d"),
    ),
    _adult_or_web(
        "a7a",
        _ADULT,
        123,
        _f("a7a.xz", 16100, "d95f14d14970c020e881cc3563af35dcf7c6e4a16f51930ae8da9aea33f8122b"),
        _f("a7a.t.xz", 16461, "7139454eb81fde8f5649ee68c34c2b149670ba9091291daeb71885d03dca7e68"),
    ),
    _adult_or_web(
        "a8a",
        _ADULT,
        123,
        _f("a8a.xz", 22696, "752bb54dec164cc693e4085215a2e4c73fbc372ba5fa640bf9fdd625b7ec2301"),
        _f("a8a.t.xz", 9865, "95a06059f0aef7c49a47cc60513fc31b683e80255fe4947973a2fd3fc24f01a9"),
    ),
    _adult_or_web(
        "w1a",
        _WEB,
        300,
        _f("w1a.xz", 2477, "77de7479476cc2c61e8ff839558bbfea934816080b00dfa1b6996edfdf2a9254"),
        _f("w1a.t.xz", 47272, "2589a8ea89879150bb409a81ef613bf8fb9c7684ada3cb49d402999effb5f8b7"),
    ),
    _adult_or_web(
        "w7a",
        _WEB,
        300,
        _f("w7a.xz", 24692, "01a2dc1fb01e2bbbd68d5e6ee4f43d1d0d078c95edf61d1c7a4afa625ea7d290"),
        _f("w7a.t.xz", 25057, "de620c33dac18302ab0b52f1cd44d3fba592d2bb009f86c5c864bf03ba80224e"),
    ),
    _libsvm(
        "phishing",
        _f(
            "phishing.xz", 11055, "e3bb6ad0f1c57f2f005e432691524dcba1fde22d134e63c597c1cb1d731cb33e"
        ),
        (),
        68,
        2,
        1.0,
        "LIBSVM phishing: 11055 rows, 68 binary features, each row scaled to unit "
        "length. Labels 0/1, positive = 1 (6157 rows).",
    ),
    DatasetInfo(
        "connect4",
        "csv",
        _f(
            "connect_4.tsv.xz",
            67557,
            "374f23461b49abf2b12812b016e0cc9674ae766e926acbb34ccb07b69da35da6",
        ),
        (),
        126,
        3,
        None,
        "UCI Connect-4 (PMLB connect_4.tsv): 67557 positions of 42 board cells coded "
        "0/1/2, one-hot encoded to 126 binary features (column 3*j + v is 1 when cell j "
        "holds v), sparse. 3 classes 0/1/2 (PMLB coding of the outcome; 2 is the "
        "largest class, 44473 rows, usually read as 'win').",
        delimiter="\t",
        label_column="target",
        header=True,
        encoding="onehot3",
    ),
    DatasetInfo(
        "skin_nonskin",
        "csv",
        _f(
            "Skin_NonSkin.txt.xz",
            245057,
            "75c43fd430fe4be96ca6535589210d929963259590b8f8e25b7ba9aca76d44a7",
        ),
        (),
        3,
        2,
        1.0,
        "UCI Skin Segmentation (Skin_NonSkin.txt): 245057 pixels, 3 features B, G, R in "
        "0-255 (unscaled), dense. Labels 1 (skin, 50859 rows) / 2 (non-skin); "
        "positive = 1.",
        delimiter="\t",
        label_column=-1,
        header=False,
    ),
    _libsvm(
        "sector",
        _f(
            "sector.scale.xz",
            6412,
            "f91e253074373b6b5df0e8a559b074015f6a0a08701fa79776164e7641d42a7e",
        ),
        _f(
            "sector.t.scale.xz",
            3207,
            "102f258f81b0d6e8d7b424879988037b1991032b262f5b33ce4945d5c4fca627",
        ),
        55197,
        105,
        None,
        "LIBSVM sector.scale / sector.t.scale: industry sector web pages, 6412 + 3207 "
        "rows, 55197 sparse tf-idf features, 105 classes.",
    ),
    _libsvm(
        "news20",
        _f("news20.t.xz", 3993, "498d19e947a31bd544f733958f5170b130e77be9c3d2ec458fc8053348a4bb9b"),
        (),
        62061,
        20,
        None,
        "LIBSVM news20.t, the test part of news20 only (the 15935-row train part is not "
        "available): 3993 rows of raw word counts, 62061 features as in LIBSVM's news20 "
        "(the highest index in news20.t is 62060), 20 classes.",
    ),
    DatasetInfo(
        "mnist",
        "idx",
        (
            FileSpec(
                "t10k-images-idx3-ubyte.xz",
                "83565bb7769a99fc50e1facf8d134bbc8896afbb05c71f9ca7d4a8c50de0790f",
                10000,
            ),
            FileSpec(
                "t10k-labels-idx1-ubyte.xz",
                "f2edae9ce0307abae4671a37b70e6e3858696b48b16c3cfdfef97388dc9925d5",
                10000,
            ),
        ),
        (),
        784,
        10,
        None,
        "MNIST test set only (t10k-images / t10k-labels; the 60000-image training set is "
        "not available): 10000 images of 28x28 pixels, values 0-255 (unscaled; divide by "
        "255 for LIBSVM's mnist.scale), returned as a sparse CSR matrix. Labels 0-9.",
    ),
)

_REGISTRY: dict[str, DatasetInfo] = {info.name: info for info in _TABLE}

_ALIASES = {
    "connect-4": "connect4",
    "connect_4": "connect4",
    "skin": "skin_nonskin",
    "german.numer_scale": "german",
    "german_numer_scale": "german",
    "diabetes_scale": "diabetes",
    "fourclass_scale": "fourclass",
    "splice_scale": "splice",
    "magic": "magic04",
    "news20.t": "news20",
}


def _canonical(name: str) -> str:
    if not isinstance(name, str):
        raise TypeError(f"dataset name must be a str, got {name!r}")
    key = name.strip().lower()
    key = _ALIASES.get(key, key)
    if key not in _REGISTRY:
        close = difflib.get_close_matches(key, list(_REGISTRY), n=3)
        hint = f" Did you mean {', '.join(map(repr, close))}?" if close else ""
        raise ValueError(f"unknown dataset {name!r}.{hint} Known datasets: {', '.join(_REGISTRY)}")
    return key


def list_datasets() -> list[str]:
    """Names of the registered datasets, in registry order.

    Returns
    -------
    list of str
    """
    return list(_REGISTRY)


def dataset_info(name: str) -> DatasetInfo:
    """Registry entry of a dataset: files, sha256, sizes, label convention.

    Parameters
    ----------
    name : str
        A name from :func:`list_datasets` (case-insensitive; a few aliases such as
        ``"connect-4"`` and ``"skin"`` are accepted).

    Returns
    -------
    DatasetInfo
    """
    return _REGISTRY[_canonical(name)]


# ---------------------------------------------------------------------- files


def get_data_home(data_home: str | os.PathLike | None = None) -> Path:
    """The folder that holds the benchmark files.

    Parameters
    ----------
    data_home : str, path-like or None, default=None
        The folder. If None, the environment variable ``AUCSTREAM_DATA`` is used.

    Returns
    -------
    pathlib.Path

    Raises
    ------
    FileNotFoundError
        When neither is set, or the folder does not exist.
    """
    source = "data_home"
    if data_home is None:
        data_home = os.environ.get(DATA_ENV) or None
        source = f"${DATA_ENV}"
    if data_home is None:
        raise FileNotFoundError(
            "no benchmark data folder is configured: set the environment variable "
            f"{DATA_ENV} to the folder that holds the dataset files (for example "
            f"`export {DATA_ENV}=/path/to/data`) or pass data_home=... . Only "
            f"{', '.join(i.name for i in _TABLE if i.embedded)} are available without it."
        )
    path = Path(data_home).expanduser()
    if not path.is_dir():
        raise FileNotFoundError(
            f"the benchmark data folder {str(path)!r} ({source}) does not exist"
        )
    return path


def sha256_file(path: str | os.PathLike, block_size: int = 1 << 20) -> str:
    """Hex sha256 digest of a file, read in blocks.

    Parameters
    ----------
    path : str or path-like
        The file.
    block_size : int, default=1 MiB
        Bytes read at a time.

    Returns
    -------
    str
    """
    h = hashlib.sha256()
    with open(path, "rb") as f:
        while block := f.read(block_size):
            h.update(block)
    return h.hexdigest()


def _verify(path: Path, spec: FileSpec) -> None:
    digest = sha256_file(path)
    if digest != spec.sha256:
        raise ValueError(
            f"sha256 mismatch for {spec.filename} ({str(path)!r}): expected {spec.sha256}, "
            f"got {digest}. The file is corrupt or a different version; fetch it again."
        )


@contextlib.contextmanager
def _located(info: DatasetInfo, data_home) -> Iterator[list[Path]]:
    """Paths of all files of ``info`` (train first), from the data home or the package."""
    try:
        home = get_data_home(data_home)
        home_error: FileNotFoundError | None = None
    except FileNotFoundError as exc:
        home, home_error = None, exc
    with contextlib.ExitStack() as stack:
        paths = []
        for spec in info.files:
            if home is not None and (home / spec.filename).is_file():
                paths.append(home / spec.filename)
            elif info.embedded:
                ref = resources.files(__package__) / "data" / spec.filename
                paths.append(stack.enter_context(resources.as_file(ref)))
            elif home is None and home_error is not None:
                raise home_error
            else:
                raise FileNotFoundError(
                    f"{spec.filename} (dataset {info.name!r}) is not in the data folder "
                    f"{str(home)!r}"
                )
        yield paths


def _one_hot3(X: np.ndarray, where: str) -> sp.csr_matrix:
    codes = X.astype(np.int64)
    if not np.array_equal(codes, X) or codes.size and (codes.min() < 0 or codes.max() > 2):
        raise ValueError(f"{where}: one-hot encoding expects cell values 0, 1 or 2")
    n, d = codes.shape
    indices = (np.arange(d, dtype=np.int64) * 3 + codes).ravel()
    indptr = np.arange(n + 1, dtype=np.int64) * d
    data = np.ones(n * d, dtype=np.float64)
    return sp.csr_matrix((data, indices, indptr), shape=(n, 3 * d))


def _read_part(info: DatasetInfo, paths: list[Path]) -> tuple[Any, np.ndarray]:
    if info.format == "libsvm":
        return load_file(
            paths[0], FileFormat("libsvm"), n_features=info.n_features, zero_based=False
        )
    if info.format == "csv":
        X, y = load_file(
            paths[0],
            FileFormat("csv", delimiter=info.delimiter),
            label_column=info.label_column,
            header=info.header,
        )
        if info.encoding == "onehot3":
            X = _one_hot3(X, str(paths[0]))
        return X, y
    if info.format == "idx":
        images = load_idx(paths[0])
        labels = load_idx(paths[1])
        if images.shape[0] != labels.shape[0]:
            raise ValueError(
                f"{paths[0]} holds {images.shape[0]} images but {paths[1]} holds "
                f"{labels.shape[0]} labels"
            )
        X = sp.csr_matrix(images.reshape(images.shape[0], -1).astype(np.float64))
        return X, labels.astype(np.float64)
    raise ValueError(f"unknown format {info.format!r}")  # pragma: no cover


# ----------------------------------------------------------------------- load


@dataclass(repr=False)
class Dataset:
    """A loaded dataset (see :func:`load_dataset`).

    Attributes
    ----------
    name : str
        Registry name.
    X : scipy.sparse.csr_matrix or ndarray of shape (n_samples, n_features)
        Features (CSR for LIBSVM files, connect4 and mnist; dense for usps, magic04
        and skin_nonskin).
    y : ndarray of shape (n_samples,)
        Labels in {-1, +1} (int64), or the original labels if ``binary=False``.
    n_features : int
        Number of features.
    description : str
        What the data is.
    binary_rule : str
        The label conversion that was applied, e.g. ``"positive=1"`` or
        ``"random_halves(random_state=0)"``; ``"original"`` when none was.
    positive_classes : tuple
        The original labels mapped to +1 (empty if ``binary=False``).
    X_test, y_test : same types as X, y, or None
        The predefined test part, when it exists and ``return_parts=True``.
    """

    name: str
    X: Any
    y: np.ndarray
    n_features: int
    description: str
    binary_rule: str
    positive_classes: tuple = ()
    X_test: Any = None
    y_test: np.ndarray | None = None
    info: DatasetInfo | None = field(default=None, compare=False)

    @property
    def n_samples(self) -> int:
        """Number of rows of ``X``."""
        return self.X.shape[0]

    @property
    def has_test(self) -> bool:
        """Whether a separate test part is attached."""
        return self.X_test is not None

    def __repr__(self) -> str:
        test = f", n_test={self.X_test.shape[0]}" if self.X_test is not None else ""
        return (
            f"Dataset(name={self.name!r}, n_samples={self.n_samples}{test}, "
            f"n_features={self.n_features}, binary_rule={self.binary_rule!r})"
        )


def load_dataset(
    name: str,
    data_home: str | os.PathLike | None = None,
    verify: bool = True,
    binary: Any = None,
    random_state: int | None = 0,
    return_parts: bool = False,
) -> Dataset:
    """Load a registered benchmark dataset.

    Parameters
    ----------
    name : str
        A name from :func:`list_datasets`.
    data_home : str, path-like or None, default=None
        Folder with the files; default: ``$AUCSTREAM_DATA``. The embedded datasets
        (diabetes, fourclass, german, splice) are read from the package when no
        folder is configured or the folder lacks them.
    verify : bool, default=True
        Check the sha256 of every file before reading it.
    binary : None, False, str or tuple, default=None
        How labels become {-1, +1}:

        - None: the dataset's default. Two-class sets map their conventional
          positive class to +1 (+1 for the LIBSVM -1/+1 sets, 1 for phishing,
          ``'g'`` for magic04, 1 = skin for skin_nonskin); multi-class sets use
          ``"random_halves"``.
        - ``"random_halves"``: the sorted distinct classes are permuted with
          ``np.random.default_rng(random_state)``; the first ``floor(K/2)`` are +1.
        - ``("one_vs_rest", c)``: class ``c`` (an original label) is +1.
        - ``"largest_vs_rest"`` / ``"smallest_vs_rest"``: the class with the most /
          fewest examples (over all parts) is +1.
        - False: keep the original labels (float64, or str for magic04).

        The partition is computed once over all parts, so the train and test parts
        are converted the same way.
    random_state : int, numpy Generator or None, default=0
        Seed for ``"random_halves"``.
    return_parts : bool, default=False
        For datasets with a predefined test part (a9a, w8a, ijcnn1, a1a..., letter,
        usps, sector): if True, ``X``/``y`` hold the train part and
        ``X_test``/``y_test`` the test part; if False the parts are concatenated
        (train rows first) into ``X``/``y``. No effect on single-part datasets.

    Returns
    -------
    Dataset

    Raises
    ------
    FileNotFoundError
        If the data folder is not configured or lacks a file.
    ValueError
        On an unknown name or binary rule, or a sha256 mismatch.

    Examples
    --------
    >>> from aucstream.datasets import load_dataset
    >>> ds = load_dataset("diabetes")
    >>> ds.X.shape, sorted(set(ds.y.tolist()))
    ((768, 8), [-1, 1])
    """
    info = dataset_info(name)
    with _located(info, data_home) as paths:
        if verify:
            for path, spec in zip(paths, info.files, strict=True):
                _verify(path, spec)
        n_train_files = len(info.train)
        X, y = _read_part(info, paths[:n_train_files])
        X_test = y_test = None
        if info.test:
            X_test, y_test = _read_part(info, paths[n_train_files:])

    if binary is False:
        positives, rule = np.asarray([]), "original"
    else:
        y_all = y if y_test is None else np.concatenate([y, y_test])
        positives, rule = positive_classes(
            y_all,
            binary,
            conventional=info.positive,
            random_state=random_state,
            where=f"dataset {info.name!r}",
        )
        y = apply_positive(y, positives)
        if y_test is not None:
            y_test = apply_positive(y_test, positives)

    if X_test is not None and not return_parts:
        X = sp.vstack([X, X_test], format="csr") if sp.issparse(X) else np.vstack([X, X_test])
        y = np.concatenate([y, y_test])
        X_test = y_test = None

    return Dataset(
        name=info.name,
        X=X,
        y=y,
        n_features=info.n_features,
        description=info.description,
        binary_rule=rule,
        positive_classes=tuple(v.item() if isinstance(v, np.generic) else v for v in positives),
        X_test=X_test,
        y_test=y_test,
        info=info,
    )


_EMBEDDED_DOC = """Load the embedded ``{name}`` set ({summary}).

    Parameters
    ----------
    data_home : str, path-like or None, default=None
        Optional data folder (the embedded copy is used when it lacks the file).
    verify : bool, default=True
        Check the sha256 of the file.

    Returns
    -------
    Dataset
    """


def _embedded_loader(name: str, summary: str):
    def load(*, data_home: str | os.PathLike | None = None, verify: bool = True) -> Dataset:
        return load_dataset(name, data_home=data_home, verify=verify)

    load.__name__ = load.__qualname__ = f"load_{name}"
    load.__doc__ = _EMBEDDED_DOC.format(name=name, summary=summary)
    return load


load_diabetes = _embedded_loader("diabetes", "768 x 8, labels in {-1, +1}")
load_fourclass = _embedded_loader("fourclass", "862 x 2, labels in {-1, +1}")
load_german = _embedded_loader("german", "german.numer_scale, 1000 x 24, labels {-1, +1}")
load_splice = _embedded_loader("splice", "training part, 1000 x 60, labels {-1, +1}")
