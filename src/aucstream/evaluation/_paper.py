"""Numbers copied from the papers' tables: data, printed beside ours by the reports.

The papers are G16 (Gao, Wang, Jin, Zhu, Zhou, AIJ 2016), Z11 (Zhao, Hoi, Jin, Yang,
ICML 2011), L18 (Liu, Zhang, Chen, Wang, Yang, ICML 2018), D16 (Ding, Zhao, Hoi,
Ong, 2016; its table values are missing from the text we hold), ZYS (Zhou, Ying,
Skiena, ICDM 2020) and NYL (Natole, Ying, Lyu, ICML 2018; only its abstract is held).
Only the rows of datasets are kept; the values are as printed (G16 with 4 decimals, Z11 with 3, L18
with 6). ● / ○ are the papers' markers (the proposed method is significantly better /
worse than that column's method).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

__all__ = [
    "D16_TABLE2",
    "G16_TABLE2",
    "G16_TABLE3",
    "G16_TABLE4",
    "G16_TABLE6",
    "L18_TABLE2",
    "NYL18_VALUES",
    "PaperTable",
    "Z11_TABLE2",
    "ZYS20_TABLE",
]


@dataclass
class PaperTable:
    """Values copied from a paper's table, to print beside ours.

    Attributes
    ----------
    source : str
        E.g. "Gao et al. 2016, Table 2".
    values : dict of (dataset, learner) to (mean, std, marker)
        ``marker`` is "●", "○" or "".
    wtl : dict of learner to (win, tie, loss)
        The paper's win/tie/loss row, when it has one.
    """

    source: str
    values: dict[tuple[str, str], tuple[float, float, str]] = field(default_factory=dict)
    wtl: dict[str, tuple[int, int, int]] = field(default_factory=dict)

    @classmethod
    def parse(cls, source: str, columns: Sequence[str], rows: str) -> PaperTable:
        """Read rows ``dataset | .8309 ± .0350 | .8264 ± .0367 ● | ...``.

        A ``win/tie/loss`` row gives ``14/2/0`` cells; an empty cell is a value the
        paper does not report.
        """
        table = cls(source)
        for line in rows.strip().splitlines():
            name, *cells = [c.strip() for c in line.split("|")]
            if len(cells) != len(columns):
                raise ValueError(
                    f"{source}: row {name!r} has {len(cells)} cells, expected {len(columns)}"
                )
            for column, cell in zip(columns, cells, strict=True):
                if not cell:
                    continue
                if name == "win/tie/loss":
                    win, tie, loss = (int(v) for v in cell.split("/"))
                    table.wtl[column] = (win, tie, loss)
                    continue
                marker = "●" if "●" in cell else "○" if "○" in cell else ""
                mean, std = cell.replace("●", "").replace("○", "").split("±")
                table.values[name, column] = (float(mean), float(std), marker)
        return table


#: Gao, Wang, Jin, Zhu, Zhou, One-Pass AUC Optimization, AIJ 2016, Table 2.
G16_TABLE2 = PaperTable.parse(
    "Gao et al. 2016 (G16), Table 2",
    ["OPAUC", "OAM_seq", "OAM_gra", "Uni-Exp", "Uni-Log", "Uni-Squ"],
    """
