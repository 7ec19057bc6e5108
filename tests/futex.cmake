# The futex calls on both paths (classic, and futex_wait/futex_wake with
# FUTEX2_NUMA where the kernel has them), no wake system call from a lock
# while nobody sleeps (test_futex), and every lock through the stress
# harness with waiters that park at once on each path (NUMALOCK_FUTEX;
# a kernel without futex2 runs the classic one for both). Run in the TSan
# build too.
add_executable(test_futex test_futex.c)
target_include_directories(test_futex PRIVATE ${CMAKE_SOURCE_DIR}/src)
target_link_libraries(test_futex PRIVATE numalock_static)
target_compile_options(test_futex PRIVATE ${NL_WARN})
add_test(NAME futex COMMAND test_futex all)
# its parts' watchdogs catch a hang; the time limit leaves room for four of them
set_tests_properties(futex PROPERTIES TIMEOUT 900 LABELS "unit;tsan")

if(NL_SANITIZE_THREAD)
  set(NL_FUTEX_STRESS_THREADS 4)
  set(NL_FUTEX_STRESS_OPS 3000)
  set(NL_FUTEX_STRESS_LABEL tsan)
  set(NL_FUTEX_STRESS_ENV "${NL_TSAN_ENV}")
else()
  set(NL_FUTEX_STRESS_THREADS 8)
  set(NL_FUTEX_STRESS_OPS 20000)
  set(NL_FUTEX_STRESS_LABEL stress)
  set(NL_FUTEX_STRESS_ENV "")
endif()
foreach(lock ${NL_LOCKS})
  foreach(path classic futex2)
    set(name ${NL_FUTEX_STRESS_LABEL}.${lock}.park.${path})
    add_test(NAME ${name} COMMAND stress --lock ${lock} --threads ${NL_FUTEX_STRESS_THREADS}
      --ops ${NL_FUTEX_STRESS_OPS} --watchdog 60)
    set_tests_properties(${name} PROPERTIES TIMEOUT 300 LABELS ${NL_FUTEX_STRESS_LABEL}
      ENVIRONMENT "NUMALOCK_WAIT=park:0:0;NUMALOCK_FUTEX=${path};${NL_FUTEX_STRESS_ENV}")
  endforeach()
endforeach()

# numalock run --futex-hash (the preload sizes the hash at the program's
# start), and the futex_cond program of the measurement (docs: a program of
# threads over many condition variables)
if(TARGET numalock_preload AND NOT CMAKE_CROSSCOMPILING)
  add_executable(futex_cond futex/cond.c)
  add_executable(futex_nohash futex/nohash.c)
  target_link_libraries(futex_cond PRIVATE Threads::Threads)
  target_compile_options(futex_cond PRIVATE ${NL_WARN} -O2)
  target_compile_options(futex_nohash PRIVATE ${NL_WARN})
  add_test(NAME futex_hash COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/futex/hash_test.sh $<TARGET_FILE:numalock_cli>
    $<TARGET_FILE:futex_cond> $<TARGET_FILE:futex_nohash>)
  set_tests_properties(futex_hash PROPERTIES TIMEOUT 120 LABELS cli)
endif()
