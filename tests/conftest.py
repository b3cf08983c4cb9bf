"""Fixtures shared by several test files."""
import pytest

from gbmo import grower


@pytest.fixture
def chunk_scratch_requests(monkeypatch):
    """The shapes of the chunk scratch (GrowerWorkspace.row_chunk_histograms)
    that training asks for, in order, while the test runs."""
    asked = []
    row_chunk_histograms = grower.GrowerWorkspace.row_chunk_histograms

    def recording(workspace, shape, value_bins):
        asked.append(shape)
        return row_chunk_histograms(workspace, shape, value_bins)

    monkeypatch.setattr(grower.GrowerWorkspace, "row_chunk_histograms", recording)
    return asked