diabetes|.8309±.0350|.8264±.0367|.8262±.0338|.8215±.0309●|.8260±.0360|.8258±.0354
fourclass|.8310±.0251|.8306±.0247|.8295±.0251|.8281±.0305|.8288±.0304|.8292±.0304
german|.7978±.0347|.7747±.0411●|.7723±.0358●|.7908±.0367|.7914±.0361|.7899±.0349
splice|.9232±.0099|.8594±.0194●|.8864±.0166●|.8931±.0213●|.9160±.0131●|.9153±.0132●
usps|.9620±.0040|.9310±.0159●|.9348±.0122●|.9538±.0045●|.9574±.0039●|.9563±.0041●
letter|.8114±.0065|.7549±.0344●|.7603±.0346●|.8113±.0074|.8080±.0068|.8053±.0081●
magic04|.8383±.0077|.8238±.0146●|.8259±.0169●|.8354±.0099●|.8353±.0097●|.8344±.0086●
a9a|.9002±.0047|.8420±.0174●|.8571±.0173●|.9005±.0024|.9006±.0023|.8949±.0025●
w8a|.9633±.0035|.9304±.0074●|.9418±.0070●|.9093±.0986●|.9204±.0114●|.8847±.0130●
kddcup04|.7912±.0039|.6918±.0412●|.7097±.0420●|.7851±.0050●|.7859±.0045●|.7850±.0042●
mnist|.9242±.0021|.8615±.0087●|.8643±.0112●|.7932±.0245●|.9164±.0018●|.9156±.0027●
connect-4|.8760±.0023|.7807±.0258●|.8128±.0230●|.8702±.0025●|.8708±.0026●|.8685±.0033●
acoustic|.8192±.0032|.7113±.0590●|.7711±.0217●|.8171±.0034●|.8206±.0035|.8193±.0035
ijcnn1|.9269±.0021|.9209±.0079●|.9100±.0092●|.9264±.0035|.9243±.0047●|.9022±.0041●
epsilon|.9550±.0007|.8816±.0042●|.8659±.0176●|.9488±.0012●|.9406±.0011●|.9480±.0021●
covtype|.8244±.0014|.7361±.0317●|.7403±.0289●|.8236±.0017|.8253±.0014|.8236±.0020
win/tie/loss|| 14/2/0|14/2/0|10/6/0|9/7/0|11/5/0
""",
)

#: G16, Table 3 (batch methods; SVM-perf, SVM-OR, LS-SVM, batch Uni-Log/Squ).
G16_TABLE3 = PaperTable.parse(
    "Gao et al. 2016 (G16), Table 3",
    ["OPAUC", "SVM-perf", "SVM-OR", "LS-SVM", "batch Uni-Log", "batch Uni-Squ"],
    """
diabetes|.8309±.0350|.8325±.0220|.8326±.0328|.8325±.0329|.8330±.0322|.8332±.0323
fourclass|.8310±.0251|.8221±.0381|.8305±.0311|.8309±.0309|.8288±.0307|.8297±.0310
german|.7978±.0347|.7952±.0340|.7935±.0348|.7994±.0343|.7995±.0344|.7990±.0342
splice|.9232±.0099|.9235±.0091|.9239±.0089|.9245±.0092○|.9208±.0107●|.9211±.0107●
usps|.9620±.0040|.9600±.0054●|.9630±.0047○|.9634±.0045○|.9637±.0041○|.9617±.0043
letter|.8114±.0065|.8028±.0074●|.8144±.0064○|.8124±.0065○|.8121±.0061|.8112±.0061
magic04|.8383±.0077|.8427±.0078○|.8426±.0074○|.8379±.0078|.8378±.0073|.8338±.0073●
a9a|.9002±.0047|.9033±.0039|.9009±.0036|.8982±.0028●|.9033±.0025○|.8967±.0028●
w8a|.9633±.0035|.9626±.0042|.9495±.0082●|.9495±.0092●|.9421±.0062●|.9075±.0104●
kddcup04|.7912±.0039|.7935±.0037○|.7903±.0039●|.7898±.0039●|.7900±.0039●|.7926±.0038
mnist|.9242±.0021|.9338±.0022○|.9340±.0020○|.9336±.0025○|.9334±.0021○|.9279±.0021○
connect-4|.8760±.0023|.8794±.0024○|.8749±.0025●|.8739±.0026●|.8784±.0026○|.8760±.0024
acoustic|.8192±.0032|.8102±.0032●|.8262±.0032○|.8210±.0033○|.8253±.0032○|.8222±.0031○
ijcnn1|.9269±.0021|.9314±.0025○|.9337±.0024○|.9320±.0037○|.9282±.0023○|.9038±.0025●
epsilon|.9550±.0007|.8640±.0049●|.8643±.0053●|.8644±.0050●|.8647±.0150●|.8653±.0073●
covtype|.8244±.0014|.8271±.0011○|.8248±.0013|.8222±.0014●|.8246±.0010|.8242±.0012
win/tie/loss|| 4/6/6|4/6/6|6/4/6|4/6/6|6/8/2
""",
)

#: G16, Table 4 (dense data with 50,000 appended random Fourier features; the paper
#: prints datasets as columns, here as rows; "OPAUC^FP" in the table is OPAUC^rp of the
#: text; OPAUC^pca ran out of memory on magic04, ijcnn1 and acoustic, "N/A", left empty).
G16_TABLE4 = PaperTable.parse(
    "Gao et al. 2016 (G16), Table 4",
    [
        "OPAUC_fd",
        "OPAUC_s",
        "OAM_seq",
        "OAM_gra",
        "Uni-Exp",
        "Uni-Log",
        "Uni-Squ",
        "OPAUC^f",
        "OPAUC^rp",
        "OPAUC^pca",
        "OPAUC_r",
        "OPAUC_h",
    ],
    """
