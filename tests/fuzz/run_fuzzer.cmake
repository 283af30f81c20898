# Runs one libFuzzer target for a bounded time on a scratch copy of its seed corpus.
#   cmake -DFUZZER=bin -DCORPUS=dir -DWORK=dir -DSECONDS=n [-DSEED=n] -P run_fuzzer.cmake
# The committed corpus is replayed first (regression seeds), then fuzzed; new inputs go to the
# scratch copy only. A crash leaves its reproducer in WORK/artifacts/ and fails the test.
foreach(var FUZZER CORPUS WORK SECONDS)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "run_fuzzer.cmake needs -D${var}=...")
  endif()
endforeach()

if(NOT DEFINED SEED)
  set(SEED 0)
endif()

file(REMOVE_RECURSE "${WORK}")
file(MAKE_DIRECTORY "${WORK}/corpus" "${WORK}/artifacts" "${WORK}/tmp")
file(GLOB seeds "${CORPUS}/*")
if(seeds)
  file(COPY ${seeds} DESTINATION "${WORK}/corpus")
endif()

# Harnesses that need scratch files (a data dir) create them under TMPDIR.
set(ENV{TMPDIR} "${WORK}/tmp")
set(ENV{ASAN_OPTIONS} "abort_on_error=1")
set(ENV{UBSAN_OPTIONS} "print_stacktrace=1:halt_on_error=1")
execute_process(
  COMMAND "${FUZZER}" "${WORK}/corpus" -max_total_time=${SECONDS} -rss_limit_mb=2048 -timeout=60
          -seed=${SEED} -print_final_stats=1 -artifact_prefix=${WORK}/artifacts/
  RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "${FUZZER} failed (exit ${rc}); reproducer in ${WORK}/artifacts/")
endif()
file(REMOVE_RECURSE "${WORK}/tmp")
message(STATUS "fuzzed ${SECONDS}s without findings")
