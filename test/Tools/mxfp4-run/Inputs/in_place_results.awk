# Per function of a host plan: how many results name an argument, and
# whether result 3 + i names argument i (the training step's weights and
# moments updated in place).
/^function / { name = $2; results = 0; aliased = 0; ordered = 1; delete args }
/^arg / { args[$4] = $2 }
/^result / {
  results++
  if ($3 in args) {
    aliased++
    if (args[$3] != $2 - 3) ordered = 0
  }
}
/^end/ {
  if (aliased && ordered)
    printf "%s: %d results, %d of them are its arguments 0..%d in order\n", name, results, aliased, aliased - 1
  else
    printf "%s: %d results, %d of them are arguments\n", name, results, aliased
}
