"""numpipe's benchmark suite: scenes run on numpipe and, side by side in the same run, on
Mesa's llvmpipe and softpipe (``python -m bench``; see bench/README.md)."""
