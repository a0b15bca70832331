"""Tests that need ``../shared`` beside the checkout: EASSE's and multi-bleu.perl's reference
values, the benchmark data. They skip with a reason where it is absent (a user's fresh clone);
CI has it."""
