"""`python -m kernelmosaic`: the same entry point as the `kernelmosaic` command (`launch.py`)."""

from kernelmosaic.launch import main

main()
