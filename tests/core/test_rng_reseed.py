"""BlockRNG.reseed_rows: a re-seeded row reads exactly its new generator's sequence."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from marinesim.core.rng import BlockRNG, entity_key, generator


@settings(max_examples=30, deadline=None)
@given(
    n=st.integers(1, 5),
    block=st.integers(1, 9),
    before=st.integers(0, 20),
    after=st.integers(1, 20),
    seed=st.integers(0, 2**32 - 1),
)
def test_reseeded_row_equals_fresh_generator(n, block, before, after, seed) -> None:
    gens = [generator(1, entity_key(0, "b", i, "p", 0)) for i in range(n)]
    rng = BlockRNG(gens, block)
    first = rng.normal(size=before)
    row = n - 1
    rng.reseed_rows([row], [generator(seed, entity_key(0, "b", row, "p", 0))])
    second = rng.normal(size=after)
    want = generator(seed, entity_key(0, "b", row, "p", 0)).standard_normal(after)
    np.testing.assert_array_equal(second[row], want)
    # the other rows are untouched: they continue their own sequences
    for i in range(n - 1):
        ref = generator(1, entity_key(0, "b", i, "p", 0)).standard_normal(before + after)
        np.testing.assert_array_equal(np.concatenate([first[i], second[i]]), ref)
