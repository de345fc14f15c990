# Checks `mxfp4-run data --tokenizer=FILE --encode=-` against test vectors,
# one JSON object {"text": ..., "ids": [...]} a line, and that --decode gives
# each text back. Prints "N of M texts match"; exits 1 on any mismatch.
#
# usage: check_vectors.py MXFP4_RUN TIKTOKEN_FILE VECTORS.jsonl
import json
import subprocess
import sys

tool, tokenizer, vectors = sys.argv[1:4]
texts = [json.loads(line) for line in open(vectors, encoding="utf-8") if line.strip()]
matches = 0
for vector in texts:
    text, expected = vector["text"], vector["ids"]
    encoded = subprocess.run(
        [tool, "data", "--tokenizer=" + tokenizer, "--encode=-"],
        input=text.encode("utf-8"), capture_output=True, check=True)
    ids = [int(i) for i in encoded.stdout.split()]
    decoded = subprocess.run(
        [tool, "data", "--tokenizer=" + tokenizer,
         "--decode=" + " ".join(map(str, expected))],
        capture_output=True, check=True).stdout
    if ids == expected and decoded == text.encode("utf-8") + b"\n":
        matches += 1
    else:
        print("mismatch on %r:\n  expected %s\n  got      %s\n  decoded  %r"
              % (text[:60], expected, ids, decoded[:80]))
print("%d of %d texts match" % (matches, len(texts)))
sys.exit(0 if matches == len(texts) else 1)
