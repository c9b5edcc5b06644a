"""The learned request detector: stable features, the packaged model."""

from __future__ import annotations

import zlib

import numpy as np
import pytest

from unrecall.dialogue.requests import detect
from unrecall.errors import StoreError
from unrecall.pipeline import detector
from unrecall.pipeline.features import BUCKETS, feature_names, featurize, fold


def _read(text: str) -> detector.Reading:
    found = detect(text)
    return detector.load().read(text, None, ("none",) if found is None else (found.kind,))


def test_buckets_are_the_same_in_every_process() -> None:
    # crc32, not the per-process salted hash(): a model trained in one
    # process must score the same features in another
    assert 470610 in featurize("forget")  # crc32(b"w:forget") % 2**20
    assert zlib.crc32(b"w:forget") % BUCKETS == 470610


def test_features_fold_case_accents_and_digits() -> None:
    assert fold("BÓRRALO 4471") == "borralo 0000"
    assert np.array_equal(featurize("Bórralo"), featurize("borralo"))
    names = feature_names("olvida eso", "mi PIN", ("none",))
    assert {"w:olvida", "b:olvida eso", "c:<ol", "p:mi", "rule:none"} <= set(names)


def test_the_packaged_model_reads_requests_and_leaves_chat_alone() -> None:
    # new sentences in every language, not from the training files
    for text in (
        "please wipe the thing about my landlord's lawsuit from your notes",
        "borra lo de mi cuenta del banco, ya no quiero que lo guardes",
        "oublie ce que je t'ai raconté sur la santé de mon père",
        "lösch bitte alles über meine Scheidung",
    ):
        assert _read(text).p_request >= detector.load().threshold, text
    for text in (
        "I forgot my umbrella on the tram again",
        "how do I remove a stripped screw from a hinge?",
        "We're driving to my aunt's place in Ghent on Saturday.",
    ):
        assert _read(text).p_request < detector.load().threshold, text


def test_the_kind_of_a_read_request() -> None:
    assert _read("stop assuming I'm burnt out, you made that up").kind == "inferential"
    assert _read("forget everything about my health").kind == "category"


def test_a_missing_model_is_a_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    from importlib import resources

    class Missing:
        def __truediv__(self, other: str) -> Missing:
            return self

    monkeypatch.setattr(resources, "files", lambda _pkg: Missing())

    def as_file(_path: object) -> object:
        raise FileNotFoundError("detector.npz")

    monkeypatch.setattr(resources, "as_file", as_file)
    detector.load.cache_clear()
    try:
        with pytest.raises(StoreError, match="missing"):
            detector.load()
    finally:
        detector.load.cache_clear()
