"""The honest-kernel corpus: candidates the way models write them, each with its expected verdict (README.md)."""
