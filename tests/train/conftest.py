"""One torch thread per test process: the test models are tiny and extra threads only contend."""

from __future__ import annotations

import importlib.util

import pytest


@pytest.fixture(autouse=True)
def _one_torch_thread():
    if importlib.util.find_spec("torch") is None:
        yield
        return
    import torch

    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)
