"""Shared test settings.

Tests that need an optional package of dplr (the extras ``plot``, ``dask``, ``uci`` of pyproject.toml) call
``pytest.importorskip``: `make test-oldest` runs the unit tests where only dplr's required dependencies are
installed, and there they skip. Where every extra is installed (`make unit`, which sets DPLR_REQUIRE_EXTRAS=1)
such a skip would hide a broken environment, so it fails instead.
"""
import os

import pytest


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    if report.skipped and os.environ.get("DPLR_REQUIRE_EXTRAS") == "1":
        reason = report.longrepr[2] if isinstance(report.longrepr, tuple) else str(report.longrepr)
        if "could not import" in reason:
            report.outcome = "failed"
            report.longrepr = f"DPLR_REQUIRE_EXTRAS=1 but an optional package is missing: {reason}"
