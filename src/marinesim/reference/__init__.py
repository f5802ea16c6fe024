"""Replays of reference cases produced by real peer programs (``marinesim verify``)."""