fourclass|.8757±.0367|.8622±.0301●|.8657±.0423●|.8644±.0388●|.8452±.0534●|.8555±.0329●|.8507±.0439●|.8431±.0311●|.8453±.0320●|.8492±.0323●|.8631±.0498●|.8574±.0395●
magic04|.8967±.0086|.8895±.0075●|.8898±.0096●|.8830±.0146●|.8805±.0064●|.8911±.0074●|.8860±.0200●|.8193±.0082●|.8219±.0103●||.8863±.1591●|.8588±.1413●
letter|.9379±.0043|.9336±.0074●|.9370±.0046|.9171±.0381●|.9241±.0062●|.9293±.0094●|.9350±.0159●|.7869±.0062●|.7885±.0116●|.8452±.0055●|.9302±.0352●|.9270±.0570●
ijcnn1|.9811±.0093|.9740±.0098●|.9802±.0099|.9615±.0102●|.9653±.0051●|.9688±.0038●|.9491±.0259●|.8793±.0126●|.8640±.0236●||.9778±.0106●|.9653±.0214●
acoustic|.8589±.0027|.8325±.0374●|.8141±.0102●|.8282±.0092●|.8374±.0051●|.8387±.0039●|.8494±.0077●|.8030±.0028●|.8256±.0029●||.8062±.0853●|.8080±.0961●
""",
)

#: G16, Table 6 (high-dimensional sparse data; the datasets we hold; OPAUC^rp is printed
#: "OPAUC^CP" in the text).
G16_TABLE6 = PaperTable.parse(
    "Gao et al. 2016 (G16), Table 6",
    [
        "OPAUC_s",
        "OPAUC_fd",
        "OAM_seq",
        "OAM_gra",
        "Uni-Exp",
        "Uni-Log",
        "Uni-Squ",
        "OPAUC_r",
        "OPAUC_h",
        "OPAUC^f",
        "OPAUC^rp",
        "OPAUC^pca",
    ],
    """
sector.lvr|.9980±.0040|.9965±.0358●|.9965±.0064●|.9955±.0059●|.9969±.0093●|.9776±.0249●|.9669±.0260●|.9962±.0011●|.9956±.0465●|.6813±.0444●|.9863±.0258●|.9893±.0288●
sector|.9520±.0063|.9296±.0103●|.9163±.0087●|.9043±.0100●|.9215±.0034●|.9528±.0054|.9203±.0043●|.9292±.0081●|.9265±.0218●|.6228±.0145●|.7286±.0619●|.8853±.0114●
news20|.9223±.0048|.8840±.0059●|.8543±.0099●|.8346±.0094●|.8880±.0047●|.9200±.0050●|.8878±.0066●|.8871±.0083●|.8890±.0082●|.5958±.0118●|.7885±.0079●|.8878±.0115●
""",
)

#: Zhao, Hoi, Jin, Yang, Online AUC Maximization, ICML 2011, Table 2 (no t-tests).
Z11_TABLE2 = PaperTable.parse(
    "Zhao et al. 2011 (Z11), Table 2",
    ["Perceptron", "PA-I", "CW-full", "CPA_PB", "CPA_ML", "OAM_seq", "OAM_gra", "OAM_inf"],
    """
