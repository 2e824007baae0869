"""Hypothesis in CI (the CI environment variable is set): the same examples every run, so that a red run can be
reproduced; locally, fresh random examples each run (and the failures hypothesis found before, from its database)."""

from __future__ import annotations

import os

from hypothesis import settings

settings.register_profile("ci", derandomize=True, database=None)
if os.environ.get("CI"):
    settings.load_profile("ci")
