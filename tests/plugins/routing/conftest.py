import pytest

from ibfabric.topologies.generators import bermudez2006_fig1


@pytest.fixture
def fig1():
    """The subnet of Bermúdez et al. 2006, Fig. 1 (LIDs as in the paper, SM on h4)."""
    return bermudez2006_fig1()
