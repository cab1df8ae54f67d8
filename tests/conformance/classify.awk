# SPDX-License-Identifier: Apache-2.0
# The verdict on one runtime-tools program, from its TAP output and exit status (awk -v rc=N -f classify.awk
# TAP). Prints "STATUS ok/failed/skipped[ (note)]", STATUS being pass, FAIL or skip. Shared by run.sh (host)
# and tests/vm/conformance/conformance.sh (VM lane), so both count alike:
# - a TODO directive does not fail a point; a program whose points are all SKIP is skipped;
# - a program with no test points passes unless it reported an error (runtime-tools' hook tests print only
#   an indented JSON object with an "error" key) or exited non-zero; 124, 137 and 143 are timeout's.
/^(not )?ok([ \t]|$)/ {
    line = tolower($0)
    if (line ~ /#[ \t]*skip/) skip++
    else if (line ~ /^not ok/ && line !~ /#[ \t]*todo/) failed++
    else ok++
}
/^1\.\.[0-9]+/ { plans++ }
/^    "error": / { errors++ }
END {
    counts = sprintf("%d/%d/%d", ok, failed, skip)
    if (rc == 124 || rc == 137 || rc == 143) print "FAIL " counts " (timeout)"
    else if (rc != 0) print "FAIL " counts " (exit " rc ")"
    else if (failed > 0) print "FAIL " counts
    else if (ok + skip == 0 && errors > 0) print "FAIL " counts " (error reported)"
    else if (ok + skip == 0) print "pass " counts (plans ? " (no error reported)" : " (no TAP output)")
    else if (ok == 0) print "skip " counts
    else print "pass " counts
}
