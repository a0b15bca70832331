#!/usr/bin/env bash
# One virtual environment per peer toolkit, each with the CPU build of torch 2.13.0 kept in
# place: every peer is installed against a constraints file that pins torch, because the
# peers as published do not install on Python 3.11 + torch 2.13 (see README.md).
#
#   bash bench/peers/install.sh [PEERS_DIR]         (default: .peers, git-ignored; 4.3 GB)
#
# wean and the plain PyTorch reference run in the environment wean is installed in (make install).
set -euo pipefail
P=${1:-.peers}
mkdir -p "$P"
echo "torch==2.13.0" > "$P/constraints.txt"
C=$P/constraints.txt

venv() {  # venv NAME: a fresh environment with torch first, so nothing can pull another build
    test -x "$P/$1/bin/python" || python3 -m venv "$P/$1"
    "$P/$1/bin/pip" install -q torch==2.13.0
}

# fairseq 0.12.2 does not import on Python 3.11 (mutable dataclass defaults); the community fork
# fairseq-fixed 0.12.3.1 does. Its build requires torch: --no-build-isolation keeps pip from
# fetching a CUDA torch into an isolated build environment.
venv fairseq
"$P/fairseq/bin/pip" install -q -c "$C" setuptools wheel cython numpy
"$P/fairseq/bin/pip" install -q -c "$C" --no-build-isolation fairseq-fixed==0.12.3.1

# OpenNMT-py 3.5.1 pins torch<2.3: its other requirements first, then itself without them.
venv opennmt
"$P/opennmt/bin/pip" install -q -c "$C" configargparse "ctranslate2>=4,<5" "tensorboard>=2.3" \
    flask waitress "pyonmttok>=1.37,<2" pyyaml sacrebleu rapidfuzz pyahocorasick six spacy fasttext-wheel
"$P/opennmt/bin/pip" install -q --no-deps opennmt-py==3.5.1

# Joey NMT 2.3.0 imports importlib_metadata without declaring it.
venv joeynmt
"$P/joeynmt/bin/pip" install -q -c "$C" joeynmt==2.3.0 importlib-metadata

for peer in fairseq opennmt joeynmt; do
    echo "$peer: torch $("$P/$peer/bin/python" -c 'import torch; print(torch.__version__)')"
done
