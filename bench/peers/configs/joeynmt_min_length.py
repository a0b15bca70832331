"""`python -m joeynmt` with testing.min_output_length passed to the search.

Joey NMT 2.3.0 reads and logs min_output_length but never hands it to search(), so its decoding
stops at </s> whatever the setting; the benchmark needs 16 decoder steps from every toolkit.
Same arguments as `python -m joeynmt`; the installed package is not modified."""

import functools
import sys

import yaml

import joeynmt.prediction
from joeynmt.__main__ import main

config_file = next(argument for argument in sys.argv[1:] if argument.endswith((".yaml", ".yml")))
with open(config_file, encoding="utf-8") as handle:
    min_length = yaml.safe_load(handle).get("testing", {}).get("min_output_length")
if min_length is not None:
    joeynmt.prediction.search = functools.partial(joeynmt.prediction.search, min_output_length=min_length)

if __name__ == "__main__":
    sys.argv[0] = "joeynmt"
    main()
