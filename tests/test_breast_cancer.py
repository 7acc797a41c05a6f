"""dplr.datasets.breast_cancer: the WDBC loader (offline and, on a recorded response, through ucimlrepo) and the
public-range scaling."""
import json
import types
import urllib.request
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from dplr.datasets import breast_cancer as bc

DATA = Path(__file__).parent / "data"

def test_wdbc_from_sklearn():
    wdbc = bc.load_wdbc("sklearn")
    assert wdbc.X.shape == (569, 5) and wdbc.source == "sklearn"
    assert int(wdbc.malignant.sum()) == 212  # 357 benign, 212 malignant (UCI documentation)
    assert wdbc.X[0, 3] == 1001.0 and wdbc.malignant[0]


@pytest.fixture
def recorded_uci(monkeypatch):
    """Serve the recorded API response and CSV to ucimlrepo: no network is touched."""
    fetch = pytest.importorskip("ucimlrepo.fetch")  # the optional extra dplr[uci]

    api = json.loads((DATA / "wdbc_ucimlrepo_17.json").read_text())
    calls = []

    def fake_urlopen(url, *args, **kwargs):
        calls.append(url)
        assert url == "https://archive.ics.uci.edu/api/dataset?id=17", url
        return types.SimpleNamespace(read=lambda: json.dumps(api).encode())

    def fake_read_csv(url, *args, **kwargs):
        calls.append(url)
        assert url == api["data"]["data_url"]
        return pd.read_csv(DATA / "wdbc_ucimlrepo_17.csv")

    monkeypatch.setattr(urllib.request, "urlopen", fake_urlopen)
    monkeypatch.setattr(fetch, "pd", types.SimpleNamespace(read_csv=fake_read_csv, DataFrame=pd.DataFrame))
    monkeypatch.setattr(bc, "uci_reachable", lambda *a, **k: True)
    return calls


def test_wdbc_ucimlrepo_path_matches_sklearn(recorded_uci):
    online = bc.load_wdbc("auto")  # "reachable" -> the ucimlrepo path, served from the recording
    assert online.source == "ucimlrepo" and len(recorded_uci) == 2
    offline = bc.load_wdbc("sklearn")
    k = online.n
    assert k == 5
    np.testing.assert_array_equal(online.X, offline.X[:k])
    np.testing.assert_array_equal(online.malignant, offline.malignant[:k])


def test_wdbc_auto_falls_back_offline(monkeypatch):
    monkeypatch.setattr(bc, "uci_reachable", lambda *a, **k: False)
    assert bc.load_wdbc("auto").source == "sklearn"
    with pytest.raises(ValueError):
        bc.load_wdbc("elsewhere")


def _bundle(diagnosis, uci_id=17, columns=bc.WDBC_UCI_COLUMNS):
    features = pd.DataFrame(np.arange(len(diagnosis) * len(columns), dtype=float).reshape(len(diagnosis), -1),
                            columns=list(columns))
    return types.SimpleNamespace(metadata={"uci_id": uci_id},
                                 data=types.SimpleNamespace(features=features,
                                                            targets=pd.DataFrame({"Diagnosis": diagnosis})))


def test_wdbc_from_ucimlrepo_label_mapping_and_checks():
    wdbc = bc.wdbc_from_ucimlrepo(_bundle(["M", "B", " B", "M"]))  # synthetic bundle, not data
    np.testing.assert_array_equal(wdbc.malignant, [True, False, False, True])
    with pytest.raises(ValueError, match="UCI data set 17"):
        bc.wdbc_from_ucimlrepo(_bundle(["M"], uci_id=2))
    with pytest.raises(ValueError, match="lacks"):
        bc.wdbc_from_ucimlrepo(_bundle(["M"], columns=("a", "b", "c", "d", "e")))
    with pytest.raises(ValueError, match="'M' or 'B'"):
        bc.wdbc_from_ucimlrepo(_bundle(["M", "X"]))



def test_public_scaling_is_per_record_and_in_the_ball():
    X = bc.load_wdbc("sklearn").X
    for scale in ("log", "linear"):
        Z = bc.scale_wdbc_public(X, scale=scale)
        assert Z.shape == (569, 6) and np.linalg.norm(Z, axis=1).max() <= 1 + 1e-12
        X2 = X.copy()
        X2[7] = [1e6, 1e6, 1e6, 1e6, 1e6]  # beyond every range: clipped, nobody else moves
        Z2 = bc.scale_wdbc_public(X2, scale=scale)
        np.testing.assert_array_equal(np.delete(Z, 7, 0), np.delete(Z2, 7, 0))
        np.testing.assert_allclose(Z2[7, :5], 1 / np.sqrt(6))
    spread = bc.scale_wdbc_public(X)[:, :5].std(axis=0)
    assert np.all(bc.scale_wdbc_public(X, widen=2)[:, :5].std(axis=0) < spread)  # looser ranges squeeze
    with pytest.raises(ValueError):
        bc.scale_wdbc_public(X, widen=0.5)
    with pytest.raises(ValueError):
        bc.scale_wdbc_public(X[:, :4])
