"""Authored demonstration episodes, recorded against the real verifier into the bundled replay file."""
