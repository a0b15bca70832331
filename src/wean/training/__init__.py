"""Training: the loop (trainer.py), the loss (wean/training/criterion.py), scoring on the validation split
(validation.py) and the run's checkpoints (checkpoints.py)."""

from wean.training.trainer import Trainer, TrainingState, train

__all__ = ["Trainer", "TrainingState", "train"]
