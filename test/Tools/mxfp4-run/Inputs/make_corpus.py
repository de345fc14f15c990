"""Writes a small deterministic English-like corpus for training tests.

Sentences are drawn from a fixed grammar with a seeded generator, so a model
can learn something in a few dozen steps and every run sees the same bytes.
"""
import random
import sys

SUBJECTS = ["the model", "a small network", "the optimizer", "our compiler",
            "the gradient", "every layer", "the recipe", "a rotation"]
VERBS = ["learns", "quantizes", "rotates", "updates", "computes", "scales",
         "lowers", "reduces"]
OBJECTS = ["the weights", "each block", "the activations", "four bits",
           "the loss", "a hadamard matrix", "the tokens", "its inputs"]
ENDINGS = ["quickly", "in one pass", "with care", "on the cpu",
           "step by step", "without error"]

rng = random.Random(7)
lines = []
for _ in range(int(sys.argv[2]) if len(sys.argv) > 2 else 6000):
    lines.append(f"{rng.choice(SUBJECTS)} {rng.choice(VERBS)} "
                 f"{rng.choice(OBJECTS)} {rng.choice(ENDINGS)}.")
with open(sys.argv[1], "w") as out:
    out.write("\n".join(lines) + "\n")
