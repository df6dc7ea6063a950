# The floor's TSV (runtime, operation, n, p50, p95, max) as one markdown table: an operation per row, a
# "p50 / p95" column per runtime, in the order the runtimes first appear. Operation names are matched by their
# first words, so runc's and podman's wording of the same step lands on one row.
#   awk -f bench/floor/table.awk floor.tsv
BEGIN { FS = "\t" }
{
  rt = $1
  key = $2
  sub(/ \(.*$/, "", key)
  if (!(rt in seenRt)) { seenRt[rt] = 1; rts[++nrt] = rt }
  if (!(key in seenKey)) { seenKey[key] = 1; keys[++nkey] = key }
  cell[key, rt] = ($3 == "-") ? $6 : sprintf("%s / %s", $4, $5)
  if ($3 != "-") count[key] = $3
}
END {
  printf "| operation | n |"
  for (i = 1; i <= nrt; i++) printf " %s p50 / p95 ms |", rts[i]
  printf "\n|---|---|"
  for (i = 1; i <= nrt; i++) printf "---|"
  printf "\n"
  for (k = 1; k <= nkey; k++) {
    printf "| %s | %s |", keys[k], count[keys[k]]
    for (i = 1; i <= nrt; i++) printf " %s |", ((keys[k], rts[i]) in cell) ? cell[keys[k], rts[i]] : ""
    printf "\n"
  }
}
