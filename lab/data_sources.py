"""Write src/wean/data/sources.json, the record `wean data` reads, from the data README's per-file
tables (../shared/data/README.md): for each file of the data root, its checksum and size, the
public repository, commit and path it was read from, and how it was laid out. Every entry is checked
against the file itself before it is written.

    python lab/data_sources.py ../shared/data > src/wean/data/sources.json
"""

from __future__ import annotations

import hashlib
import json
import re
import sys
from pathlib import Path

# repositories named in the README's prose rather than in a table of source repositories
PROSE_REPOSITORIES = {
    "623787687c4e": ("dongjun-Lee/text-summarization-tensorflow", "623787687c4ef2ad4591c7daa52b18d95b87f62a"),
    "2594e0d5bb98": ("CLUEbenchmark/CLGE", "2594e0d5bb98fb40e66e5d12c109d795fe0507d6"),
    "9d659040d0d8": ("facebookresearch/asset", "9d659040d0d8"),
    "c2887b1507a6": ("cbaziotis/seq3", "c2887b1507a68e3f4db19cbc2f1700aa081eac70"),
}
# the README's rows for CLGE's LCSTS name a working folder; only its train split is staged, as lcsts/part2
RENAMED = {"lcsts_part2_clge/train.src": "lcsts/part2/train.src", "lcsts_part2_clge/train.dst": "lcsts/part2/train.dst"}
# derived files wean rebuilds from recorded ones (wean/data/sources.py, derive); the rest of the
# derived ones are laid out from a data root that holds them
EVALUATION_SOURCES = ["wikilarge/valid.src", "wikilarge/test.src", "wikismall/valid.src", "wikismall/test.src",
                      "asset/valid.src"] + [f"turkcorpus/{variant}/{split}.src" for variant in ("lower_tok", "case_tok", "case_detok")
                                            for split in ("tune", "test")]
DERIVATIONS = {
    **{f"lcsts/part3.{suffix}": {"kind": "lcsts-part3", "from": ["lcsts/PART_III.txt"], "field": field, "min_label": 0}
       for suffix, field in (("src", "short_text"), ("dst", "summary"), ("label", "human_label"))},
    **{f"lcsts/part3_label3plus.{suffix}": {"kind": "lcsts-part3", "from": ["lcsts/PART_III.txt"], "field": field,
                                            "min_label": 3} for suffix, field in (("src", "short_text"), ("dst", "summary"))},
    **{f"kauchak_v2/train.{side}": {"kind": "kauchak-train", "from": [f"kauchak_v2/subset{n}.{end}" for n in (1, 2)
                                                                     for end in ("src", "dst")] + EVALUATION_SOURCES,
                                    "side": side} for side in ("src", "dst")},
}
HOW = {
    "": "copy",
    "final newline added": "final-newline",
    "CRLF converted to LF; final newline added": "crlf-final-newline",
    "U+0092 removed on 1 line": "remove-u0092",
    "extracted from zip": "zip-member",
    "lowercased/cleaned upstream": "copy",
    "deleted from the repo in a later commit (054ad30)": "copy",
}


def repositories(readme: str) -> dict[str, tuple[str, str]]:
    found = dict(PROSE_REPOSITORIES)
    for owner_name, commits in re.findall(r"^\| ([\w.-]+/[\w.-]+) \| (.*?) \|", readme, re.M):
        for commit in re.findall(r"`([0-9a-f]{12,40})`", commits):
            found.setdefault(commit[:12], (owner_name, commit))
    return found


def main(root: Path) -> None:
    readme = (root / "README.md").read_text(encoding="utf-8")
    repos = repositories(readme)
    files = []
    for line in readme.splitlines():
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        if len(cells) != 6 or not re.fullmatch(r"`[^`]+\.[^`/]+`", cells[0]) or not re.fullmatch(r"[0-9a-f]{64}", cells[3].strip("`")):
            continue
        path = RENAMED.get(cells[0].strip("`"), cells[0].strip("`"))
        data = (root / path).read_bytes() if (root / path).is_file() else None
        if data is None:
            continue  # a working file of the README's, not staged
        sha256 = cells[3].strip("`")
        assert hashlib.sha256(data).hexdigest() == sha256, path
        entry = {"path": path, "sha256": sha256, "bytes": len(data)}
        source = re.fullmatch(r"`([^`]+)`(?: → `([^`]+)`)? @([0-9a-f]{12})", cells[4])
        note = re.sub(r"\s+", " ", cells[5]).strip()
        if source is None or note.startswith("derived") or note not in HOW:
            entry.update(how="derived", note=f"{cells[4].replace('`', '')}: {note}")
            if path in DERIVATIONS:
                entry["derive"] = DERIVATIONS[path]
        else:
            repository, commit = repos[source[3]]
            entry.update(repository=repository, commit=commit, source=source[1], how=HOW[note])
            if source[2]:
                entry["member"] = source[2]
        files.append(entry)
    json.dump({"written_by": "lab/data_sources.py, from the data README's per-file tables", "files": files},
              sys.stdout, indent=1, ensure_ascii=False)
    print()


if __name__ == "__main__":
    main(Path(sys.argv[1]))
