#!/usr/bin/env bash
# Fuzzes Tern's NMEA pipeline (framing → decoding → fix assembly) with libFuzzer.
#
#   Tests/Fuzz/run.sh                    # 600 s
#   FUZZ_SECONDS=3600 Tests/Fuzz/run.sh  # longer
#   Tests/Fuzz/run.sh -jobs=2 -workers=2 # extra arguments go to libFuzzer
#
# Environment:
#   FUZZ_SECONDS      run time, default 600
#   FUZZ_SANITIZERS   swiftc -sanitize= list, default "fuzzer,address" (falls back to "fuzzer" if
#                     the address sanitizer does not build on this toolchain)
#   FUZZ_CORPUS_DIR   NMEA logs the seeds are cut from, default Tests/TernNMEATests/Corpus
#
# Builds into .build-fuzz/ (gitignored), cuts the corpus logs into 20-line seeds in
# .build-fuzz/seeds/, keeps the inputs libFuzzer finds in .build-fuzz/corpus/ (reused by the next
# run) and writes crashes, timeouts and OOMs to Tests/Fuzz/crashes/. Exit status: libFuzzer's
# (0 when nothing was found). Replay: swift run tern-fuzz-nmea Tests/Fuzz/crashes/
set -euo pipefail

root="$(cd "$(dirname "$0")/../.." && pwd)"
cd "$root"

seconds="${FUZZ_SECONDS:-600}"
sanitizers="${FUZZ_SANITIZERS:-fuzzer,address}"
corpus_dir="${FUZZ_CORPUS_DIR:-Tests/TernNMEATests/Corpus}"
scratch=".build-fuzz"
crashes="Tests/Fuzz/crashes"

build() {
    swift build --product tern-fuzz-nmea --scratch-path "$scratch" -c release \
        -Xswiftc -DFUZZING -Xswiftc "-sanitize=$1"
}

echo "== building tern-fuzz-nmea with -sanitize=$sanitizers into $scratch"
if ! build "$sanitizers"; then
    if [[ "$sanitizers" != "fuzzer" ]]; then
        echo "== -sanitize=$sanitizers failed to build; retrying with -sanitize=fuzzer only" >&2
        build fuzzer
    else
        exit 1
    fi
fi
fuzzer="$(swift build --product tern-fuzz-nmea --scratch-path "$scratch" -c release --show-bin-path)/tern-fuzz-nmea"

shopt -s nullglob
logs=("$corpus_dir"/*.log)
if ((${#logs[@]} == 0)); then
    echo "run.sh: no *.log files in $corpus_dir (set FUZZ_CORPUS_DIR)" >&2
    exit 2
fi

echo "== cutting ${#logs[@]} logs from $corpus_dir into seeds"
rm -rf "$scratch/seeds"
mkdir -p "$scratch/seeds" "$scratch/corpus" "$crashes"
for log in "${logs[@]}"; do
    split -l 20 -a 4 "$log" "$scratch/seeds/$(basename "$log" .log)-"
done
echo "   $(ls "$scratch/seeds" | wc -l) seeds, $(ls "$scratch/corpus" | wc -l) inputs kept from earlier runs"

echo "== fuzzing for $seconds s (crashes go to $crashes/)"
# libFuzzer and ASan print the stack of a crash themselves; Swift's out-of-process backtracer
# would also try to, and under ASan it can hang with the crashed process (and the run) waiting.
export SWIFT_BACKTRACE=enable=no
set +e
"$fuzzer" "$scratch/corpus" "$scratch/seeds" \
    -dict=Tests/Fuzz/dict.txt \
    -max_len=4096 -timeout=5 -rss_limit_mb=2048 \
    -max_total_time="$seconds" \
    -artifact_prefix="$crashes/" \
    -print_final_stats=1 \
    "$@"
status=$?
set -e
if ((status != 0)); then
    echo "== libFuzzer exited with $status; artifacts in $crashes/:" >&2
    ls -l "$crashes" >&2
    echo "   replay: swift run tern-fuzz-nmea $crashes/" >&2
fi
exit "$status"