sonar|.780±.060|.790±.057|.793±.059|.798±.059|.827±.052|.850±.042|.849±.043|.849±.043
fourclass|.690±.165|.668±.168|.758±.032|.812±.020|.812±.020|.831±.020|.826±.020|.831±.020
svmguide1|.883±.140|.799±.219|.922±.019|.891±.007|.885±.008|.988±.003|.988±.002|.989±.002
magic04|.723±.069|.564±.111|.746±.027|.730±.030|.734±.026|.778±.029|.765±.032|.784±.026
german|.701±.039|.701±.033|.757±.025|.698±.034|.701±.033|.775±.037|.773±.033|.776±.034
svmguide3|.696±.038|.707±.037|.723±.036|.707±.038|.707±.037|.760±.035|.755±.034|.768±.035
segment|.852±.024|.863±.021|.896±.021|.888±.018|.886±.021|.956±.013|.955±.014|.956±.013
ijcnn1|.647±.088|.531±.074|.829±.021|.908±.012|.910±.011|.920±.017|.916±.018|.928±.015
satimage|.605±.025|.646±.024|.619±.024|.811±.022|.828±.024|.919±.014|.911±.017|.921±.013
vowel|.859±.055|.863±.063|.870±.063|.887±.049|.923±.032|.931±.046|.928±.046|.931±.041
letter|.551±.092|.533±.104|.804±.025|.784±.056|.802±.035|.820±.016|.817±.023|.828±.010
poker|.502±.031|.506±.028|.457±.058|.508±.068|.524±.067|.592±.060|.586±.062|.594±.067
""",
)

#: Ding, Zhao, Hoi, Ong, Adaptive Subgradient Methods for Online AUC Maximization
#: (D16), Table II: the text of the paper held in the project's papers folder stops
#: after the table's header and first value (glass .816 ± .058 / .804 ± .059), so no
#: values of the datasets we hold (german, a2a, magic04, diabetes) can be copied.
D16_TABLE2 = PaperTable("Ding et al. 2016 (D16), Table II (values not available)")

#: Liu, Zhang, Chen, Wang, Yang, Fast Stochastic AUC Maximization, ICML 2018, Table 2
#: (OCR text; leading digits garbled by the OCR restored as ".9", e.g. "1900782").
L18_TABLE2 = PaperTable.parse(
    "Liu et al. 2018 (L18), Table 2",
    ["FSAUC", "SOLAM", "SOLAM_l1", "OPAUC"],
    """
a9a|.900782±.000197|.899884±.000358|.898382±.000973|.900350±.000450
ijcnn1|.923230±.001310|.917147±.002526|.921682±.001249|.922163±.002296
covtype_binary|.824046±.000242|.823440±.000489|.819894±.001434|.822669±.000973
HIGGS|.683727±.000093|.683064±.000280|.683526±.000086|.681697±.000401
w8a|.962703±.001485|.945508±.011601|.949083±.004182|.952536±.002712
real-sim|.991862±.000243|.990473±.000111|.979830±.000911|.988357±.000147
rcv1_binary|.995448±.000052|.993601±.000044|.994767±.000071|.990634±.000039
news20.binary|.975428±.000513|.956472±.000957|.937493±.006501|.967471±.000721
""",
)

#: Zhou, Ying, Skiena, Online AUC Optimization for Sparse High-Dimensional Datasets,
#: ICDM 2020 (ZYS): the test AUC of the online methods on its balanced datasets, as
#: printed in the AUC table of the submitted version held in the authors' repository
#: (``baojianzhou/ftrl-auc``, ``submitted.pdf``). The table prints means only (no
#: standard deviations: NaN here); its number and page in the ICDM proceedings were not
#: checked. Only the FTRL-AUC, SPAUC and SPAM-l1 columns were transcribed.
ZYS20_TABLE = PaperTable(
    "Zhou, Ying, Skiena 2020 (ZYS), AUC table of the submitted version",
    {
        (dataset, learner): (value, math.nan, "")
        for dataset, row in {
            "real-sim": (0.9923, 0.9939, 0.9854),
            "rcv1b": (0.9949, 0.9955, 0.9926),
            "news20b": (0.9743, 0.9924, 0.9442),
            "imdb": (0.9461, 0.9498, 0.8677),
        }.items()
        for learner, value in zip(("FTRL-AUC", "SPAUC", "SPAM-l1"), row, strict=True)
    },
)

#: Natole, Ying, Lyu, Stochastic Proximal Algorithms for AUC Maximization, ICML 2018
#: (NYL): the text held in the project is the abstract, so no value can be copied.
NYL18_VALUES = PaperTable(
    "Natole, Ying, Lyu 2018 (NYL): only the abstract of the paper is held, no table values"
)
