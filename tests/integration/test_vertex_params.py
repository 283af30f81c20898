"""Every per-model control and chain test of the Gemini backend (test_generation_params.py,
test_chain_concurrency.py), run again on `--backend vertex`: the same requests reach the fake's
Vertex AI path (/v1/projects/{project}/locations/global/publishers/google/models/...) with a
bearer token the fake issued for a service-account JWT it verified."""
import unittest

import test_chain_concurrency as chain
import test_generation_params as params
from vertex_support import VertexMixin


class VertexCombinations(VertexMixin, params.CombinationsReachTheFakeAsTheApiExpects):
    pass


class VertexWhatComesBack(VertexMixin, params.WhatComesBack):
    pass


class VertexChainEdits(VertexMixin, params.ChainEdits):
    pass


class VertexChainEditsInFlight(VertexMixin, chain.ChainEditsInFlight):
    pass



if __name__ == "__main__":
    unittest.main()
