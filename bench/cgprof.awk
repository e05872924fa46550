# Per-operation profile from two callgrind dumps of the same loop with n1 and
# n2 iterations (files written with --compress-strings=no):
#
#   awk -v n1=N1 -v n2=N2 -v top=25 -f cgprof.awk DUMP_N1 DUMP_N2
#
# For every function: self and inclusive instructions per operation, i.e.
# (cost in DUMP_N2 - cost in DUMP_N1) / (n2 - n1), so that the loop's
# constant costs cancel. Prints the top functions by self cost, then by
# inclusive cost, then the call edges (caller -> callee) by inclusive cost.
# (callgrind_annotate 3.19 mis-attributes self cost in dumps taken with
# CALLGRIND_DUMP_STATS_AT while main is still running, hence this script.)

# The benchmark program's own frames and everything above main.
function outer(k) { return k ~ /^(main|\(below main\)|__libc_start_main[^ ]*|0x[0-9a-f]+|m_[a-z0-9_]+) \[/ }

function fname(k) { sub(/ \[[^]]*\]$/, "", k); return k }

function short(obj) { sub(/.*\//, "", obj); return obj }

FNR == 1 { sign = (++nfile == 1) ? -1 : 1; skip = 0; ob = ""; cob = "" }
/^ob=/ { ob = substr($0, 4); next }
/^fn=/ { key = substr($0, 4) " [" short(ob) "]"; names[key] = 1; next }
/^cfn=/ { callee = substr($0, 5); next }
/^calls=/ { skip = 1; ncalls = substr($1, 7) + 0; next }
/^(cob|cfi|cfl|fl|fi|fe)=/ { next }
/^[0-9+*-]/ {
  if (NF < 2) next
  if (skip) {
    skip = 0
    incl[key] += sign * $2
    e = fname(key) " -> " callee
    edge[e] += sign * $2
    ecalls[e] += sign * ncalls
    next
  }
  self[key] += sign * $2
  incl[key] += sign * $2
  next
}

END {
  d = n2 - n1
  if (d <= 0) { print "cgprof: need n2 > n1" > "/dev/stderr"; exit 1 }
  total = 0
  for (k in names) total += self[k]
  printf "total: %.1f instructions per operation\n\n", total / d
  printf "%10s %10s  %s\n", "self/op", "incl/op", "function [object] (by self cost)"
  n = 0
  for (k in names) if (self[k] / d >= 0.5) row[++n] = sprintf("%10.1f %10.1f  %s", self[k] / d, incl[k] / d, k)
  sortrows(n)
  for (i = 1; i <= n && i <= top; i++) print row[i]
  printf "\n%10s %10s  %s\n", "self/op", "incl/op", "function [object] (by inclusive cost)"
  n = 0
  for (k in names) if (incl[k] / d >= 0.5 && !outer(k)) row[++n] = sprintf("%10.1f %10.1f  %s", incl[k] / d, self[k] / d, k)
  sortrows(n)
  for (i = 1; i <= n && i <= top; i++) {
    # swap the columns back to self, incl
    split(row[i], f, " ")
    rest = row[i]; sub(/^ *[^ ]+ +[^ ]+  /, "", rest)
    printf "%10s %10s  %s\n", f[2], f[1], rest
  }
  printf "\n%10s %8s  %s\n", "incl/op", "calls/op", "caller -> callee (call edges by inclusive cost)"
  n = 0
  for (e in edge)
    if (edge[e] / d >= 0.5 && e !~ /^(main|\(below main\)|__libc_start_main[^ ]*|0x[0-9a-f]+|m_[a-z0-9_]+) -> /)
      row[++n] = sprintf("%10.1f %8.2f  %s", edge[e] / d, ecalls[e] / d, e)
  sortrows(n)
  for (i = 1; i <= n && i <= top; i++) print row[i]
}

# Insertion sort of row[1..n], descending by the first number (n is small).
function sortrows(n,   i, j, t) {
  for (i = 2; i <= n; i++) {
    t = row[i]
    for (j = i - 1; j >= 1 && (row[j] + 0) < (t + 0); j--) row[j + 1] = row[j]
    row[j + 1] = t
  }
}
