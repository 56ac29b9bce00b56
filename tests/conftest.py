"""Shared fixtures of the Python tests."""

from __future__ import annotations

#: The smallest useful experiment: 20 web-search flows on a 4-host switch (runs in milliseconds).
TINY = """\
seed = 7
[topology]
kind = "single_switch"
hosts = 4
[workload]
cdf = "websearch"
load = 0.5
flows = 20
"""
