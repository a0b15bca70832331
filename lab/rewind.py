"""Rewind a run to one of its checkpoints, so that `wean train --resume` continues from there.

Used when the training rule changed under runs already trained: a run whose decisions (halvings,
stop) agree with the new rule up to checkpoint C continues from C exactly as a run trained under
the new rule from the start would (resume is bit-exact). The checkpoints after C move to
RUN/rewound/ (kept, not deleted), `finished` goes, and a line in train.log says what was done.

    python lab/rewind.py RUN step-00000876 [--learning-rate 0.0005] --why "..."

--learning-rate sets the optimizer's rate stored in C: a checkpoint is written after its
validation, so it holds the rate the old rule chose there.
"""

import argparse
import datetime
import shutil
from pathlib import Path

from safetensors.torch import load_file

from wean.tensor_files import flatten_state, unflatten_state
from wean.textio import atomic_write_json, read_json


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("run", type=Path)
    parser.add_argument("checkpoint", help="a name under RUN/checkpoints, e.g. step-00000876")
    parser.add_argument("--learning-rate", type=float)
    parser.add_argument("--why", required=True, help="one line for train.log")
    args = parser.parse_args()
    folder = args.run / "checkpoints"
    target = folder / args.checkpoint
    if not (target / "training.json").is_file():
        raise SystemExit(f"{target}: no such checkpoint")
    aside = args.run / "rewound"
    aside.mkdir(exist_ok=True)
    for later in sorted(folder.glob("step-*")):
        if later.name > args.checkpoint:
            shutil.move(str(later), str(aside / later.name))
    if args.learning_rate is not None:  # the tensors stay as they are: only the skeleton changes
        state = unflatten_state(read_json(target / "training.json"), load_file(str(target / "training.safetensors")))
        for group in state["optimizer"]["param_groups"]:
            group["lr"] = args.learning_rate
        atomic_write_json(target / "training.json", flatten_state(state)[1])
    (folder / "latest").write_text(args.checkpoint + "\n")
    (args.run / "finished").unlink(missing_ok=True)
    rate = f", learning rate set to {args.learning_rate:g}" if args.learning_rate is not None else ""
    with open(args.run / "train.log", "a", encoding="utf-8") as log:
        stamp = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
        log.write(f"{stamp} rewound to {args.checkpoint}{rate} (later checkpoints in rewound/): {args.why}\n")
    print(f"{args.run}: resumes from {args.checkpoint}{rate}")


if __name__ == "__main__":
    main()
